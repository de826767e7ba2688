"""Helpers for the ``map-to-gpu`` and ``outline-kernels`` tests: loops IR on device buffers
(written by hand, or a tensor graph placed on the device and bufferized), the passes run on a
copy that must print and parse back, and the interpreter's results before and after (device
buffers are NumPy arrays there; kernels run thread by thread).

Small blocks (``GPU``: 32 threads, at most 3 blocks) keep the interpreter fast and make the
grid-stride loops take several steps on small arrays.

>>> module = device_loops('''
... func.func @f(%x: tensor<?xf32>) -> tensor<?xf32> attributes {lowering.arg_devices = ["cuda"]} {
...   %y = "tensor.exp"(%x) : (tensor<?xf32>) -> tensor<?xf32>
...   func.return %y : tensor<?xf32>
... }''')
>>> after = mapped(module)
>>> [k.get_attr("kernel_name") for k in launches(after)]
['exp']
>>> x = np.linspace(0, 1, 5, dtype=np.float32)
>>> same_results(module, after, [x])[0].dtype
dtype('float32')
"""
from __future__ import annotations

import numpy as np

import lowering.dialects  # noqa: F401  (registers every op and interpreter rule)
import lowering.passes  # noqa: F401  (registers every pass)
from lowering.dialects.builtin.interpret import run_function
from lowering.dialects.gpu import LaunchFuncOp, LaunchOp
from lowering.ir.parser import parse_module
from lowering.ir.pass_manager import PassManager
from lowering.ir.printer import print_op
from lowering.ir.verifier import verify
from lowering.passes.gpu.map_to_gpu import check_memory_spaces

GPU = "map-to-gpu{block-size=32 max-blocks=3}"
DEVICE = "place-on-device,elide-transfers"


def module_of(text: str):
    """A verified module parsed from IR text."""
    module = parse_module(text)
    verify(module)
    return module


def device_loops(text: str, bufferize: str = "bufferize", memory: bool = True,
                 optimize: str = ""):
    """The loops IR of a tensor-level module placed on the device (``lowering.arg_devices`` and
    ``lowering.result_devices`` of the function say where its values live): optimized
    (``optimize``, e.g. "fuse"), placed, transfers elided, bufferized, then (``memory``) in-place
    updates and memory planning."""
    module = module_of(text)
    passes = [p for p in (optimize, DEVICE, bufferize) if p]
    passes += ["inplace", "plan-memory"] if memory else []
    PassManager(",".join(passes)).run(module)
    return module


def round_trips(module) -> None:
    """The module prints and parses back to the same text, in both forms, and verifies."""
    for generic in (False, True):
        text = print_op(module, generic=generic)
        again = parse_module(text)
        verify(again)
        assert print_op(again, generic=generic) == text


def mapped(module, pipeline: str = GPU):
    """A copy of ``module`` after ``pipeline`` (verified after each pass), checked to keep the
    host out of device memory, to print and parse back."""
    copy = module.clone()
    PassManager(pipeline).run(copy)
    for func in copy.functions:
        check_memory_spaces(func)
    round_trips(copy)
    return copy


def launches(module) -> list:
    """The ``gpu.launch`` and ``gpu.launch_func`` ops of the module's functions, in order."""
    return [op for func in module.functions for op in func.walk()
            if isinstance(op, (LaunchOp, LaunchFuncOp))]


def kernel_ops(launch) -> list[str]:
    """The names of the ops in a launch's body (or its kernel's)."""
    body = launch.callee() if isinstance(launch, LaunchFuncOp) else launch
    return [op.name for op in body.walk() if op is not body]


def run_on_copies(module, arrays) -> tuple[list, list]:
    """The module's results on copies of ``arrays`` (kept with their layout), and the copies
    afterwards (in-place updates of device arguments show there)."""
    copies = [_same_layout_copy(a) if isinstance(a, np.ndarray) else a for a in arrays]
    with np.errstate(all="ignore"):
        results = [np.asarray(r) for r in run_function(module.functions[0], copies)]
    return results, copies


def _same_layout_copy(a: np.ndarray) -> np.ndarray:
    """A copy of ``a`` with the same strides (a transposed view stays transposed)."""
    if a.flags.c_contiguous or a.ndim < 2:
        return a.copy()
    if a.flags.f_contiguous:
        return np.asfortranarray(a.copy())
    return a.copy()


def same_results(before, after, arrays, rtol: float = 1e-6, atol: float = 1e-6) -> list:
    """Both modules give the same results and leave the arguments the same (floats within the
    tolerances, NaN where the other has NaN; anything else exactly); returns ``after``'s
    results."""
    expected, expected_args = run_on_copies(before, arrays)
    got, got_args = run_on_copies(after, arrays)
    for what, want, have in (("result", expected, got), ("argument", expected_args, got_args)):
        assert len(want) == len(have)
        for index, (w, h) in enumerate(zip(want, have)):
            w, h = np.asarray(w), np.asarray(h)
            assert w.dtype == h.dtype and w.shape == h.shape, (what, index, w.dtype, h.dtype,
                                                               w.shape, h.shape)
            if w.dtype.kind == "f":
                np.testing.assert_allclose(h, w, rtol=rtol, atol=atol, equal_nan=True,
                                           err_msg=f"{what} #{index}")
            else:
                np.testing.assert_array_equal(h, w, err_msg=f"{what} #{index}")
    return got
