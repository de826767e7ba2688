"""Making variables: inputs of each rank and dtype, constants, and conversions of Python values.

``scalar, vector, matrix, row, col, tensor3 ... tensor7`` take ``(name=None, dtype=None)``, where
``dtype`` defaults to ``config.floatX``; the prefixed forms fix the dtype, as Theano's do:
``b`` int8, ``w`` int16, ``i`` int32, ``l`` int64, ``f`` float32, ``d`` float64 (``fmatrix``,
``ivector``, ``lscalar``, ...) and are, as in Theano, ``TensorType`` instances: calling one makes
a variable, and ``x.type == T.fmatrix`` compares types. The plural forms make several at once
(``x, y = fscalars('x', 'y')``, ``a, b = dscalars('ab')``).

>>> x = matrix("x")
>>> str(x.type), str(fmatrix().type), str(col(dtype="int8").type)
('TensorType(float64, matrix)', 'TensorType(float32, matrix)', 'TensorType(int8, col)')
>>> str(tensor("float32", (False, True, False)).type)
'TensorType(float32, (False, True, False))'
"""
from __future__ import annotations

import numpy as np

from lowering.config import config
from lowering.dialects.tensor import ConstantOp

from .types import TensorType, canonical_dtype
from .variable import TensorConstant, TensorVariable, Variable, new_input, wrap

# Broadcastable patterns of the named ranks.
PATTERNS = {
    "scalar": (), "vector": (False,), "matrix": (False, False), "row": (True, False),
    "col": (False, True), "tensor3": (False,) * 3, "tensor4": (False,) * 4,
    "tensor5": (False,) * 5, "tensor6": (False,) * 6, "tensor7": (False,) * 7,
}
PLURALS = {"scalar": "scalars", "vector": "vectors", "matrix": "matrices", "row": "rows",
           "col": "cols", "tensor3": "tensor3s", "tensor4": "tensor4s", "tensor5": "tensor5s",
           "tensor6": "tensor6s", "tensor7": "tensor7s"}
PREFIXES = {"b": "int8", "w": "int16", "i": "int32", "l": "int64", "f": "float32", "d": "float64",
            "c": "complex64", "z": "complex128"}


def tensor(dtype=None, broadcastable=None, name: str | None = None, shape=None) -> TensorVariable:
    """An input of any rank: ``tensor('float32', (False, True))`` or with static sizes,
    ``tensor('float64', shape=(3, None))``. ``dtype`` defaults to ``config.floatX``.

    >>> str(tensor(shape=(3, None)).value.type)
    'tensor<3x?xf64>'
    """
    return new_input(TensorType(dtype or config.floatX, broadcastable, shape=shape), name)


def _named(kind: str, fixed_dtype: str | None):
    """The singular and plural constructors of ``kind``: with a fixed dtype the singular one is a
    ``TensorType`` (``T.fmatrix``, which Theano programs also compare types with), else a
    function taking ``dtype``."""
    pattern = PATTERNS[kind]
    prefix = next((p for p, d in PREFIXES.items() if d == fixed_dtype), "")
    if fixed_dtype is not None:
        make = TensorType.interned(fixed_dtype, pattern)
    else:
        def make(name: str | None = None, dtype=None) -> TensorVariable:
            return tensor(dtype or config.floatX, pattern, name)

        make.__name__ = kind
        make.__doc__ = f"A new {kind} input (dtype floatX unless given, broadcastable {pattern})."

    def make_many(*names, dtype=None):
        if fixed_dtype is not None and dtype is not None and canonical_dtype(dtype) != fixed_dtype:
            raise TypeError(f"{make_many.__name__} makes {fixed_dtype} variables; got "
                            f"dtype={dtype!r}")
        one = make if fixed_dtype is not None else (lambda n=None: make(n, dtype))
        return plural_variables(one, names)

    make_many.__name__ = prefix + PLURALS[kind]
    make_many.__doc__ = (f"Several {kind} inputs, as Theano's ``_multi`` makes them: one per "
                         f"name, ``n`` unnamed ones for an integer, one per character of a lone "
                         f"string of several characters, and a single variable for a lone "
                         f"one-character name.")
    return prefix + kind, make, make_many


def plural_variables(make, names: tuple):
    """What Theano's plural constructors (``scalars``, ``fmatrices``, ...) return for ``names``.

    An integer ``n`` gives a list of ``n`` unnamed variables; a lone argument (a string or a
    list) is taken apart, so ``'abc'`` gives three variables ``a``, ``b``, ``c``; whatever has
    one element left gives a single variable, not a list.

    >>> [v.name for v in plural_variables(TensorType("float64", ()), ("ab",))]
    ['a', 'b']
    >>> plural_variables(TensorType("float64", ()), ("x",)).name
    'x'
    """
    if names and isinstance(names[0], int) and not isinstance(names[0], bool):
        return [make() for _ in range(names[0])]
    if len(names) == 1:
        names = names[0]
    if len(names) == 1:
        return make(names if isinstance(names, str) else names[0])
    return [make(name) for name in names]


_CONSTRUCTORS: dict = {}
for _kind in PATTERNS:
    for _prefix, _dtype in [("", None), *PREFIXES.items()]:
        _name, _one, _many = _named(_kind, _dtype)
        _CONSTRUCTORS[_name] = _one
        _CONSTRUCTORS[_many.__name__] = _many
