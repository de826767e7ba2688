"""Math functions with vector versions (f32 sin and cos): vectorized loops call them, and a
result does not depend on whether its element went through a vector version (fast or lane by
lane) or through the scalar function."""
from __future__ import annotations

import re

import numpy as np
import pytest

from lowering.llvm.jit import optimized_ir
from lowering.llvm.vecmath.library import WITH_VECTOR_VERSIONS
from lowering.llvm.vecmath.kernels import compile_kernels, kernel_module, kernel_name
from lowering.llvm.vecmath.trig import FAST_TRIG_LIMIT

PAIRS = sorted(WITH_VECTOR_VERSIONS)


@pytest.fixture(scope="module")
def kernels():
    return compile_kernels(PAIRS)


def _mixed(count: int) -> np.ndarray:
    """Arguments of the fast path with, here and there, ones that need the exact reduction."""
    rng = np.random.default_rng(5)
    x = rng.uniform(-20, 20, count).astype(np.float32)
    special = np.array([np.inf, -np.inf, np.nan, 0.0, -0.0, FAST_TRIG_LIMIT, -FAST_TRIG_LIMIT,
                        np.nextafter(np.float32(FAST_TRIG_LIMIT), np.float32(0)), 3.4e38,
                        1e-45, 6381956.5, 1.5707964], np.float32)
    x[::41][:len(special)] = special[:len(x[::41])]
    big = rng.integers(0, 2 ** 32, count, dtype=np.uint64).astype(np.uint32).view(np.float32)
    x[7::29] = big[7::29]
    return x


@pytest.mark.parametrize("name,fmt", PAIRS)
def test_vectorized_loops_call_the_vector_versions(name, fmt):
    optimized = optimized_ir(str(kernel_module([(name, fmt)])))
    start = optimized.index(f"@{kernel_name(name, fmt)}(")
    end = optimized.find("\ndefine ", start)
    body = optimized[start:end if end >= 0 else len(optimized)]
    widths = set(re.findall(rf"@\"?lowering\.{name}\.{fmt}\.v(\d+)\"?\(", body))
    assert widths and max(int(w) for w in widths) >= 4, body[:2000]


@pytest.mark.parametrize("name,fmt", PAIRS)
def test_a_result_does_not_depend_on_the_path_its_element_took(kernels, name, fmt):
    x = _mixed(1000)
    whole = kernels[name, fmt](x)
    one_by_one = np.concatenate([kernels[name, fmt](x[i:i + 1]) for i in range(len(x))])
    assert np.array_equal(whole.view(np.uint32), one_by_one.view(np.uint32))
    with np.errstate(invalid="ignore"):  # sin(inf) is NaN
        reference = (np.sin if name == "sin" else np.cos)(x.astype(np.float64))
    finite = np.isfinite(reference)
    assert np.array_equal(np.isnan(whole), ~finite)
    spacing = np.spacing(np.abs(reference[finite]).astype(np.float32)).astype(np.float64)
    assert np.max(np.abs(whole[finite] - reference[finite]) / spacing) <= 0.51
