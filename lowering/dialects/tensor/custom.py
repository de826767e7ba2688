"""``tensor.custom``: an op whose implementation is Python code given by the program.

Theano programs define their own ops (subclasses of ``theano.Op`` with ``perform`` or
``make_thunk``). In the IR such an op is one ``tensor.custom`` op holding a ``key`` into the
registry of implementations (an implementation lives in this process only; IR text naming a key
that is not registered here verifies, but cannot run). ``op_name`` is what the op prints as;
``device`` (optional) is the GPU context the op runs on, with device arrays as its values.
``bufferize`` keeps the op, with buffers for its operands and results.

An implementation is any object with ``name`` and ``run(values) -> list of results``, and
optionally ``grad(output_grads) -> list of operand gradients`` (graph values); the front end
registers one per use of a user's op (``lowering.frontend.custom_op``).

>>> import numpy as np
>>> from lowering.ir.core import Block
>>> from lowering.ir.types import F64, TensorType
>>> class Twice:
...     name = "Twice"
...     def run(self, values):
...         return [values[0] * 2]
>>> key = register_custom(Twice())
>>> x = Block([TensorType((None,), F64)]).args[0]
>>> op = CustomOp.build([x], [x.type], key, "Twice")
>>> run_custom(op, [np.array([1.0, 2.0])])
[array([2., 4.])]
"""
from __future__ import annotations

import itertools
from typing import Protocol, Sequence

import numpy as np

from lowering.ir.attributes import IntAttr, StringAttr
from lowering.ir.core import PURE, Value, VerifyError, attr, register_op, var_operand, var_result
from lowering.ir.interpreter import INTERPRETER, InterpreterError
from lowering.ir.traits import HAS_CANONICALIZATION_PATTERNS
from lowering.ir.types import TensorType

from .base import TensorOp


class CustomImplementation(Protocol):
    """What the registry holds: a name and a function from argument values to result values."""

    name: str

    def run(self, values: list) -> list: ...


_IMPLEMENTATIONS: dict[int, CustomImplementation] = {}
_KEYS = itertools.count()


def register_custom(implementation: CustomImplementation) -> int:
    """Register ``implementation``; the key a ``tensor.custom`` op refers to it by.

    Implementations stay registered for the life of the process (IR holding the key may be
    compiled at any later time).
    """
    if not callable(getattr(implementation, "run", None)):
        raise TypeError(f"a custom op implementation needs a run(values) method, got "
                        f"{type(implementation).__name__}")
    key = next(_KEYS)
    _IMPLEMENTATIONS[key] = implementation
    return key


def custom_implementation(key: int) -> CustomImplementation:
    """The implementation registered under ``key`` (an error says when there is none).

    >>> custom_implementation(-1)
    Traceback (most recent call last):
    ...
    KeyError: 'no custom op implementation is registered under key -1 in this process; ...'
    """
    try:
        return _IMPLEMENTATIONS[key]
    except KeyError:
        raise KeyError(f"no custom op implementation is registered under key {key} in this "
                       f"process; IR holding tensor.custom ops runs only in the program that "
                       f"built it") from None


@register_op
class CustomOp(TensorOp):
    """``tensor.custom(inputs...) {key, op_name, device?}``: results computed by registered
    Python code. Pure (as Theano's ops are): unused results may be removed."""

    name = "tensor.custom"
    traits = frozenset({PURE, HAS_CANONICALIZATION_PATTERNS})
    assembly_format = "$op_name `(` $inputs `)` attr-dict : functional-type($inputs, $outputs)"
    inputs = var_operand()
    outputs = var_result()
    key = attr(IntAttr)
    op_name = attr(StringAttr)
    device = attr(StringAttr, default=None)

    @classmethod
    def build(cls, inputs: Sequence[Value], result_types: Sequence[TensorType], key: int,
              op_name: str, device: str | None = None, location=None) -> "CustomOp":
        attributes = {"key": IntAttr(int(key)), "op_name": StringAttr(op_name)}
        if device is not None:
            attributes["device"] = StringAttr(device)
        op = cls.create(list(inputs), list(result_types), attributes, location=location)
        op.verify_()
        return op

    def verify_(self):
        # The tensor form reads and gives tensors; once bufferized, it reads and gives buffers
        # (its results are fresh buffers made by the Python code).
        values = list(self.operands) + list(self.results)
        tensors = [isinstance(v.type, TensorType) for v in values]
        if any(tensors) and not all(tensors):
            raise VerifyError(f"{self.name} '{self.op_name}': operands and results must be all "
                              f"tensors or all buffers, got "
                              f"{', '.join(str(v.type) for v in values)}", self)

    def fold(self):
        return None  # user code runs when the function runs, never while compiling

    def grad(self, output_grads):
        """The gradients the implementation's ``grad(output_grads)`` builds (one per operand,
        None where there is none); an implementation without one has no gradient."""
        implementation = custom_implementation(self.key)
        rule = getattr(implementation, "grad", None)
        if rule is None:
            raise VerifyError(f"custom op '{self.op_name}' has no gradient", self)
        return rule(output_grads)


def check_custom_results(op: CustomOp, outputs: list, is_array=None) -> list:
    """``outputs`` of a custom op's code checked against its result types (count, dtype, rank,
    static sizes); host results become NumPy arrays of the result dtype. ``is_array`` tells
    arrays that are kept as they are (device arrays) from values converted with NumPy."""
    return check_results(op.op_name, [r.type for r in op.results], outputs,
                         lambda message: InterpreterError(message, op), is_array)


def check_results(op_name: str, types: list, outputs: list, error, is_array=None) -> list:
    """``check_custom_results`` for the op named ``op_name`` with result ``types``;
    ``error(message)`` makes the exception raised for a wrong result."""
    if len(outputs) != len(types):
        raise error(f"custom op '{op_name}' gave {len(outputs)} result(s), its node declares "
                    f"{len(types)}")
    checked = []
    for index, (value, rtype) in enumerate(zip(outputs, types)):
        if value is None:
            raise error(f"custom op '{op_name}' left output {index} unset (the thunk or perform "
                        f"must store an array in output_storage[{index}][0])")
        on_device = is_array is not None and is_array(value)
        if not on_device:
            value = np.asarray(value)
        dtype = np.dtype(rtype.dtype)
        if value.dtype != dtype and (on_device or value.dtype.kind != dtype.kind):
            # Host results of the same kind (float64 for float32) are cast, as NumPy code
            # easily widens; anything else is a wrong implementation.
            raise error(f"custom op '{op_name}' output {index} has dtype {value.dtype}, its "
                        f"type is {rtype}")
        if len(value.shape) != rtype.rank or not rtype.accepts_shape(tuple(value.shape)):
            raise error(f"custom op '{op_name}' output {index} has shape "
                        f"{tuple(value.shape)}, its type is {rtype}")
        if value.dtype != dtype:
            value = value.astype(dtype)
        checked.append(value)
    return checked


def run_custom(op: CustomOp, args: list, is_array=None) -> list:
    """Run ``op``'s registered code on ``args`` and check what it returns."""
    try:
        implementation = custom_implementation(op.key)
    except KeyError as exc:
        raise InterpreterError(exc.args[0], op) from None
    return check_custom_results(op, list(implementation.run(list(args))), is_array)


@INTERPRETER.register(CustomOp)
def _custom(interp, op, args):
    return run_custom(op, args)
