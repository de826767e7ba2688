"""Constraints on what an op's fields hold, in the style of MLIR's ODS and xDSL's irdl.

An op class says what each operand, result and attribute accepts, and the verifier checks it
before the op's own ``verify_``::

    T = ConstraintVar("T", TensorOf(AnyFloat))

    class AddOp(Operation):
        name = "tensor.add"
        lhs = operand(T)          # binds T to the lhs's type
        rhs = operand(T)          # must then be the very same type
        result = result(T)

A constraint checks one thing (a type, an attribute, a shape, an element type) against an
*environment* that holds the constraint variables bound so far in one op: ``ConstraintVar``
binds to the first value it meets and requires every later one to equal it, so sharing a
variable between fields says "same type"; putting one in ``TensorOf(element=E)`` says "same
element type", in ``TensorOf(shape=S)`` "same shape", in ``TensorOf(rank=R)`` "same rank".

>>> from lowering.ir.types import F32, F64, I32, TensorType
>>> x, y = TensorType((2,), F32), TensorType((3,), F32)
>>> E = ConstraintVar("E")
>>> env = {}
>>> TensorOf(element=E).check(x, env), TensorOf(element=E).check(y, env)
(True, True)
>>> TensorOf(element=E).check(TensorType((2,), F64), env)
False
>>> TensorOf(element=E).describe(env)
'a tensor of f32'
>>> AnyOf(Index, TensorOf(AnyInteger, rank=0)).describe({})
'index or a rank-0 tensor of integer'
"""
from __future__ import annotations

from typing import Any, Callable

from .attributes import ArrayAttr, Attribute, StringAttr, TypeAttr
from .types import FunctionType, ScalarType, TensorType, Type


class Constraint:
    """What a field (or a part of a type) must be.

    ``check(x, env)`` says whether ``x`` fits, binding constraint variables in ``env``;
    ``describe(env)`` says what fits, for the error (``"a tensor of float"``).
    """

    def check(self, x: Any, env: dict) -> bool:
        raise NotImplementedError

    def describe(self, env: dict) -> str:
        raise NotImplementedError

    def show(self, x: Any) -> str:
        """How the error names an offending ``x``."""
        return str(x)

    def __str__(self) -> str:
        return self.describe({})

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self}>"


def as_constraint(x: Any) -> Constraint:
    """A constraint as it is, anything else as ``Is(x)`` (``F32`` means "exactly f32").

    >>> as_constraint(3)
    <Is 3>
    """
    return x if isinstance(x, Constraint) else Is(x)


class _AnyType(Constraint):
    def check(self, x, env):
        return True

    def describe(self, env):
        return "any type"


AnyType = _AnyType()


class Is(Constraint):
    """Exactly this value: ``Is(INDEX)``, ``Is(1)``."""

    def __init__(self, value: Any):
        self.value = value

    def check(self, x, env):
        return x == self.value

    def describe(self, env):
        return str(self.value)


class TypeClass(Constraint):
    """An instance of a Python class (a kind of type or of attribute), named ``what``."""

    def __init__(self, cls: type | tuple, what: str | None = None):
        self.cls = cls
        self.what = what or (cls.__name__ if isinstance(cls, type)
                             else " or ".join(c.__name__ for c in cls))

    def check(self, x, env):
        return isinstance(x, self.cls)

    def describe(self, env):
        return self.what


class Where(Constraint):
    """``base`` and a predicate on the value, described by ``what``: the escape hatch for a
    property no other constraint says (``Where(AnyBuffer, lambda t: t.is_contiguous, ...)``)."""

    def __init__(self, base: Constraint, predicate: Callable[[Any], bool], what: str):
        self.base = base
        self.predicate = predicate
        self.what = what

    def check(self, x, env):
        return self.base.check(x, env) and bool(self.predicate(x))

    def describe(self, env):
        return self.what


class ScalarKind(Where):
    """A scalar element type of one kind."""

    def __init__(self, predicate: Callable[[ScalarType], bool], what: str):
        super().__init__(TypeClass(ScalarType, "a scalar"), predicate, what)


AnyScalar = TypeClass(ScalarType, "a scalar")
AnyFloat = ScalarKind(lambda t: t.is_float, "float")
AnyInteger = ScalarKind(lambda t: t.is_int, "integer")
Bool = Is(ScalarType("i1"))
Index = Is(ScalarType("index"))
AnyFunctionType = TypeClass(FunctionType, "a function type")


class AnyOf(Constraint):
    """One of several constraints (the first that fits binds its variables)."""

    def __init__(self, *options: Any):
        self.options = tuple(as_constraint(o) for o in options)

    def check(self, x, env):
        for option in self.options:
            trial = dict(env)
            if option.check(x, trial):
                env.update(trial)
                return True
        return False

    def describe(self, env):
        return " or ".join(o.describe(env) for o in self.options)


class ConstraintVar(Constraint):
    """A variable shared between fields: the first value that meets it (and fits ``base``)
    binds it, every later one must equal it.

    >>> from lowering.ir.types import F32, F64
    >>> T = ConstraintVar("T", AnyFloat)
    >>> env = {}
    >>> T.check(F32, env), T.check(F32, env), T.check(F64, env)
    (True, True, False)
    >>> T.describe(env), T.describe({})
    ('f32', 'float')
    """

    def __init__(self, name: str, base: Constraint = AnyType):
        self.name = name
        self.base = base

    def check(self, x, env):
        if self in env:
            return env[self] == x
        if not self.base.check(x, env):
            return False
        env[self] = x
        return True

    def describe(self, env):
        return str(env[self]) if self in env else self.base.describe(env)

    def __repr__(self) -> str:
        return f"<ConstraintVar {self.name}>"


