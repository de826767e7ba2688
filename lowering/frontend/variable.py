"""Symbolic variables: the user's handle on one value of a detached tensor-dialect graph.

A ``TensorVariable`` wraps one IR ``Value`` (``.value``). An input (``T.matrix('x')``) wraps a block
argument of its own detached block; a constant wraps the result of a ``tensor.constant`` op; every
other variable wraps the result of the op that computes it. There is at most one live variable per
value (``wrap`` finds it), so variables work as dictionary keys (``{x: data}``, ``givens``).

Operators follow NumPy (``+ - * / // % **``, comparisons, ``& | ^ ~``), except that ``==`` and
``!=`` stay Python's identity tests, as in Theano (use ``T.eq``/``T.neq``).

>>> from lowering.frontend.constructors import matrix, vector
>>> x, w = matrix("x", dtype="float32"), vector("w", dtype="float32")
>>> y = 1 / (1 + abs(x.dot(w)))
>>> y.dtype, y.ndim, str(x), str(vector(dtype="float32"))
('float32', 1, 'x', '<TensorType(float32, vector)>')
"""
from __future__ import annotations

import weakref

import numpy as np

from lowering.dialects.tensor import ConstantOp
from lowering.ir.core import Block, OpResult, Value

from .theano_ops import Apply, theano_op, value_text
from .types import TensorType

# The live variable of each value (weak: a value whose variable was dropped gets a fresh one).
_VARIABLES: "weakref.WeakValueDictionary[Value, TensorVariable]" = weakref.WeakValueDictionary()
# Test values (``x.tag.test_value``) live with the value, so any variable of it sees them.
_TEST_VALUES: "weakref.WeakKeyDictionary[Value, np.ndarray]" = weakref.WeakKeyDictionary()


def wrap(value: Value) -> "TensorVariable":
    """The variable of ``value``: the live one if there is one, else a new one.

    >>> from lowering.frontend.constructors import scalar
    >>> x = scalar("x")
    >>> wrap(x.value) is x
    True
    """
    var = _VARIABLES.get(value)
    if var is not None:
        return var
    if isinstance(value, OpResult) and isinstance(value.op, ConstantOp):
        return TensorConstant(value)
    for view in LEAF_VIEWS:
        var = view(value)
        if var is not None:
            return var
    return TensorVariable(value)


# Leaves with a variable class of their own (shared variables): each function returns the
# variable of a value it knows, else None. Modules defining such classes append theirs.
LEAF_VIEWS: list = []


def new_input(type: TensorType, name: str | None = None) -> "TensorVariable":
    """A new input variable of ``type``: the argument of a detached block of its own."""
    arg = Block().add_arg(type.ir_type, name)
    return TensorVariable(arg, name)


class Tag:
    """Free-form annotations of a variable (Theano's ``var.tag``).

    ``test_value`` is checked against the variable's type when set and is what
    ``compute_test_value`` evaluates graphs on.
    """

    def __init__(self, variable: "TensorVariable"):
        self._variable = variable

    @property
    def test_value(self):
        value = _TEST_VALUES.get(self._variable.value)
        if value is None:
            raise AttributeError(f"{self._variable} has no test value")
        return value

    @test_value.setter
    def test_value(self, data):
        var = self._variable
        try:
            _TEST_VALUES[var.value] = var.type.filter(data, allow_downcast=None)
        except TypeError as exc:
            raise TypeError(f"bad test value for {var}: {exc}") from None

    @test_value.deleter
    def test_value(self):
        _TEST_VALUES.pop(self._variable.value, None)

    def __repr__(self):
        attrs = {k: v for k, v in vars(self).items() if k != "_variable"}
        if self._variable.value in _TEST_VALUES:
            attrs["test_value"] = _TEST_VALUES[self._variable.value]
        return f"Tag({', '.join(f'{k}={v!r}' for k, v in attrs.items())})"


def _comparison(result: "TensorVariable") -> "TensorVariable":
    """A comparison operator's result, which ``bool()`` refuses (see ``__bool__``)."""
    result._is_nonzero = False
    return result


