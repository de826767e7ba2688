"""Ops written in Python, in loops IR: ``loops.python_call`` and ``loops.python_results``.

A host ``tensor.custom`` op (``theano.printing.Print``, a user's ``theano.Op``) becomes, in code
the CPU backend compiles (the ``python-calls`` pass), two steps around an ordinary allocation::

    %n, %token = loops.python_call "Double"(%x) {key = 3 : i64, result_types = [...]}
                     : (!loops.buffer<?xf64>) -> (index, index)
    %y = loops.alloc(%n) : !loops.buffer<?xf64>
    loops.python_results %token, %y : index, !loops.buffer<?xf64>

``python_call`` runs the registered Python code on its operands and checks what it returns
against ``result_types``; its results are the sizes of every dimension of every result, then a
*token* naming the results it keeps. ``python_results`` copies the results the token names into
its buffers (allocated with those sizes), and forgets them. The allocation is the function's own,
so ``plan-memory`` frees or reuses it like any other temporary.

The compiled code calls Python through a callback (``lowering.compile.cpu.python_callbacks``),
which describes the call site with ``PythonCallSite`` (``site_text`` in the machine code; its
key is in the IR text, so a cached copy of the code names the same implementation as the IR it
was compiled from).

>>> import numpy as np
>>> from lowering.dialects.tensor.custom import register_custom
>>> class Twice:
...     name = "Twice"
...     def run(self, values):
...         return [values[0] * 2]
>>> from lowering.ir.types import F64
>>> from .types import BufferType
>>> site = PythonCallSite(register_custom(Twice()), "Twice", "a.py:3:1",
...                       (BufferType((None,), F64),), (BufferType((None,), F64),))
>>> sizes, token = run_site(site, [np.array([1.0, 2.0])])
>>> sizes
[2]
>>> out = np.empty(2)
>>> take_results(token, [out]); out
array([2., 4.])
>>> _ = run_site(site, [out]); drop_pending_results()  # after a call that failed
1
"""
from __future__ import annotations

import itertools
import json
import sys
import threading
from dataclasses import dataclass
from functools import lru_cache

import numpy as np

from lowering.dialects.tensor.custom import check_results, custom_implementation
from lowering.ir.attributes import ArrayAttr, IntAttr, StringAttr, TypeAttr
from lowering.ir.constraints import ArrayAttrOf, Index, TypeAttrOf
from lowering.ir.core import Operation, VerifyError, attr, operand, register_op, var_operand, \
    var_result
from lowering.ir.interpreter import INTERPRETER, InterpreterError
from lowering.ir.traits import MemoryEffects
from lowering.ir.types import INDEX, TensorType

from .constraints import AnyBuffer
from .runtime import as_buffer
from .types import BufferType


class PythonOpError(InterpreterError):
    """An op written in Python gave results that do not fit its node, or kept an array it was
    lent; the message names the op and the user's line."""


@dataclass(frozen=True)
class PythonCallSite:
    """What a call of Python code needs to know: the implementation's key, the op's name and
    source line, its operand and result buffer types."""

    key: int
    op_name: str
    location: str
    input_types: tuple[BufferType, ...]
    result_types: tuple[BufferType, ...]

    def text(self) -> str:
        """The site as one line of text (what the machine code hands the callback)."""
        return json.dumps([self.key, self.op_name, self.location,
                           [str(t) for t in self.input_types],
                           [str(t) for t in self.result_types]])

    @staticmethod
    @lru_cache(maxsize=1024)
    def from_text(text: str) -> "PythonCallSite":
        """The site ``text()`` describes.

        >>> from lowering.ir.types import F32
        >>> s = PythonCallSite(0, "P", "a.py:1:1", (), (BufferType((2,), F32),))
        >>> PythonCallSite.from_text(s.text()) == s
        True
        """
        from lowering.ir.parser import parse_type
        key, name, location, inputs, results = json.loads(text)
        return PythonCallSite(key, name, location, tuple(parse_type(t) for t in inputs),
                              tuple(parse_type(t) for t in results))

    def error(self, message: str) -> PythonOpError:
        return PythonOpError(f"{message} (at {self.location})")


# Results computed by python_call and not yet copied out by python_results, by token, with the
# thread that computed them.
_PENDING: dict[int, tuple[int, list[np.ndarray]]] = {}
_TOKENS = itertools.count(1)
_PENDING_LOCK = threading.Lock()


def run_site(site: PythonCallSite, args: list) -> tuple[list[int], int]:
    """Run the site's Python code on ``args``; the sizes of its checked results (every
    dimension of each, in order) and the token ``take_results`` hands them over with.

    A result that shares memory with an argument is copied: the arguments may be views of
    memory the caller frees before the results are taken.
    """
    try:
        implementation = custom_implementation(site.key)
    except KeyError as exc:
        raise site.error(exc.args[0]) from None
    outputs = list(implementation.run(list(args)))
    # Checked against the tensor types the user's graph gave (what the messages show).
    types = [TensorType(t.shape, t.element) for t in site.result_types]
    results = check_results(site.op_name, types, outputs, site.error)
    del outputs
    results = [np.array(r) if any(_shares_memory(r, a) for a in args) else r for r in results]
    with _PENDING_LOCK:
        token = next(_TOKENS)
        _PENDING[token] = (threading.get_ident(), results)
    return [int(d) for r in results for d in r.shape], token


