"""Theano's functions of complex numbers: ``real``, ``imag``, ``angle``, ``conj``, ``complex``
and ``complex_from_polar`` (``abs_`` and the arithmetic take complex tensors as they are).

Real tensors are complex numbers with a zero imaginary part, as in Theano and NumPy:
``real(x)`` and ``conj(x)`` are ``x``, ``imag(x)`` is zeros and ``angle(x)`` is 0 or pi.
``complex(a, b)`` promotes ``a`` and ``b`` to one float dtype first (integers to the float type
real functions compute in, float16 to float32: complex parts are f32 or f64) and refuses complex
operands.

>>> from lowering.frontend.constructors import fvector, zmatrix
>>> complex(fvector(), 1.0).dtype, real(zmatrix()).dtype, angle(fvector()).dtype
('complex64', 'float64', 'float32')
"""
from __future__ import annotations

from lowering.dialects.tensor.complex import (AngleOp, ComplexFromPolarOp, ComplexOp, ConjOp,
                                              ImagOp, RealOp)

from .build import apply
from .constructors import as_tensor_variable
from .elemwise import _operands, align, common_dtype, elementwise, float_dtype_for
from .errors import GraphTypeError
from .variable import TensorVariable


def _is_complex(x: TensorVariable) -> bool:
    return x.dtype.startswith("complex")


def real(z) -> TensorVariable:
    """The real part of ``z`` (``z`` itself when it is real)."""
    z = as_tensor_variable(z)
    return apply(RealOp, z, named=[z]) if _is_complex(z) else z


def imag(z) -> TensorVariable:
    """The imaginary part of ``z`` (zeros of ``z``'s dtype when it is real)."""
    from .shapes import zeros_like
    z = as_tensor_variable(z)
    return apply(ImagOp, z, named=[z]) if _is_complex(z) else zeros_like(z)


def angle(z) -> TensorVariable:
    """The argument of ``z`` in [-pi, pi] (of a real ``z``: 0, or pi where it is negative)."""
    z = as_tensor_variable(z)
    return apply(AngleOp, z, named=[z]) if _is_complex(z) else elementwise("arctan2", 0.0, z)


def conj(z) -> TensorVariable:
    """The complex conjugate of ``z`` (``z`` itself when it is real)."""
    z = as_tensor_variable(z)
    return apply(ConjOp, z, named=[z]) if _is_complex(z) else z


def _compose(op_class, name: str, a, b) -> TensorVariable:
    args = _operands((a, b))
    dtype = common_dtype(*args)
    if dtype.startswith("complex"):
        raise GraphTypeError(f"{name}: the parts of a complex number must be real, got {dtype}")
    dtype = float_dtype_for(dtype)
    if dtype == "float16":
        dtype = "float32"  # complex numbers have float32 or float64 parts
    return apply(op_class, *align(args, dtype),
                 named=[v for v in args if isinstance(v, TensorVariable)])


def complex(real_part, imag_part) -> TensorVariable:  # noqa: A001 - Theano's name
    """The complex numbers ``real_part + i imag_part``, elementwise with broadcasting.

    >>> from lowering.frontend.constructors import dvector
    >>> complex(dvector(), dvector()).dtype
    'complex128'
    """
    return _compose(ComplexOp, "complex", real_part, imag_part)


def complex_from_polar(abs, angle) -> TensorVariable:  # noqa: A002 - Theano's names
    """The complex numbers ``abs * (cos(angle) + i sin(angle))``, elementwise."""
    return _compose(ComplexFromPolarOp, "complex_from_polar", abs, angle)


conjugate = conj

__all__ = ["real", "imag", "angle", "conj", "conjugate", "complex", "complex_from_polar"]