class Variable:
    """Theano's ``gof.Variable``: the base class of every symbolic variable, so that libraries'
    ``isinstance(x, theano.Variable)`` checks hold (``TensorVariable`` is the one kind graphs
    are built of).

    Made directly, as Theano allows (``Variable(type, owner=None, index=None, name=None)``), it
    is a placeholder holding those four fields: libraries pass one through their own code, but
    no op accepts it.

    >>> v = Variable("my type", name="v")
    >>> v.type, v.owner, v.name
    ('my type', None, 'v')
    """

    def __init__(self, type, owner=None, index=None, name=None):
        self.type, self.owner, self.index, self.name = type, owner, index, name

    def __repr__(self):
        return self.name if self.name is not None else f"<Variable of {self.type!r}>"


class Constant(Variable):
    """Theano's ``gof.Constant``: the base class of constants (``TensorConstant``)."""


class TensorVariable(Variable):
    """A symbolic tensor: NumPy-style operators, methods and indexing build tensor-dialect ops."""

    # NumPy must hand ``ndarray + variable`` to our reflected operators, not loop over elements.
    __array_ufunc__ = None
    __array_priority__ = 1000

    def __init__(self, value: Value, name: str | None = None):
        if not isinstance(value, Value):
            raise TypeError(f"a variable wraps an IR Value, got {type(value).__name__}")
        if _VARIABLES.get(value) is not None:
            raise ValueError(f"{value!r} already has a variable; use wrap(value)")
        self.value = value
        self.tag = Tag(self)
        if name is not None:
            self.name = name
        _VARIABLES[value] = self

    # -- type information -----------------------------------------------------------------------

    @property
    def type(self) -> TensorType:
        """The Theano view of the value's type (dtype and broadcastable pattern)."""
        return TensorType.from_ir(self.value.type)

    @property
    def dtype(self) -> str:
        return self.value.type.dtype.name

    @property
    def ndim(self) -> int:
        return self.value.type.rank

    @property
    def broadcastable(self) -> tuple[bool, ...]:
        return self.value.type.broadcastable

    @property
    def name(self) -> str | None:
        return self.value.name_hint

    @name.setter
    def name(self, name: str | None):
        if name is not None and not isinstance(name, str):
            raise TypeError(f"a variable's name must be a string, got {type(name).__name__}")
        self.value.name_hint = name

    @property
    def operation(self):
        """The IR op computing this variable (None for inputs)."""
        return self.value.op if isinstance(self.value, OpResult) else None

    @property
    def owner(self):
        """Theano's ``Apply`` node computing this variable: ``.op``, ``.inputs``, ``.outputs``;
        None for inputs and constants, as in Theano."""
        op = self.operation
        if op is None or isinstance(op, ConstantOp):
            return None
        return Apply(theano_op(op), [wrap(v) for v in op.operands], [wrap(r) for r in op.results],
                     op)

    @property
    def index(self) -> int | None:
        """Which result of its op this variable is (None for inputs)."""
        return self.value.index if isinstance(self.value, OpResult) else None

    # -- printing -------------------------------------------------------------------------------

    def __str__(self):
        return value_text(self.value)

    def __repr__(self):
        """The text, followed on the next line by the test value's repr when
        ``config.print_test_value`` is on and the variable has one (as Theano prints)."""
        from lowering.config import config
        text = value_text(self.value)
        if config.print_test_value and self.value in _TEST_VALUES:
            return f"{text}\n{_TEST_VALUES[self.value]!r}"
        return text

    # -- Python protocol guards -----------------------------------------------------------------

    # Theano 1.0: a variable is true (``if not W:`` tests for a missing one), except the result
    # of ``<``, ``<=``, ``>``, ``>=``, so that ``a < b < c`` (``(a < b) and (b < c)``) fails.
    _is_nonzero = True

    def __bool__(self):
        if self._is_nonzero:
            return True
        raise TypeError("Variables do not support boolean operations.")

    def __iter__(self):
        """The entries of a vector whose length the type knows (``a, b = x.shape``,
        ``list(x.shape[2:])``), as Theano iterates them; any other variable cannot be iterated."""
        length = self.value.type.shape[0] if self.ndim == 1 else None
        if length is None:
            raise TypeError(f"a symbolic variable ({self}) cannot be iterated: only a vector of "
                            f"known length (such as x.shape) can, and this one has type "
                            f"{self.value.type}; index it (x[i]) instead, or use T.sum/T.max "
                            f"rather than Python's sum/max")
        return (self[i] for i in range(length))

    def __len__(self):
        raise TypeError(f"len() of a symbolic variable ({self}) is unknown until the graph runs; "
                        f"use x.shape[0]")

    def __setitem__(self, key, value):
        raise TypeError("symbolic variables are immutable; use T.set_subtensor(x[key], value) or "
                        "T.inc_subtensor(x[key], value)")

    # -- arithmetic operators -------------------------------------------------------------------

    def __add__(self, other): return elemwise.add(self, other)
    def __radd__(self, other): return elemwise.add(other, self)
    def __sub__(self, other): return elemwise.sub(self, other)
    def __rsub__(self, other): return elemwise.sub(other, self)
    def __mul__(self, other): return elemwise.mul(self, other)
    def __rmul__(self, other): return elemwise.mul(other, self)
    def __truediv__(self, other): return elemwise.true_div(self, other)
    def __rtruediv__(self, other): return elemwise.true_div(other, self)
    def __floordiv__(self, other): return elemwise.int_div(self, other)
    def __rfloordiv__(self, other): return elemwise.int_div(other, self)
    def __mod__(self, other): return elemwise.mod(self, other)
    def __rmod__(self, other): return elemwise.mod(other, self)
    def __pow__(self, other): return elemwise.pow(self, other)
    def __rpow__(self, other): return elemwise.pow(other, self)
    def __neg__(self): return elemwise.neg(self)
    def __pos__(self): return self
    def __abs__(self): return elemwise.abs(self)
    def __matmul__(self, other): return linalg.dot(self, other)
    def __rmatmul__(self, other): return linalg.dot(other, self)

    # -- comparisons and logic (== and != stay identity, as in Theano) -----------------------------

    def __lt__(self, other): return _comparison(elemwise.lt(self, other))
    def __le__(self, other): return _comparison(elemwise.le(self, other))
    def __gt__(self, other): return _comparison(elemwise.gt(self, other))
    def __ge__(self, other): return _comparison(elemwise.ge(self, other))
    def __and__(self, other): return elemwise.and_(self, other)
    def __rand__(self, other): return elemwise.and_(other, self)
    def __or__(self, other): return elemwise.or_(self, other)
    def __ror__(self, other): return elemwise.or_(other, self)
    def __xor__(self, other): return elemwise.xor(self, other)
    def __rxor__(self, other): return elemwise.xor(other, self)
    def __invert__(self): return elemwise.invert(self)

    # -- complex numbers (Theano's properties and methods) --------------------------------------

    @property
    def real(self) -> "TensorVariable":
        return complex_numbers.real(self)

    @property
    def imag(self) -> "TensorVariable":
        return complex_numbers.imag(self)

    def conj(self) -> "TensorVariable":
        return complex_numbers.conj(self)

    conjugate = conj

    __hash__ = object.__hash__

    # -- methods --------------------------------------------------------------------------------

    def astype(self, dtype) -> "TensorVariable":
        """This variable cast to ``dtype`` (itself when it already has it)."""
        return elemwise.cast(self, dtype)

    def clip(self, a_min, a_max) -> "TensorVariable":
        return elemwise.clip(self, a_min, a_max)

    def dot(self, other) -> "TensorVariable":
        return linalg.dot(self, other)

    def sum(self, axis=None, dtype=None, keepdims=False, acc_dtype=None):
        return reductions.sum(self, axis=axis, dtype=dtype, keepdims=keepdims, acc_dtype=acc_dtype)

    def prod(self, axis=None, dtype=None, keepdims=False, acc_dtype=None):
        return reductions.prod(self, axis=axis, dtype=dtype, keepdims=keepdims, acc_dtype=acc_dtype)

    def mean(self, axis=None, dtype=None, keepdims=False, acc_dtype=None):
        return reductions.mean(self, axis=axis, dtype=dtype, keepdims=keepdims, acc_dtype=acc_dtype)

    def max(self, axis=None, keepdims=False):
        return reductions.max(self, axis=axis, keepdims=keepdims)

    def min(self, axis=None, keepdims=False):
        return reductions.min(self, axis=axis, keepdims=keepdims)

    def argmax(self, axis=None, keepdims=False):
        return reductions.argmax(self, axis=axis, keepdims=keepdims)

    def argmin(self, axis=None, keepdims=False):
        return reductions.argmin(self, axis=axis, keepdims=keepdims)

    def var(self, axis=None, ddof=0, keepdims=False):
        return reductions.var(self, axis=axis, ddof=ddof, keepdims=keepdims)

    def std(self, axis=None, ddof=0, keepdims=False):
        return reductions.std(self, axis=axis, ddof=ddof, keepdims=keepdims)

    def norm(self, L, axis=None, keepdims=False):
        """The ``L``-norm over ``axis`` (all axes by default)."""
        return reductions.norm(self, L, axis=axis, keepdims=keepdims)

    def reshape(self, shape, ndim=None) -> "TensorVariable":
        return shapes.reshape(self, shape, ndim=ndim)

    def dimshuffle(self, *pattern) -> "TensorVariable":
        """Permute dims and add broadcastable ones: ``x.dimshuffle(1, 'x', 0)``."""
        if len(pattern) == 1 and isinstance(pattern[0], (list, tuple)):
            pattern = tuple(pattern[0])
        return shapes.dimshuffle(self, pattern)

    def flatten(self, ndim=1) -> "TensorVariable":
        return shapes.flatten(self, ndim)

    def ravel(self) -> "TensorVariable":
        return shapes.flatten(self, 1)

    def transpose(self, *axes) -> "TensorVariable":
        if len(axes) == 1 and isinstance(axes[0], (list, tuple)):
            axes = tuple(axes[0])
        return shapes.transpose(self, axes or None)

    @property
    def T(self) -> "TensorVariable":
        return shapes.transpose(self)

    def squeeze(self) -> "TensorVariable":
        """Drop the broadcastable dims."""
        return shapes.squeeze(self)

    def zeros_like(self, dtype=None) -> "TensorVariable":
        return shapes.zeros_like(self, dtype)

    def ones_like(self, dtype=None) -> "TensorVariable":
        return shapes.ones_like(self, dtype)

    @property
    def shape(self) -> "TensorVariable":
        """The symbolic shape: an int64 vector; ``x.shape[0]`` is one size."""
        return shapes.shape(self)

    @property
    def size(self) -> "TensorVariable":
        """The number of elements, as an int64 scalar."""
        return reductions.prod(shapes.shape(self))

    def __getitem__(self, key) -> "TensorVariable":
        return indexing.getitem(self, key)

    # -- devices --------------------------------------------------------------------------------

    @property
    def target(self):
        """Where the user asked this variable to be: ``'cpu'`` unless it came from ``transfer``."""
        return "cpu"

    def transfer(self, target) -> "TensorVariable":
        """This variable on device ``target``: ``'cpu'``, or a GPU context (None is the default
        GPU context, as in Theano; ``'dev0'`` a context named by the ``contexts`` flag).

        The request is recorded on the returned variable (``.target``), which has the same value:
        the compiler keeps an output with a GPU target on the device instead of copying it back.
        ``transfer('cpu')`` of a host variable is the variable itself.
        """
        from .transfer import transfer
        return transfer(self, target)

    # -- evaluation -----------------------------------------------------------------------------

    def eval(self, inputs_to_values: dict | None = None):
        """Compile (once per set of inputs) and run the graph computing this variable.

        >>> from lowering.frontend.constructors import vector
        >>> x = vector("x")
        >>> (x * 2).eval({x: [1.0, 2.0]})
        array([2., 4.])
        """
        from lowering.compile import function
        inputs_to_values = dict(inputs_to_values or {})
        inputs = tuple(sorted(inputs_to_values, key=id))
        cache = self.__dict__.setdefault("_eval_functions", {})
        fn = cache.get(inputs)
        if fn is None:
            fn = cache[inputs] = function(list(inputs), self)
        return fn(*[inputs_to_values[v] for v in inputs])


class TensorConstant(TensorVariable, Constant):
    """A constant: the result of a ``tensor.constant`` op. ``data`` is its array.

    >>> from lowering.frontend.constructors import constant
    >>> c = constant([1.0, 2.0])
    >>> c.data, str(c)
    (array([1., 2.]), 'TensorConstant{[1. 2.]}')
    """

    @property
    def data(self) -> np.ndarray:
        return self.value.op.attributes["value"].array


# The operator methods above call into these modules; they import this one, so they come last.
from . import elemwise, indexing, linalg, reductions, shapes  # noqa: E402
from . import complex_numbers  # noqa: E402