def _shares_memory(result: np.ndarray, arg) -> bool:
    return isinstance(arg, np.ndarray) and np.may_share_memory(result, arg)


def pending_layouts(token: int) -> list[tuple[int, np.dtype]]:
    """The rank and dtype of each result waiting under ``token``."""
    with _PENDING_LOCK:
        entry = _PENDING.get(token)
    if entry is None:
        raise InterpreterError(f"no results of a Python op are waiting under token {token}")
    return [(r.ndim, r.dtype) for r in entry[1]]


def take_results(token: int, outputs: list[np.ndarray]) -> None:
    """Copy the results ``token`` names into ``outputs`` (arrays of their shapes)."""
    with _PENDING_LOCK:
        entry = _PENDING.pop(token, None)
    if entry is None:
        raise InterpreterError(f"no results of a Python op are waiting under token {token}")
    for result, output in zip(entry[1], outputs):
        np.copyto(output, result)


def drop_pending_results() -> int:
    """Forget the results the calling thread's Python ops left waiting (a compiled call that
    failed between a ``python_call`` and its ``python_results``); how many sets there were.

    A thread runs no Python op between those two steps, so none of its waiting results still
    belongs to a call in progress when one of its calls has failed.
    """
    me = threading.get_ident()
    with _PENDING_LOCK:
        stale = [token for token, (thread, _) in _PENDING.items() if thread == me]
        for token in stale:
            del _PENDING[token]
    return len(stale)


def kept_arguments(lent: list[np.ndarray]) -> list[int]:
    """The positions of the arrays of ``lent`` that something besides the caller's list still
    refers to (an op that kept its input after returning)."""
    # getrefcount sees its own argument and the list.
    return [i for i in range(len(lent)) if sys.getrefcount(lent[i]) > 2]


@register_op
class PythonCallOp(Operation):
    """Runs the Python code registered under ``key`` on the operand buffers; gives the sizes of
    its results and the token ``loops.python_results`` copies them out with."""

    name = "loops.python_call"
    traits = frozenset({MemoryEffects(reads=("inputs",))})
    assembly_format = "$op_name `(` $inputs `)` attr-dict : functional-type($inputs, $outs)"
    inputs = var_operand(AnyBuffer)
    outs = var_result(Index)
    key = attr(IntAttr)
    op_name = attr(StringAttr)
    result_types = attr(ArrayAttrOf(TypeAttrOf(AnyBuffer)))

    @classmethod
    def build(cls, inputs, key: int, op_name: str, result_types, location=None
              ) -> "PythonCallOp":
        types = list(result_types)
        attributes = {"key": IntAttr(int(key)), "op_name": StringAttr(op_name),
                      "result_types": ArrayAttr([TypeAttr(t) for t in types])}
        count = sum(t.rank for t in types) + 1
        return cls.create(list(inputs), [INDEX] * count, attributes, location=location)

    @property
    def buffer_types(self) -> tuple[BufferType, ...]:
        return tuple(a.value for a in self.attributes["result_types"])

    @property
    def sizes(self) -> list:
        return list(self.outs)[:-1]

    @property
    def token(self):
        return self.outs[-1]

    def site(self) -> PythonCallSite:
        return PythonCallSite(self.key, self.op_name, self.location.short(),
                              tuple(v.type for v in self.inputs), self.buffer_types)

    def verify_(self):
        expected = sum(t.rank for t in self.buffer_types) + 1
        if len(self.outs) != expected:
            raise VerifyError(f"{self.name}: {len(self.outs)} results, expected {expected} (one "
                              f"per dimension of each result type, then the token)", self)
        if any(t.memory_space != "host" for t in (*self.buffer_types,
                                                    *(v.type for v in self.inputs))):
            raise VerifyError(f"{self.name}: Python code runs on host buffers only", self)


@register_op
class PythonResultsOp(Operation):
    """Copies the results of the ``loops.python_call`` that gave ``token`` into ``outputs``."""

    name = "loops.python_results"
    traits = frozenset({MemoryEffects(writes=("outputs",))})
    assembly_format = "$token `,` $outputs attr-dict : type($outputs)"
    token = operand(Index)
    outputs = var_operand(AnyBuffer)

    @classmethod
    def infer_operand_types(cls, known, counts):
        return {"token": [INDEX]}

    @classmethod
    def build(cls, token, outputs, location=None) -> "PythonResultsOp":
        return cls.create([token, *outputs], [], {}, location=location)


@INTERPRETER.register(PythonCallOp)
def _python_call(interp, op, args):
    site = op.site()
    values = [as_buffer(a, v.type, f"operand #{i}") for i, (a, v) in enumerate(zip(args,
                                                                                     op.inputs))]
    sizes, token = run_site(site, values)
    return [*sizes, token]


@INTERPRETER.register(PythonResultsOp)
def _python_results(interp, op, args):
    outputs = [as_buffer(a, v.type, f"output #{i}") for i, (a, v) in enumerate(zip(args[1:],
                                                                                     op.outputs))]
    take_results(int(args[0]), outputs)
    return []
