"""The ``lowering`` dialect: the function attributes the compiler relies on.

Discardable attributes of ``func.func`` (``lowering.<name>``), each with its kind and the rules the
verifier checks against the function's signature:

- ``lowering.shared_updates = [[r, a], ...]``: result ``r`` is the new value of the shared
  variable read as argument ``a``;
- ``lowering.updated_in_place = [[r, a], ...]``: result ``r`` (numbered as before ``inplace``
  took the updated results out) is written into argument ``a``'s buffer instead of returned;
- ``lowering.mutable_args = [i, ...]``: arguments the function may overwrite;
- ``lowering.allow_inplace``: the ``inplace`` stage ran at the tensor level, so the CPU
  pipeline may write in place after ``bufferize``;
- ``lowering.arg_devices = ["cpu", "cuda", ...]`` / ``lowering.result_devices``: where each
  argument lives and where the caller wants each result (a GPU context, or ``"cpu"``).

>>> from lowering.ir.types import F32, TensorType
>>> from lowering.ir.verifier import verify
>>> from lowering.dialects.builtin import ReturnOp
>>> t = TensorType((None,), F32)
>>> f = FuncOp.build("step", [t, t], [t])
>>> _ = f.body.block.append(ReturnOp.create([f.args[1]]))
>>> SHARED_UPDATES.set(f, [(0, 0)])
>>> SHARED_UPDATES.get(f), str(f.attributes["lowering.shared_updates"])
([(0, 0)], '[[0 : i64, 0 : i64]]')
>>> SHARED_UPDATES.set(f, [(0, 2)])
>>> verify(f)
Traceback (most recent call last):
...
lowering.ir.errors.VerifyError: func.func @step: lowering.shared_updates: argument index 2 out of range (the function has 2 arguments)
"""
from __future__ import annotations

from lowering.ir.dialect_attrs import (FLAG, INT_LIST, INT_PAIR_LIST, STRING_LIST, AttrDialect,
                                       DialectAttr, register_attr_dialect)

from .builtin import FuncOp

DIALECT = "lowering"


def _index_problem(index: int, count: int, what: str) -> str | None:
    if 0 <= index < count:
        return None
    return f"{what} index {index} out of range (the function has {count} {what}s)"


def _first_problem(problems) -> str | None:
    return next((p for p in problems if p is not None), None)


def _on_function(check):
    """``check(func, value)`` for a function attribute, refusing it on any other op."""
    def on_op(op, value):
        if not isinstance(op, FuncOp):
            return f"a function attribute, found on {op.name}"
        return check(op, value)
    return on_op


def _counts(func: FuncOp) -> tuple[int, int]:
    ftype = func.function_type
    return len(ftype.inputs), len(ftype.results)


def _check_shared_updates(func: FuncOp, pairs) -> str | None:
    args, results = _counts(func)
    return _first_problem(_index_problem(r, results, "result") or
                          _index_problem(a, args, "argument") for r, a in pairs)


def _check_updated_in_place(func: FuncOp, pairs) -> str | None:
    # Each pair took one result out of the signature: results are numbered as before that.
    args, results = _counts(func)
    return _first_problem(_index_problem(r, results + len(pairs), "result") or
                          _index_problem(a, args, "argument") for r, a in pairs)


def _check_mutable_args(func: FuncOp, indices) -> str | None:
    args, _ = _counts(func)
    return _first_problem(_index_problem(i, args, "argument") for i in indices)


def _check_length(which: int, what: str):
    def check(func: FuncOp, names) -> str | None:
        count = _counts(func)[which]
        if len(names) == count:
            return None
        return f"{len(names)} entries for the function's {count} {what}s"
    return check


SHARED_UPDATES = DialectAttr(
    DIALECT, "shared_updates", INT_PAIR_LIST,
    "[result, argument]: the result is the new value of the shared variable read as the argument",
    _on_function(_check_shared_updates))
UPDATED_IN_PLACE = DialectAttr(
    DIALECT, "updated_in_place", INT_PAIR_LIST,
    "[result, argument]: the result (numbered as before the updated results were taken out) "
    "is written into the argument's buffer",
    _on_function(_check_updated_in_place))
MUTABLE_ARGS = DialectAttr(
    DIALECT, "mutable_args", INT_LIST, "the arguments the function may overwrite",
    _on_function(_check_mutable_args))
ALLOW_INPLACE = DialectAttr(
    DIALECT, "allow_inplace", FLAG,
    "the inplace stage allows writing in place after bufferization",
    _on_function(lambda func, flag: None))
ARG_DEVICES = DialectAttr(
    DIALECT, "arg_devices", STRING_LIST,
    "where each argument lives: a GPU context, or cpu", _on_function(_check_length(0, "argument")))
RESULT_DEVICES = DialectAttr(
    DIALECT, "result_devices", STRING_LIST,
    "where the caller wants each result: a GPU context, or cpu",
    _on_function(_check_length(1, "result")))

LOWERING = register_attr_dialect(AttrDialect(DIALECT, [
    SHARED_UPDATES, UPDATED_IN_PLACE, MUTABLE_ARGS, ALLOW_INPLACE, ARG_DEVICES, RESULT_DEVICES]))
