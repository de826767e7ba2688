"""``theano.printing.Print``: an identity op that prints its input when the graph runs.

``Print(message, attrs=("__str__",))(x)`` is ``x``; each time a function computes it, it prints
``message attr = value`` for each attribute of the input array (a callable one, such as
``__str__`` or ``sum``, is called). It prints only when its result is used, as in Theano.

It is an op written in Python (``lowering.Op``), a host callback in the graph: in the IR it is
a ``tensor.custom`` op whose node runs ``perform``. Compiled CPU code calls it where the
function computes the value (``loops.python_call``), so the prints of a call come in program
order and the rest of the function stays compiled; the interpreter runs it as any op, and the
GPU executor as a host step between device steps. Gradients go through it unchanged.

>>> import numpy as np
>>> import lowering as theano
>>> import lowering.tensor as T
>>> x = T.dvector("x")
>>> f = theano.function([x], Print("x is", attrs=("__str__", "shape"))(x) * 2)
>>> f(np.array([1.0, 2.0]))
x is __str__ = [1. 2.]
x is shape = (2,)
array([2., 4.])
"""
from __future__ import annotations

from .custom_op import Apply, Op

__all__ = ["Print"]


def _print_fn(op: "Print", xin) -> None:
    """Theano's default ``global_fn``: one line per attribute of the input value."""
    for attr in op.attrs:
        value = getattr(xin, attr)
        print(op.message, attr, "=", value() if callable(value) else value)


class Print(Op):
    """Returns its input and prints ``message`` with the input's ``attrs`` when it runs;
    ``global_fn(op, value)`` does the printing (replace it to log elsewhere)."""

    __props__ = ("message", "attrs", "global_fn")
    view_map = {0: [0]}

    def __init__(self, message: str = "", attrs=("__str__",), global_fn=_print_fn):
        self.message = message
        self.attrs = tuple(attrs)
        self.global_fn = global_fn

    def make_node(self, xin):
        from .constructors import as_tensor_variable
        xin = as_tensor_variable(xin)
        return Apply(self, [xin], [xin.type()])

    def perform(self, node, inputs, output_storage):
        (xin,) = inputs
        output_storage[0][0] = xin
        self.global_fn(self, xin)

    def grad(self, inputs, output_grads):
        return list(output_grads)

    def __str__(self):
        return f"Print{{message={self.message!r}, attrs={self.attrs!r}}}"
