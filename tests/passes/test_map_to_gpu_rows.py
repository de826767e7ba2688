"""``map-to-gpu`` on row programs: softmax, log-softmax, argmax and argmin of a matrix's rows
give each row a group of threads (a whole block for long rows) that reduce it in shared memory
and share its writes, instead of one thread walking each row; compared with NumPy and with the
interpreter before the pass, and the kernels assembled by ptxas within the registers of their
block."""
from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from .map_to_gpu_helpers import device_loops, kernel_ops, launches, mapped, same_results

SETTINGS = settings(max_examples=12, deadline=None,
                    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])

SOFTMAX = '''
func.func @f(%x: tensor<?x?xT>) -> tensor<?x?xT> attributes {lowering.arg_devices = ["cuda"]} {
  %r = "tensor.KIND"(%x) {axis = AXIS} : (tensor<?x?xT>) -> tensor<?x?xT>
  func.return %r : tensor<?x?xT>
}
'''

ARG = '''
func.func @f(%x: tensor<?x?xT>) -> (tensor<?xi64>, tensor<?xi64>)
    attributes {lowering.arg_devices = ["cuda"]} {
  %a = "tensor.argmax"(%x) {axes = [1]} : (tensor<?x?xT>) -> tensor<?xi64>
  %b = "tensor.argmin"(%x) {axes = [1]} : (tensor<?x?xT>) -> tensor<?xi64>
  func.return %a, %b : tensor<?xi64>, tensor<?xi64>
}
'''


def softmax(kind="softmax", axis=1, element="f32") -> str:
    return SOFTMAX.replace("KIND", kind).replace("AXIS", str(axis)).replace("T", element)


def numpy_softmax(x, axis=1, log=False):
    shifted = x - x.max(axis=axis, keepdims=True)
    total = np.exp(shifted).sum(axis=axis, keepdims=True)
    return shifted - np.log(total) if log else np.exp(shifted) / total


def kernel_names(module) -> list:
    return [k.get_attr("kernel_name") for k in launches(module)]


@SETTINGS
@given(rows=st.integers(1, 6), cols=st.integers(1, 40), log=st.booleans(),
       block=st.sampled_from([8, 32]), seed=st.integers(0, 2 ** 16))
def test_softmax_rows_match_numpy(rows, cols, log, block, seed):
    module = device_loops(softmax("log_softmax" if log else "softmax"))
    after = mapped(module, f"map-to-gpu{{block-size={block} max-blocks=2}}")
    assert kernel_names(after) == ["rows_max_sum"]
    x = np.random.default_rng(seed).uniform(-30, 30, (rows, cols)).astype(np.float32)
    (got,) = same_results(module, after, [x], rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(got, numpy_softmax(x, log=log), rtol=1e-5, atol=1e-6)


def test_a_softmax_row_is_reduced_by_a_tree_and_written_by_every_thread():
    module = device_loops(softmax())
    after = mapped(module, "map-to-gpu{block-size=16 max-blocks=2}")
    (launch,) = launches(after)
    ops = kernel_ops(launch)
    # Two trees (maximum, sum) of log2(16) halvings, each after a first barrier, and the
    # barrier closing each round of rows.
    assert ops.count("gpu.shared_alloc") == 2 and ops.count("gpu.barrier") == 2 * 5 + 1
    x = np.random.default_rng(1).normal(0, 3, (5, 37)).astype(np.float32)
    x[2] = [-np.inf] * 37  # all -inf: NaN, as NumPy's formula gives
    x[3, 4] = np.nan
    (got,) = same_results(module, after, [x], rtol=1e-6, atol=1e-7)
    with np.errstate(invalid="ignore"):
        np.testing.assert_allclose(got, numpy_softmax(x), rtol=1e-6, atol=1e-7)


def test_a_softmax_over_columns_keeps_a_thread_per_column():
    module = device_loops(softmax(axis=0))
    after = mapped(module)
    assert not any(name.startswith("rows") for name in kernel_names(after))
    x = np.random.default_rng(2).normal(0, 3, (6, 5)).astype(np.float32)
    (got,) = same_results(module, after, [x], rtol=1e-6)
    np.testing.assert_allclose(got, numpy_softmax(x, axis=0), rtol=1e-6)


@pytest.mark.parametrize("element, dtype", [("f32", np.float32), ("f64", np.float64),
                                            ("i32", np.int32), ("ui8", np.uint8)])
@pytest.mark.parametrize("rows, cols", [(4, 1), (3, 5), (5, 37), (2, 70)])
def test_argmax_and_argmin_of_rows_give_the_first_extreme_index(element, dtype, rows, cols):
    module = device_loops(ARG.replace("T", element))
    after = mapped(module, "map-to-gpu{block-size=16 max-blocks=2}")
    assert kernel_names(after) == ["rows_argmax", "rows_argmin"]
    rng = np.random.default_rng(rows * cols)
    x = rng.integers(0, 4, (rows, cols)).astype(dtype)  # many ties
    if np.dtype(dtype).kind == "f":
        x[0] = -np.inf if cols < 5 else x[0]
        x[-1, cols // 2:] = np.nan  # the first NaN wins both, as in NumPy
    else:
        x[0] = np.iinfo(dtype).min  # ties with the identity of argmax
    a, b = same_results(module, after, [x])
    np.testing.assert_array_equal(a, x.argmax(axis=1))
    np.testing.assert_array_equal(b, x.argmin(axis=1))


CLASSIFIER = '''
func.func @f(%x: tensor<?x?xT>) -> tensor<?xi64> attributes {lowering.arg_devices = ["cuda"]} {
  %p = "tensor.softmax"(%x) {axis = 1} : (tensor<?x?xT>) -> tensor<?x?xT>
  %a = "tensor.argmax"(%p) {axes = [1]} : (tensor<?x?xT>) -> tensor<?xi64>
  func.return %a : tensor<?xi64>
}
'''


@pytest.mark.parametrize("element", ["f32", "f64"])
def test_row_kernels_fit_their_block_in_registers_as_ptxas_counts(element):
    from lowering.compile.gpu.build import compile_for_gpu
    from lowering.ir.parser import parse_module
    from lowering.llvm.gpu.ptxas import kernel_resources, ptxas_available
    if not ptxas_available():
        pytest.skip("ptxas is not installed")
    program = compile_for_gpu(parse_module(CLASSIFIER.replace("T", element)), block_size=1024)
    names = sorted(k.sym_name for m in program.gpu_modules for k in m.kernels)
    assert names == ["rows_argmax_1", "rows_max_sum_0"]
    for ptx in program.ptx_modules("sm_90").values():
        resources = kernel_resources(ptx.ptx, "sm_90")
        for kernel in ptx.kernels:
            threads = ptx.max_threads[kernel]
            assert threads == 1024 and f".maxntid {threads}" in ptx.ptx
            assert resources[kernel].registers * threads <= 65536, (kernel, resources[kernel])
