"""Test helpers for dialect ops: run detached op graphs in the interpreter, check gradients.

A detached graph is built with the op classes' ``build`` on placeholder inputs (block arguments of
a free-standing block), then run by interpreting its ops in topological order:

>>> import numpy as np
>>> from lowering.ir.types import F64, TensorType
>>> from lowering.dialects.tensor import AddOp, ExpOp
>>> x, y = graph_inputs(TensorType((None,), F64), TensorType((1,), F64))
>>> out = AddOp.build(ExpOp.build(x).result, y).result
>>> evaluate_graph([out], {x: np.zeros(3), y: np.ones(1)})[0].tolist()
[2.0, 2.0, 2.0]
"""
from __future__ import annotations

import numpy as np

from lowering.ir.core import Block, OpResult, Operation, Value
from lowering.ir.interpreter import Interpreter
from lowering.ir.types import TensorType, scalar_type_of


def graph_inputs(*types) -> list[Value]:
    """Placeholder input values of the given types (arguments of a detached block)."""
    return list(Block(types).args)


def topological_ops(outputs, leaves=()) -> list[Operation]:
    """The ops computing ``outputs``, each after the ops it reads; ``leaves`` stop the walk.

    >>> from lowering.ir.types import F32, TensorType
    >>> from lowering.dialects.tensor import ExpOp, NegOp
    >>> (x,) = graph_inputs(TensorType((2,), F32))
    >>> y = NegOp.build(ExpOp.build(x).result).result
    >>> [op.name for op in topological_ops([y])]
    ['tensor.exp', 'tensor.neg']
    """
    leaves = set(leaves)
    order: list[Operation] = []
    seen: set[int] = set()
    stack: list[tuple[Value, bool]] = [(v, False) for v in reversed(list(outputs))]
    while stack:
        value, expanded = stack.pop()
        if value in leaves or not isinstance(value, OpResult):
            continue
        op = value.op
        if expanded:
            if id(op) not in seen:
                seen.add(id(op))
                order.append(op)
            continue
        if id(op) in seen:
            continue
        stack.append((value, True))
        stack.extend((v, False) for v in reversed(op.operands))
    return order


def evaluate_graph(outputs, feeds: dict) -> list:
    """Run the detached graph computing ``outputs`` in the reference interpreter.

    ``feeds`` maps each input value (a placeholder, or any value to cut the graph at) to its
    run-time value; returns one value per output.
    """
    interp = Interpreter()
    interp.env.update(feeds)
    for op in topological_ops(outputs, feeds):
        interp.run_op(op)
    return [interp.value(v) for v in outputs]


def type_of(array, dims: str = "dynamic") -> TensorType:
    """The tensor type of ``array``: size-1 dims broadcast (``1``); the others are ``?``
    (``dims="dynamic"``) or static (``dims="static"``).

    >>> import numpy as np
    >>> str(type_of(np.zeros((3, 1), np.float32))), str(type_of(np.zeros((3, 1)), "static"))
    ('tensor<?x1xf32>', 'tensor<3x1xf64>')
    """
    array = np.asarray(array)
    shape = tuple(1 if s == 1 else (s if dims == "static" else None) for s in array.shape)
    return TensorType(shape, scalar_type_of(array.dtype))


def numeric_gradient(f, arrays, index: int, eps: float = 1e-6) -> np.ndarray:
    """Central finite differences of the scalar ``f(*arrays)`` in ``arrays[index]`` (float64)."""
    arrays = [np.array(a, dtype=np.float64) if i == index else a for i, a in enumerate(arrays)]
    x = arrays[index]
    grad = np.zeros_like(x)
    for pos in np.ndindex(*x.shape):
        old = x[pos]
        x[pos] = old + eps
        up = f(*arrays)
        x[pos] = old - eps
        down = f(*arrays)
        x[pos] = old
        grad[pos] = (up - down) / (2 * eps)
    return grad


def check_gradients(build, arrays, types=None, seed: int = 0, rtol: float = 1e-5,
                    atol: float = 1e-6, eps: float = 1e-6) -> None:
    """Check the grad rule of the op ``build`` makes against finite differences.

    ``build(*inputs)`` returns the op's output value; ``arrays`` are the float64 input values
    (``types`` default to ``type_of`` each). With a random output gradient ``gz``, the gradient of
    ``sum(gz * out)`` in each float input must match central differences, and each returned
    gradient must have exactly its operand's type.
    """
    arrays = [np.asarray(a) for a in arrays]
    types = types or [type_of(a) for a in arrays]
    inputs = graph_inputs(*types)
    out = build(*inputs)
    feeds = dict(zip(inputs, arrays))
    (reference,) = evaluate_graph([out], feeds)
    rng = np.random.default_rng(seed)
    gz_value = rng.uniform(0.5, 1.5, np.shape(reference)).astype(out.type.dtype)
    (gz,) = graph_inputs(out.type)
    grads = out.owner.grad([gz])
    assert len(grads) == len(inputs)

    def cost(*values):
        (result,) = evaluate_graph([out], dict(zip(inputs, values)))
        return float(np.sum(gz_value * result))

    for index, (value, grad) in enumerate(zip(inputs, grads)):
        if not value.type.element.is_float:
            assert grad is None, f"operand #{index} of integer type got a gradient"
            continue
        assert grad is not None, f"operand #{index} got no gradient"
        assert grad.type == value.type, f"gradient type {grad.type} != operand type {value.type}"
        (got,) = evaluate_graph([grad], {**feeds, gz: gz_value})
        expected = numeric_gradient(cost, arrays, index, eps)
        np.testing.assert_allclose(got, expected, rtol=rtol, atol=atol,
                                   err_msg=f"gradient of operand #{index}")
