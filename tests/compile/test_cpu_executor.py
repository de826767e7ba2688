"""The CPU executor: function() runs machine code by default, with one native call per call.

Arguments in any NumPy layout (strided, transposed, reversed, broadcast, empty, 0-d, byte-swapped,
misaligned), outputs that own their memory, errors that name the op and the user's line and
leave the process and the shared variables as they were, updates and givens.
"""
import gc
import os
import pickle
import re

import numpy as np
import pytest

import lowering as theano
import lowering.tensor as T
from lowering.compile.cpu.executor import CpuCompileError, CpuExecutor
from lowering.compile.cpu.native_call import NORMALIZE_CODE, array_layout
from lowering.config import config
from lowering.dialects.loops.asserts import RuntimeCheckError, RuntimeIndexError
from lowering.ir.passes import PassFailure

HERE = os.path.basename(__file__)


@pytest.fixture(autouse=True, scope="module")
def private_cache(tmp_path_factory):
    with config.change_flags(cache_dir=str(tmp_path_factory.mktemp("cpu-cache"))):
        yield


def line_of(text: str) -> int:
    """The line of this file that contains ``text`` (to check error messages name it)."""
    with open(__file__) as fh:
        for number, line in enumerate(fh, start=1):
            if text in line and "line_of(" not in line:
                return number
    raise AssertionError(f"{text!r} is not in {HERE}")


# -- the default mode ----------------------------------------------------------------------------


def test_function_runs_compiled_cpu_code_by_default_and_interp_on_request():
    x = T.dvector("x")
    compiled = theano.function([x], T.exp(x) * 2)
    interpreted = theano.function([x], T.exp(x) * 2, mode="INTERP")
    assert compiled.executor_name == "cpu" and compiled.mode.name == "FAST_RUN"
    assert isinstance(compiled._execute, CpuExecutor)
    assert interpreted.executor_name == "interpreter"
    data = np.linspace(-3, 3, 11)
    np.testing.assert_allclose(compiled(data), interpreted(data), rtol=1e-15)
    assert compiled._execute.call_path == "native"


def test_native_and_ctypes_call_paths_agree():
    x, y = T.fmatrix("x"), T.fvector("y")
    f = theano.function([x, y], [x * y, (x - y).sum(axis=0), x.sum()])
    module = f.ir_module("optimized")
    native, portable = CpuExecutor(module), CpuExecutor(module, call_path="ctypes")
    assert (native.call_path, portable.call_path) == ("native", "ctypes")
    a = np.arange(12, dtype=np.float32).reshape(3, 4)
    b = np.linspace(0, 1, 4, dtype=np.float32)
    for args in ([a, b], [a[::-1], b[::-1]], [np.zeros((0, 4), np.float32), b]):
        got_native, got_portable = native(list(args)), portable(list(args))
        for p, q in zip(got_native, got_portable):
            np.testing.assert_array_equal(p, q)
            assert p.dtype == q.dtype and p.shape == q.shape
    with pytest.raises(RuntimeCheckError):
        portable([a, np.zeros(5, np.float32)])


def test_functions_with_one_signature_share_one_compiled_code():
    x = T.dvector("x")

    def build():  # the same graph from the same lines: the same IR, locations included
        return theano.function([x], x * 3)

    f, g = build(), build()
    assert f._execute.compiled is g._execute.compiled
    for n in (0, 1, 7, 1000):  # sizes are dynamic: one code for them all
        np.testing.assert_array_equal(f(np.ones(n)), np.full(n, 3.0))


def test_a_function_the_backend_cannot_compile_gets_an_error_naming_the_op(monkeypatch):
    import lowering.compile.cpu.executor as executor

    def refuse(module):
        raise PassFailure("bufferize: no lowering for tensor.mystery (at m.py:3:1)")

    monkeypatch.setattr(executor, "compile_for_cpu", refuse)
    x = T.dvector("x")
    with pytest.raises(CpuCompileError, match=r"tensor\.mystery \(at m\.py:3:1\).*'INTERP'"):
        theano.function([x], x + 1)


