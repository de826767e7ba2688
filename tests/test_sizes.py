"""Sizes, shapes and indices at the int64 limits never crash the process.

Each call runs in a forked child (the functions are compiled once, in the parent, before it
forks), whose address space is limited so that a size that fits but is too large gives a
``MemoryError`` at once instead of filling the machine's memory. The parent checks that the
child exited normally (no signal) with either NumPy's result or a ``ValueError``/
``MemoryError``/``IndexError`` whose message names the op.

Every legal call is cheap by construction: a result needs memory in proportion to its work,
and the limit on the address space turns a large one into a ``MemoryError`` before any work;
the one graph whose work is not bounded by its memory (a sum over a broadcast that is never
allocated) only gets sizes whose legal results are small. The child's alarm only catches a hang.
"""
from __future__ import annotations

import os
import pickle
import resource
import signal
from dataclasses import dataclass
from typing import Callable

import numpy as np
import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

import lowering as theano
import lowering.tensor as T
from lowering.config import config
from lowering.ir.sizes import MAX_ALLOCATION_BYTES

MODES = ["FAST_RUN", "INTERP"]
HANG_SECONDS = 120  # only a hang comes near: every call the tests make takes milliseconds
SPARE_ADDRESS_SPACE = 1 << 30  # what a child may map beyond what the parent has mapped
CHEAP_ELEMENTS = 1 << 16  # the most elements a legal call may go over without allocating them

EXTREMES = [0, 1, -1, 2, 3, -3, 7, 8, -8, 2 ** 31 - 1, 2 ** 31, -2 ** 31, 2 ** 32, 2 ** 62,
            2 ** 63 - 1, -2 ** 63, -2 ** 63 + 1]
sizes = st.sampled_from(EXTREMES)


def _mapped_bytes() -> int:
    with open("/proc/self/statm") as f:
        return int(f.read().split()[0]) * os.sysconf("SC_PAGE_SIZE")


def _outcome(fn, args):
    try:
        return ("ok", np.asarray(fn(*args)))
    except (ValueError, MemoryError, IndexError) as exc:
        return ("error", type(exc).__name__, str(exc))
    except BaseException as exc:  # noqa: BLE001 (reported to the parent, which fails)
        return ("unexpected", type(exc).__name__, str(exc))


def _outcomes(compiled, oracle, args):
    """Our outcome and, where we gave a result, NumPy's (which it must then agree with)."""
    ours = _outcome(compiled, args)
    return ours, (_outcome(oracle, args) if ours[0] == "ok" else None)


def in_child(compiled, oracle, args):
    """(our outcome, NumPy's outcome or None) of ``compiled(*args)`` and ``oracle(*args)``
    computed in a forked child; fails the test if the child dies of a signal or hangs."""
    limit = _mapped_bytes() + SPARE_ADDRESS_SPACE
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: never returns into pytest
        try:
            os.close(read)
            resource.setrlimit(resource.RLIMIT_AS, (limit, resource.RLIM_INFINITY))
            signal.alarm(HANG_SECONDS)
            data = pickle.dumps(_outcomes(compiled, oracle, args))
            with os.fdopen(write, "wb") as out:
                out.write(data)
        finally:
            os._exit(0)
    os.close(write)
    with os.fdopen(read, "rb") as incoming:
        data = incoming.read()
    _, status = os.waitpid(pid, 0)
    hung = os.WIFSIGNALED(status) and os.WTERMSIG(status) == signal.SIGALRM
    assert not hung, f"the call with {args} did not return within {HANG_SECONDS} s"
    assert not os.WIFSIGNALED(status), \
        f"the call with {args} killed the process with signal {os.WTERMSIG(status)}"
    assert os.WIFEXITED(status) and os.WEXITSTATUS(status) == 0 and data, \
        f"the call with {args} did not report back"
    return pickle.loads(data)


def check(compiled, oracle, args, names):
    ours, numpy_ = in_child(compiled, oracle, args)
    assert ours[0] != "unexpected", f"{args}: {ours[1]}: {ours[2]}"
    if ours[0] == "ok":
        assert numpy_[0] == "ok", f"{args}: we gave {ours[1]!r}, NumPy raised {numpy_[1:]}"
        np.testing.assert_array_equal(ours[1], numpy_[1])
        assert ours[1].shape == numpy_[1].shape
    else:
        _, kind, message = ours
        # Memory running out names the allocation (and the user's line it is for).
        allocation = kind == "MemoryError" and "loops.alloc" in message \
            and f"{os.path.basename(__file__)}:" in message
        assert allocation or any(name in message for name in names), \
            f"{args}: the {kind} does not name the op ({names}): {message}"
    return ours


# -- the graphs: (our function's graph, NumPy's version, words one of which an error names) ----

def _slice(v, a, b, s):
    return v[a:b:s]