class ShapedOf(Constraint):
    """A shaped type (``cls`` with ``shape``, ``rank`` and ``element``) whose element type,
    rank and shape fit the given constraints; ``what`` names the kind (``"tensor"``)."""

    def __init__(self, cls: type, what: str, element: Any = AnyType, rank: Any = None,
                 shape: Any = None, sparse: bool = False):
        self.cls = cls
        self.what = what
        self.element = as_constraint(element)
        self.rank = None if rank is None else as_constraint(rank)
        self.shape = None if shape is None else as_constraint(shape)
        # Whether the type must have a sparse encoding (True) or must not (False): an op written
        # for dense tensors never receives a sparse one by mistake.
        self.sparse = sparse

    def check(self, x, env):
        return (isinstance(x, self.cls)
                and (getattr(x, "encoding", None) is not None) == self.sparse
                and self.element.check(x.element, env)
                and (self.rank is None or self.rank.check(x.rank, env))
                and (self.shape is None or self.shape.check(x.shape, env)))

    def describe(self, env):
        text = self.what
        if self.rank is not None and (isinstance(self.rank, Is) or self.rank in env):
            text = f"rank-{self.rank.describe(env)} {text}"
        if not _says_nothing(self.element, env):
            text += f" of {self.element.describe(env)}"
        if isinstance(self.shape, ConstraintVar) and self.shape in env:
            dims = "x".join("?" if d is None else str(d) for d in env[self.shape])
            text += f" of shape {dims or '()'}"
        return ("an " if text[0] in "aeiou" else "a ") + text


def _says_nothing(constraint: Constraint, env: dict) -> bool:
    unbound = isinstance(constraint, ConstraintVar) and constraint not in env
    return constraint is AnyType or (unbound and constraint.base is AnyType)


def TensorOf(element: Any = AnyType, rank: Any = None, shape: Any = None) -> ShapedOf:
    """A ranked tensor type whose element type (and rank, shape) fit.

    >>> from lowering.ir.types import F32, I64, TensorType
    >>> TensorOf(I64, rank=1).check(TensorType((3,), I64), {}), str(TensorOf(AnyFloat))
    (True, 'a tensor of float')
    """
    return ShapedOf(TensorType, "tensor", element, rank, shape)


def SparseTensorOf(element: Any = AnyType, shape: Any = None) -> ShapedOf:
    """A sparse (encoded, rank-2) tensor type whose element type (and shape) fit; dense tensors
    do not fit it, and sparse ones fit no ``TensorOf``.

    >>> from lowering.ir.types import CSR, F64, TensorType
    >>> sparse = TensorType((None, None), F64, CSR)
    >>> SparseTensorOf(F64).check(sparse, {}), TensorOf(F64).check(sparse, {})
    (True, False)
    >>> str(SparseTensorOf(F64))
    'a rank-2 sparse tensor of f64'
    """
    return ShapedOf(TensorType, "sparse tensor", element, 2, shape, sparse=True)


AnyTensor = TensorOf()
AnySparseTensor = SparseTensorOf()


# ---------------------------------------------------------------------------------------------
# Attributes


class EnumAttr(Constraint):
    """A string attribute holding one of ``values``."""

    def __init__(self, values: tuple[str, ...]):
        self.values = tuple(values)

    def check(self, x, env):
        return isinstance(x, StringAttr) and x.value in self.values

    def describe(self, env):
        return "one of " + ", ".join(self.values)

    def show(self, x):
        return repr(x.value) if isinstance(x, StringAttr) else str(x)


class ArrayAttrOf(Constraint):
    """An array attribute each of whose entries fits ``element`` (an Attribute class or a
    constraint): ``ArrayAttrOf(IntAttr)``."""

    def __init__(self, element: Any):
        self.element = attribute_constraint(element)

    def check(self, x, env):
        return isinstance(x, ArrayAttr) and all(self.element.check(e, env) for e in x.data)

    def describe(self, env):
        return f"an array of {self.element.describe(env)}"


class TypeAttrOf(Constraint):
    """A type attribute whose type fits ``type`` (``TypeAttrOf(AnyFunctionType)``)."""

    def __init__(self, type: Constraint):
        self.type = type

    def check(self, x, env):
        return isinstance(x, TypeAttr) and self.type.check(x.value, env)

    def describe(self, env):
        return self.type.describe(env)

    def show(self, x):
        return str(x.value) if isinstance(x, TypeAttr) else str(x)


def attribute_constraint(kind: Any) -> Constraint:
    """What ``attr(kind)`` means: a constraint as it is, an Attribute class (or a tuple of them)
    as "an instance of it"."""
    if isinstance(kind, Constraint):
        return kind
    return TypeClass(kind)


def type_constraint(kind: Any) -> Constraint:
    """What ``operand(kind)``/``result(kind)`` means: a constraint as it is, a Type as ``Is``,
    a Type class as "an instance of it"."""
    if isinstance(kind, Constraint):
        return kind
    if isinstance(kind, type) and issubclass(kind, (Type, Attribute)):
        return TypeClass(kind)
    return Is(kind)