globals().update(_CONSTRUCTORS)
del _kind, _prefix, _dtype, _name, _one, _many

# Explicit names for readers and linters (the loop above made them).
scalar, vector, matrix, row, col = (_CONSTRUCTORS[k] for k in ("scalar", "vector", "matrix", "row", "col"))
tensor3, tensor4, tensor5 = _CONSTRUCTORS["tensor3"], _CONSTRUCTORS["tensor4"], _CONSTRUCTORS["tensor5"]
fmatrix, dmatrix, imatrix, lmatrix = (_CONSTRUCTORS[k] for k in ("fmatrix", "dmatrix", "imatrix", "lmatrix"))
fvector, dvector, ivector, lvector = (_CONSTRUCTORS[k] for k in ("fvector", "dvector", "ivector", "lvector"))
fscalar, dscalar, iscalar, lscalar = (_CONSTRUCTORS[k] for k in ("fscalar", "dscalar", "iscalar", "lscalar"))


def constructor_names() -> list[str]:
    """Every constructor this module makes (``scalar`` ... ``ltensor7s``)."""
    return sorted(_CONSTRUCTORS)


__all__ = constructor_names() + ["tensor", "constant", "as_tensor_variable", "as_tensor"]


# ---------------------------------------------------------------------------------------------
# Constants and conversions


def python_scalar_dtype(x) -> str:
    """The dtype a Python scalar gets on its own: bool, int64, floatX for floats, complex128
    for complex numbers (complex64 when floatX is float32).

    >>> python_scalar_dtype(True), python_scalar_dtype(3), python_scalar_dtype(0.5)
    ('bool', 'int64', 'float64')
    """
    if isinstance(x, bool):
        return "bool"
    if isinstance(x, int):
        return "int64" if -2 ** 63 <= x < 2 ** 63 else "uint64"
    if isinstance(x, float):
        return config.floatX
    if isinstance(x, complex):
        return "complex64" if config.floatX == "float32" else "complex128"
    raise TypeError(f"not a Python scalar: {x!r}")


def as_array(x, dtype=None) -> np.ndarray:
    """Python or NumPy data as an array; Python floats take ``floatX`` unless ``dtype`` is given."""
    if dtype is not None:
        return np.asarray(x, dtype=canonical_dtype(dtype))
    if isinstance(x, (bool, int, float, complex)) and not isinstance(x, np.generic):
        # (numpy.float64 is a Python float, but NumPy scalars keep their own dtype)
        return np.asarray(x, dtype=python_scalar_dtype(x))
    if isinstance(x, Variable):
        raise TypeError(f"{x!r} is a Variable made directly (Variable(type)), of type "
                        f"{x.type!r}: ops take tensor variables (T.matrix(), shared(), ...)")
    arr = np.asarray(x)
    if arr.dtype == object:
        if getattr(getattr(getattr(x, "value", None), "type", None), "encoding", None):
            raise TypeError(f"the sparse variable {x} cannot be used as a dense tensor; convert "
                            f"it with theano.sparse.dense_from_sparse, or use theano.sparse's "
                            f"operations")
        raise TypeError(f"cannot make a tensor constant from {type(x).__name__} data ({x!r}); "
                        f"mixing symbolic variables into lists needs T.stack")
    canonical_dtype(arr.dtype)  # reject strings, long doubles, ...
    return arr


def constant(x, name: str | None = None, ndim: int | None = None, dtype=None) -> TensorConstant:
    """A constant variable holding ``x`` (``ndim`` pads the shape with leading broadcastable dims).

    >>> c = constant(2.0, ndim=2)
    >>> c.data.shape, str(c.type)
    ((1, 1), 'TensorType(float64, (True, True))')
    """
    arr = as_array(x, dtype)
    if ndim is not None:
        if arr.ndim > ndim:
            raise ValueError(f"constant of shape {arr.shape} has more than ndim={ndim} dims")
        arr = arr.reshape((1,) * (ndim - arr.ndim) + arr.shape)
    var = wrap(ConstantOp.build(arr).result)
    if name is not None:
        var.name = name
    return var


def as_tensor_variable(x, name: str | None = None, ndim: int | None = None) -> TensorVariable:
    """``x`` as a variable: variables pass through, Python and NumPy data become constants and a
    list of variables is stacked.

    >>> v = vector()
    >>> as_tensor_variable(v) is v, as_tensor_variable([1, 2]).dtype
    (True, 'int64')
    """
    if isinstance(x, TensorVariable):
        if ndim is not None and x.ndim != ndim:
            if x.ndim < ndim or not all(x.broadcastable[: x.ndim - ndim]):
                raise TypeError(f"{x} has rank {x.ndim}, not {ndim}")
            from .shapes import dimshuffle
            x = dimshuffle(x, tuple(range(x.ndim - ndim, x.ndim)))
        return x
    if isinstance(x, (list, tuple)) and any(isinstance(e, TensorVariable) for e in x):
        from .shapes import stack
        return stack(list(x))
    return constant(x, name=name, ndim=ndim)


as_tensor = as_tensor_variable