def _range(a, b, s):
    # Python's range is exact where NumPy computes the length in float64 (and errs near 2**63).
    return np.array(range(a, b, s), dtype=np.int64)


def _filled_sum(a, b):
    np.broadcast_to(1.5, (a, b))  # NumPy's checks of the shape, without the memory
    return np.float64(1.5) * a * b


def _set_window(v, a, b, s):
    w = v.copy()
    w[a:b:s] = -1.0
    return w


def _inc_item(v, a):
    w = v.copy()
    w[a] += 1.0
    return w


def _broadcast_elements(a, b):
    """The elements an ``alloc(1.5, a, b).sum()`` goes over where the sizes are legal (0 where
    they are refused): the broadcast is never allocated, so nothing bounds its work but this."""
    if a < 0 or b < 0 or max(a, 1) * max(b, 1) * 8 > MAX_ALLOCATION_BYTES:
        return 0
    return a * b


@dataclass(frozen=True)
class Case:
    """A graph of run-time sizes or indices, NumPy's version of it and the op names one of which
    an error must name."""

    inputs: list
    output: object
    oracle: Callable
    count: int  # how many of the drawn values it takes (after ``data``, where given)
    names: tuple[str, ...]
    data: np.ndarray | None = None
    elements: Callable | None = None  # the elements a legal call goes over, where unbounded


def _cases() -> dict[str, Case]:
    a, b, s = T.lscalar("a"), T.lscalar("b"), T.lscalar("s")
    v = T.dvector("v")
    data = np.arange(8.0)
    return {
        "alloc": Case([a, b], T.alloc(1.5, a, b), lambda a, b: np.full((a, b), 1.5), 2,
                      ("tensor.alloc",)),
        "alloc_sum": Case([a, b], T.alloc(1.5, a, b).sum(), _filled_sum, 2, ("tensor.alloc",),
                          elements=_broadcast_elements),
        "zeros": Case([a, b], T.zeros((a, b)), lambda a, b: np.zeros((a, b)), 2,
                      ("tensor.alloc",)),
        "ones": Case([a], T.ones((a,), dtype="int8"), lambda a: np.ones(a, np.int8), 1,
                     ("tensor.alloc",)),
        "arange": Case([a, b, s], T.arange(a, b, s), _range, 3, ("tensor.arange",)),
        "reshape": Case([v, a, b], v.reshape((a, b)).sum(),
                        lambda v, a, b: v.reshape(a, b).sum(), 2, ("tensor.reshape",), data),
        "reshape_empty": Case([v, a, b], v[:0].reshape((a, b)),
                              lambda v, a, b: v[:0].reshape(a, b), 2, ("tensor.reshape",), data),
        "concatenate": Case([a, b], T.concatenate([T.zeros((a,)), T.ones((b,))]),
                            lambda a, b: np.concatenate([np.zeros(a), np.ones(b)]), 2,
                            ("tensor.alloc", "tensor.concatenate")),
        "join": Case([v, a], T.join(0, v[a:], v[:a]),
                     lambda v, a: np.concatenate([v[a:], v[:a]]), 1,
                     ("tensor.subtensor", "tensor.concatenate"), data),
        "index": Case([v, a], v[a], lambda v, a: v[a], 1, ("tensor.subtensor",), data),
        "slice": Case([v, a, b, s], _slice(v, a, b, s), _slice, 3, ("tensor.subtensor",), data),
        "set_subtensor": Case([v, a, b, s], T.set_subtensor(v[a:b:s], -1.0), _set_window, 3,
                              ("tensor.set_subtensor", "tensor.subtensor"), data),
        "inc_subtensor": Case([v, a], T.inc_subtensor(v[a], 1.0), _inc_item, 1,
                              ("tensor.inc_subtensor", "tensor.subtensor"), data),
    }


# The byte counts the cases expect are those of float64 data, whatever floatX the flags set.
with config.change_flags(floatX="float64"):
    CASES = _cases()

_compiled: dict = {}


