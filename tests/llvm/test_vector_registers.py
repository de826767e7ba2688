"""The elementwise kernels use the widest vector registers the CPU features allow, on every
supported llvmlite (a check on the assembly, not a timing), and forcing a feature string without
AVX-512 or AVX2 through the ``cpu_features`` flag still gives the same results."""
import re

import numpy as np
import pytest

import lowering as theano
import lowering.tensor as T
from lowering.llvm.jit import host_features

x = T.vector("x", dtype="float32")
KERNELS = {
    "exp": lambda: T.exp(x),
    "fused": lambda: (T.exp(-x) * T.sin(x) + T.sqrt(abs(x))) / (1 + x * x),
}
VALUES = np.concatenate([np.linspace(-100, 100, 4099, dtype=np.float32),
                         np.array([0.0, -0.0, 1e-40, np.inf, -np.inf, np.nan], np.float32)])
WITHOUT_AVX512 = "-avx512f"
WITHOUT_AVX = "-avx512f,-avx2,-avx"


def register_uses(asm: str) -> dict[str, int]:
    """How often the assembly names a 512-, 256- and 128-bit vector register."""
    return {kind: len(re.findall(rf"%{kind}\d+", asm)) for kind in ("zmm", "ymm", "xmm")}


def widest_register(features: str) -> str:
    enabled = set(features.split(","))
    if "+avx512f" in enabled:
        return "zmm"
    return "ymm" if "+avx2" in enabled or "+avx" in enabled else "xmm"


def assert_vectorized(uses: dict[str, int], widest: str) -> None:
    """The loop bodies run on ``widest`` registers: they outnumber the scalar ``xmm`` uses (of
    the prologue, the remainder and the index arithmetic). A loop left scalar, or one that calls
    a function per lane, uses ``xmm`` registers several times as often as vector ones."""
    if widest != "xmm":
        assert uses[widest] >= uses["xmm"] > 0, uses


def compiled(name: str, features: str = ""):
    with theano.change_flags(cpu_features=features):
        f = theano.function([x], KERNELS[name]())
        return f, f.ir("asm")


@pytest.mark.parametrize("name", KERNELS)
def test_kernel_uses_the_widest_vector_registers_of_the_host(name):
    widest = widest_register(host_features())
    uses = register_uses(compiled(name)[1])
    assert_vectorized(uses, widest)
    wider = {"xmm": ("ymm", "zmm"), "ymm": ("zmm",), "zmm": ()}[widest]
    assert all(uses[kind] == 0 for kind in wider), uses


@pytest.mark.parametrize("name", KERNELS)
@pytest.mark.parametrize("features,widest", [(WITHOUT_AVX512, "ymm"), (WITHOUT_AVX, "xmm")])
def test_a_forced_feature_string_gives_narrower_code_and_the_same_results(name, features, widest):
    if widest_register(host_features()) == "xmm" and widest == "ymm":
        pytest.skip("the host has no AVX")
    f, asm = compiled(name, features)
    uses = register_uses(asm)
    assert uses["zmm"] == 0, uses
    assert (uses["ymm"] == 0) == (widest == "xmm"), uses
    assert_vectorized(uses, widest)
    host, _ = compiled(name)
    expected = host(VALUES)
    np.testing.assert_array_equal(f(VALUES).view(np.int32), expected.view(np.int32))
    with np.errstate(all="ignore"):
        v = VALUES                                  # NumPy's float32 results as the reference
        numpy = np.exp(v) if name == "exp" else \
            (np.exp(-v) * np.sin(v) + np.sqrt(abs(v))) / (1 + v * v)
    np.testing.assert_allclose(expected, numpy, rtol=1e-5, atol=1e-6)

def test_the_flag_is_part_of_the_target_key():
    from lowering.llvm.jit import target_key
    with theano.change_flags(cpu_features=WITHOUT_AVX):
        forced = target_key()
    assert forced != target_key() and WITHOUT_AVX in forced