# -- argument layouts ----------------------------------------------------------------------------


def _unaligned(values: np.ndarray) -> np.ndarray:
    raw = np.zeros(values.nbytes + 1, np.uint8)
    view = raw[1:].view(values.dtype)
    view[:] = values
    return view


def _pickled(values: np.ndarray) -> np.ndarray:
    # Unpickled arrays have their own dtype object (equal to, but not, the usual one).
    copy = pickle.loads(pickle.dumps(values))
    assert copy.dtype is not values.dtype
    return copy


class _Subclass(np.ndarray):
    pass


LAYOUTS = {
    "contiguous": lambda m: m,
    "fortran": np.asfortranarray,
    "transposed-copy": lambda m: np.ascontiguousarray(m.T).T,
    "reversed": lambda m: m[::-1, ::-1],
    "every-other": lambda m: np.repeat(np.repeat(m, 2, 0), 2, 1)[::2, ::2],
    "broadcast": lambda m: np.broadcast_to(m[:1], m.shape) if len(m) else m,
    "big-endian": lambda m: m.astype(m.dtype.newbyteorder(">")),
    "unaligned": lambda m: _unaligned(m.ravel()).reshape(m.shape),
    "pickled-dtype": _pickled,
    "read-only": lambda m: np.frombuffer(m.tobytes(), m.dtype).reshape(m.shape),
    "subclass": lambda m: m.view(_Subclass),
    "byte-strides": lambda m: _byte_strided(m),
}


def _byte_strided(m: np.ndarray) -> np.ndarray:
    """A view whose strides are not multiples of the item size (a field of a packed record)."""
    records = np.zeros(m.shape, dtype=[("value", m.dtype), ("pad", "u1")])
    records["value"] = m
    view = records["value"]
    assert any(s % m.itemsize for s in view.strides) or not m.size
    return view


@pytest.mark.parametrize("layout", sorted(LAYOUTS))
@pytest.mark.parametrize("shape", [(3, 4), (1, 5), (0, 3), (4, 0)])
def test_arguments_in_any_layout_give_numpy_results(layout, shape):
    x, y = T.dmatrix("x"), T.dvector("y")
    f = theano.function([x, y], [x * 2 + y, x.sum(axis=1), x.T])
    matrix = LAYOUTS[layout](np.arange(np.prod(shape), dtype=np.float64).reshape(shape) - 3)
    vector = LAYOUTS[layout](np.linspace(1, 2, shape[1])[None, :])[0]
    m, v = np.array(matrix), np.array(vector)  # the same values, plainly laid out
    got = f(matrix, vector)
    np.testing.assert_array_equal(got[0], m * 2 + v)
    np.testing.assert_array_equal(got[1], m.sum(axis=1))
    np.testing.assert_array_equal(got[2], m.T)
    np.testing.assert_array_equal(matrix, m)  # inputs are never written
    np.testing.assert_array_equal(vector, v)


def test_scalars_and_zero_dimensional_results():
    s, v = T.dscalar("s"), T.lvector("v")
    f = theano.function([s, v], [s * 2, v.sum(), v.max() + s])
    doubled, total, top = f(1.5, np.array([4, -2, 9]))
    assert type(doubled) is np.ndarray and doubled.shape == () and doubled == 3.0
    assert total.dtype == np.int64 and total == 11
    assert top == 10.5
    np.testing.assert_array_equal(f(np.float64(2), [1])[1], 1)


def test_lists_and_python_numbers_are_converted_like_the_interpreter():
    x = T.fvector("x")
    f = theano.function([x], x + 1)
    np.testing.assert_array_equal(f([1, 2, 3]), np.array([2, 3, 4], np.float32))
    with pytest.raises(TypeError, match=r"input 'x' \(#0\)"):
        f(np.array([1.5, 2.5]))  # float64 data for a float32 input: a downcast is refused
    with pytest.raises(TypeError, match=r"input 'x' \(#0\)"):
        f(np.zeros((2, 2), np.float32))