def compiled(name: str, mode: str):
    """The case's function in ``mode``, compiled once (in the parent, before any fork)."""
    key = (name, mode)
    if key not in _compiled:
        case = CASES[name]
        _compiled[key] = theano.function(case.inputs, case.output, mode=mode)
    return _compiled[key]


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("name", sorted(CASES))
@settings(max_examples=10, deadline=None, database=None, derandomize=True,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(values=st.lists(sizes, min_size=3, max_size=3))
def test_run_time_sizes_and_indices_at_the_int64_limits(name, mode, values):
    case = CASES[name]
    values = tuple(values[:case.count])
    assume(case.elements is None or case.elements(*values) <= CHEAP_ELEMENTS)
    args = values if case.data is None else (case.data, *values)
    check(compiled(name, mode), case.oracle, args, case.names)


# -- the cases that crashed the process or gave wrong results --------------------------------

@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("name, args, error", [
    ("alloc", (2 ** 40, 2 ** 40), ValueError),
    ("zeros", (2 ** 61, 8), ValueError),
    ("arange", (0, 2 ** 61 + 1, 1), ValueError),
    ("reshape", (np.arange(8.0), 2 ** 61 + 1, 8), ValueError),
    ("alloc_sum", (2 ** 40, 2 ** 40), ValueError),
    ("concatenate", (2 ** 60, 2 ** 60), ValueError),
    ("concatenate", (2 ** 58, 2 ** 58), MemoryError),  # each fits, and malloc gives NULL
    ("ones", (2 ** 62,), MemoryError),
])
def test_sizes_that_wrapped_around_are_errors_naming_the_op(mode, name, args, error):
    kind = check(compiled(name, mode), lambda *a: None, args, CASES[name].names)
    assert kind[0] == "error" and kind[1] in {error.__name__, "InterpreterError",
                                               "RuntimeCheckError"}, kind
    if error is MemoryError:
        assert kind[1] == "MemoryError", kind


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("start, stop, step", [
    (None, None, -2 ** 63), (None, None, 2 ** 63 - 1), (-2 ** 63, 2 ** 63 - 1, -1),
    (2 ** 63 - 1, -2 ** 63, -3), (-2 ** 63, None, 2), (None, -2 ** 63, -1)])
def test_slices_are_exact_over_the_int64_range(mode, start, stop, step):
    v = T.dvector("v")
    f = theano.function([v], v[start:stop:step], mode=mode)
    data = np.arange(8.0)
    np.testing.assert_array_equal(f(data), data[start:stop:step])


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("start, stop, step", [
    (-2 ** 63, 2 ** 63 - 1, 2 ** 62), (2 ** 63 - 1, -2 ** 63, -2 ** 62),
    (-2 ** 63, 2 ** 63 - 1, 2 ** 63 - 1), (0, 2 ** 62 + 1, 2 ** 62 - 1), (5, -5, 1),
    (-2 ** 63, -2 ** 63 + 3, 1)])
def test_integer_arange_lengths_are_exact_at_the_int64_limits(mode, start, stop, step):
    a, b, s = T.lscalar("a"), T.lscalar("b"), T.lscalar("s")
    f = theano.function([a, b, s], T.arange(a, b, s), mode=mode)
    np.testing.assert_array_equal(f(start, stop, step), _range(start, stop, step))


@pytest.mark.parametrize("mode", MODES)
def test_reshape_infers_minus_one_and_handles_zero_sizes(mode):
    v, a, b = T.dvector("v"), T.lscalar("a"), T.lscalar("b")
    f = theano.function([v, a, b], v.reshape((a, b)), mode=mode)
    np.testing.assert_array_equal(f(np.arange(6.0), -1, 2), np.arange(6.0).reshape(3, 2))
    assert f(np.zeros(0), 0, 5).shape == (0, 5)
    assert f(np.zeros(0), -1, 5).shape == (0, 5)
    with pytest.raises(ValueError, match="tensor.reshape"):
        f(np.zeros(0), 0, -1)  # NumPy cannot infer a size next to a zero either


def _outgrowing_graphs():
    """Graphs whose result can be larger than every input: (inputs, output, the data before the
    sizes, the result for sizes (2, 3), the op names one of which an error names)."""
    a, b = T.lscalar("a"), T.lscalar("b")
    column, row = T.alloc(1.5, a, 1), T.alloc(2.5, 1, b)
    m = T.dmatrix("m")
    data = np.arange(64.0).reshape(8, 8)
    return {
        "broadcast": ([a, b], column + row, (), np.full((2, 3), 4.0), ("tensor.add",)),
        "matrix product": ([a, b], T.dot(column, row), (), np.full((2, 3), 3.75),
                           ("tensor.dot", "tensor.mul")),
        "gather": ([m, a, b], m[T.alloc(np.int64(2), a, 1), T.alloc(np.int64(5), 1, b)], (data,),
                   np.full((2, 3), data[2, 5]), ("tensor.advanced_subtensor",)),
    }


with config.change_flags(floatX="float64"):
    OUTGROWING = _outgrowing_graphs()


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("name", sorted(OUTGROWING))
def test_a_result_larger_than_its_inputs_is_an_error_naming_its_op(mode, name):
    inputs, output, data, small, names = OUTGROWING[name]
    f = theano.function(inputs, output, mode=mode)
    np.testing.assert_array_equal(f(*data, 2, 3), small)
    if mode == "INTERP":  # the interpreter makes each alloc's array: that one runs out first
        names += ("tensor.alloc",)
    for sizes in [(2 ** 40, 2 ** 40), (2 ** 31, 2 ** 31)]:  # too big for an int64 byte count
        ours = check(f, lambda *a: None, (*data, *sizes), names)
        assert ours[0] == "error" and any(n in ours[2] for n in names), ours