def test_trusted_inputs_that_are_wrong_still_cannot_crash():
    x = T.fvector("x")
    f = theano.function([x], x * 2, trust_input=True)
    np.testing.assert_array_equal(f(np.ones(3, np.float32)), np.full(3, 2, np.float32))
    with pytest.raises(TypeError, match="expected an array of dtype float32"):
        f(np.ones(3))
    np.testing.assert_array_equal(f(np.ones(4, np.float32)[::2]), [2, 2])
    np.testing.assert_array_equal(f(np.ones(2, ">f4")), [2, 2])  # byte-swapped: converted


def test_a_64_bit_index_reaches_far_elements():
    # 2**31 + 16 int8 zeros: calloc'ed pages that stay unmapped until written.
    big = np.zeros(2**31 + 16, np.int8)
    big[-3:] = [1, 2, 3]
    x, i = T.bvector("x"), T.lscalar("i")
    f = theano.function([x, i], [x[-5:] * 2, x[i]])
    tail, element = f(big, 2**31 + 14)
    np.testing.assert_array_equal(tail, [0, 0, 2, 4, 6])
    assert element == 2


# -- outputs -------------------------------------------------------------------------------------


def test_outputs_are_fresh_writeable_arrays_owning_their_memory():
    x = T.dvector("x")
    f = theano.function([x], [x, x * 1, x * 1])
    data = np.arange(4.0)
    same, first, second = f(data)
    assert same is not data and not np.shares_memory(same, data)
    assert not np.shares_memory(first, second)
    for out in (same, first, second):
        assert out.flags.writeable and out.flags.c_contiguous and out.flags.aligned
        assert out.__array_interface__["data"][0] % 64 == 0  # the allocator's alignment
    view = first[1:]
    del first
    gc.collect()
    np.testing.assert_array_equal(view, [1.0, 2.0, 3.0])  # the view keeps the memory alive


def _resident_bytes() -> int:
    with open("/proc/self/statm") as fh:
        return int(fh.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


@pytest.mark.skipif(not os.path.exists("/proc/self/statm"), reason="needs /proc")
def test_output_memory_is_freed_when_the_arrays_die():
    x = T.dvector("x")
    f = theano.function([x], [x + 1, x * 2])
    data = np.ones(1 << 17)  # 1 MiB per output
    for _ in range(20):
        f(data)
    before = _resident_bytes()
    for _ in range(400):  # 800 MiB if nothing were freed
        f(data)
    assert _resident_bytes() - before < 64 << 20


# -- errors --------------------------------------------------------------------------------------


def test_a_shape_mismatch_names_the_op_and_line_and_the_process_lives():
    x, y = T.dvector("x"), T.dvector("y")
    total = x + y  # the line the error names
    f = theano.function([x, y], total * 2)
    with pytest.raises(RuntimeCheckError) as info:
        f(np.ones(3), np.ones(4))
    message = str(info.value)
    assert isinstance(info.value, ValueError)
    assert f"{HERE}:{line_of('total = x + y')}" in message, message
    assert re.match(r"tensor\.(add|fused) at ", message), message  # fused with the product
    assert message.endswith("(the arguments had shapes x (3,), y (4,))"), message
    np.testing.assert_array_equal(f(np.ones(2), np.ones(2)), [4.0, 4.0])  # still works


def test_a_bad_product_shape_is_caught_before_the_kernel():
    a, b = T.dmatrix("a"), T.dmatrix("b")
    product = T.dot(a, b)  # mismatched inner sizes
    f = theano.function([a, b], product)
    with pytest.raises(ValueError) as info:
        f(np.ones((200, 300)), np.ones((301, 100)))
    assert f"{HERE}:{line_of('product = T.dot(a, b)')}" in str(info.value)
    np.testing.assert_allclose(f(np.ones((2, 3)), np.ones((3, 2))), np.full((2, 2), 3.0))


BAD_CALLS = {  # the graph of (a, b), shapes that fit, shapes that do not
    "elementwise": (lambda a, b: a * 2 + b, [(3, 4), (3, 4)], [(3, 4), (4, 3)]),
    "reshape": (lambda a, b: a.reshape((6, -1)) + b.sum(), [(3, 4), (1, 1)], [(3, 5), (1, 1)]),
    "inc_subtensor": (lambda a, b: T.inc_subtensor(a[1:], b), [(3, 4), (2, 4)],
                      [(3, 4), (3, 4)]),
    "gemm": (lambda a, b: T.dot(a, b) + 1, [(3, 4), (4, 2)], [(3, 4), (3, 4)]),
    "gemv": (lambda a, b: T.dot(a, b[0]), [(3, 4), (1, 4)], [(3, 4), (3, 5)]),
}


@pytest.mark.parametrize("case", sorted(BAD_CALLS))
def test_bad_shapes_raise_and_the_process_goes_on(case):
    build, good, bad = BAD_CALLS[case]
    a, b = T.dmatrix("a"), T.dmatrix("b")
    f = theano.function([a, b], build(a, b))
    interpreted = theano.function([a, b], build(a, b), mode="INTERP")
    with pytest.raises(ValueError) as info:
        f(*[np.ones(shape) for shape in bad])
    assert HERE in str(info.value)
    with pytest.raises(Exception):
        interpreted(*[np.ones(shape) for shape in bad])  # the interpreter refuses it too
    args = [np.arange(np.prod(shape), dtype=float).reshape(shape) for shape in good]
    np.testing.assert_allclose(f(*args), interpreted(*args))


@pytest.mark.skipif(not os.path.exists("/proc/self/statm"), reason="needs /proc")
def test_a_failing_call_frees_what_it_allocated():
    x, y = T.dvector("x"), T.dvector("y")
    big = T.exp(x) * 2  # computed (8 MiB) before the check of the sum below fails
    f = theano.function([x, y], [big, big.sum() + (x + y)])
    data, wrong = np.ones(1 << 20), np.ones(3)
    for _ in range(5):
        with pytest.raises(ValueError):
            f(data, wrong)
    before = _resident_bytes()
    for _ in range(100):  # 800 MiB if nothing were freed
        with pytest.raises(ValueError):
            f(data, wrong)
    assert _resident_bytes() - before < 64 << 20


def test_an_index_out_of_range_raises_index_error():
    x, i = T.dvector("x"), T.lscalar("i")
    f = theano.function([x, i], x[i])
    assert f(np.arange(3.0), -1) == 2.0
    with pytest.raises(IndexError) as info:
        f(np.arange(3.0), 3)
    assert isinstance(info.value, RuntimeIndexError)
    assert HERE in str(info.value)


def test_a_static_size_mismatch_names_the_input():
    r = T.drow("r")
    f = theano.function([r], r + 1)
    with pytest.raises(TypeError, match="'r'"):
        f(np.ones((2, 3)))


def test_a_failed_call_leaves_shared_variables_unchanged():
    w = theano.shared(np.zeros(3), name="w")
    count = theano.shared(np.int64(0), name="count")
    x = T.dvector("x")
    step = theano.function([x], (w * x).sum(), updates=[(w, w + x), (count, count + 1)])
    step(np.ones(3))
    with pytest.raises(ValueError):
        step(np.ones(5))
    np.testing.assert_array_equal(w.get_value(), np.ones(3))
    assert count.get_value() == 1
    step(np.ones(3))
    np.testing.assert_array_equal(w.get_value(), np.full(3, 2.0))
    assert count.get_value() == 2


# -- updates and givens --------------------------------------------------------------------------


def test_updates_are_computed_from_old_values_and_committed_together():
    a = theano.shared(np.array([1.0, 2.0]), name="a")
    b = theano.shared(np.array([10.0, 20.0]), name="b")
    swap = theano.function([], [a + b], updates=[(a, b), (b, a)])
    assert swap.executor_name == "cpu"
    np.testing.assert_array_equal(swap()[0], [11.0, 22.0])
    np.testing.assert_array_equal(a.get_value(), [10.0, 20.0])
    np.testing.assert_array_equal(b.get_value(), [1.0, 2.0])
    only_updates = theano.function([], None, updates={a: a * 2})
    assert only_updates() == []
    np.testing.assert_array_equal(a.get_value(), [20.0, 40.0])


def test_givens_replace_variables_in_compiled_code():
    state = theano.shared(np.float64(5.0), name="state")
    inc, x = T.dscalar("inc"), T.dscalar("x")
    f = theano.function([inc, x], state * 2 + inc, givens={state: x})
    assert f.executor_name == "cpu"
    assert f(1.0, 10.0) == 21.0
    assert state.get_value() == 5.0


def test_accumulator_with_default_input_value_and_update():
    acc = T.iscalar("acc")
    x = T.iscalar("x")
    f = theano.function([theano.In(x), theano.In(acc, value=0, update=acc + x)], acc + x)
    assert [int(f(2)), int(f(3)), int(f(5))] == [2, 5, 10]


def test_large_loops_give_the_same_results_on_one_thread_and_on_all():
    x = T.fvector("x")
    data = np.linspace(-5, 5, 1 << 20, dtype=np.float32)
    parallel = theano.function([x], [T.tanh(x) * 2, (x * x).sum()])
    with config.change_flags(cpu_threads=1):
        serial = theano.function([x], [T.tanh(x) * 2, (x * x).sum()])
    assert serial._execute.compiled is not parallel._execute.compiled or os.cpu_count() == 1
    got, want = parallel(data), serial(data)
    np.testing.assert_array_equal(got[0], want[0])
    np.testing.assert_allclose(got[1], want[1], rtol=1e-5)


# -- the native wrapper's assumptions ------------------------------------------------------------


def test_numpy_array_layout_is_found():
    layout = array_layout()
    assert layout.data == object.__basicsize__ and layout.descr == layout.data + 40


def test_numpy_api_table_indices_match_the_installed_headers():
    header = os.path.join(np.get_include(), "numpy", "__multiarray_api.h")
    if not os.path.exists(header):
        pytest.skip("NumPy's C headers are not installed")
    text = open(header).read()
    from lowering.compile.cpu.native_call import _NUMPY_API_INDEX
    for name, api in (("new_from_descr", "PyArray_NewFromDescr"),
                      ("set_base_object", "PyArray_SetBaseObject")):
        found = re.search(rf"#define {api} \\\s*\n.*\n\s*PyArray_API\[(\d+)\]", text)
        assert found and int(found.group(1)) == _NUMPY_API_INDEX[name], api
    assert re.search(r"#define PyArray_Type \(\*\(PyTypeObject \*\)PyArray_API\[(\d+)\]\)",
                     text).group(1) == str(_NUMPY_API_INDEX["ndarray_type"])


def test_the_wrapper_asks_for_help_with_arguments_it_cannot_read():
    x = T.fvector("x")
    raw = theano.function([x], x + 1)._direct
    good = np.ones(3, np.float32)
    assert isinstance(raw(good), list)
    assert raw(np.ones(3)) == NORMALIZE_CODE  # float64
    assert raw(good.reshape(1, 3)) == NORMALIZE_CODE  # rank
    assert raw([1.0]) == NORMALIZE_CODE  # not an array
    assert raw(good, good) != NORMALIZE_CODE and isinstance(raw(good, good), int)
