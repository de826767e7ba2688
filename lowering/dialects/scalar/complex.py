"""The scalar functions of complex numbers: parts, conjugate, and complex numbers from parts.

Arithmetic (``add``, ``sub``, ``mul``, ``div``, ``neg``, ``sqr``), ``exp`` and ``abs`` take
complex operands too (their ``complex_result`` says so); the functions here exist only for
complex numbers. ``complex`` and ``complex_from_polar`` make a ``complex<f32>`` from two ``f32``
(``complex<f64>`` from two ``f64``); ``real``, ``imag`` and ``angle`` give the parts' type.

>>> import numpy as np
>>> from lowering.ir.types import C64, F64
>>> str(RealOp.result_element([C64])), str(ComplexOp.result_element([F64, F64]))
('f32', 'complex<f64>')
>>> ComplexOp.evaluate(np.float64(1.0), np.float64(np.inf))
np.complex128(1+infj)
"""
from __future__ import annotations

import numpy as np

from lowering.ir.core import register_op

from .ops import BinaryOp, UnaryOp


def compose(real, imag):
    """The complex numbers ``real + i imag``, each part kept as it is (``1j * inf`` would make
    the real part NaN)."""
    real, imag = np.broadcast_arrays(np.asarray(real), np.asarray(imag))
    out = np.empty(real.shape, dtype=np.result_type(real.dtype, np.complex64))
    out.real, out.imag = real, imag
    return out


def from_polar(r, theta):
    """``r (cos theta + i sin theta)``."""
    return compose(r * np.cos(theta), r * np.sin(theta))


def _define(base, short: str, class_name: str, kind: str, numpy_fn, doc: str):
    cls = type(class_name, (base,), {
        "name": f"scalar.{short}", "kind": kind, "numpy_fn": staticmethod(numpy_fn),
        "is_differentiable": True, "__doc__": doc, "__module__": __name__})
    return register_op(cls)


RealOp = _define(UnaryOp, "real", "RealOp", "complex_part", np.real, "The real part of z.")
ImagOp = _define(UnaryOp, "imag", "ImagOp", "complex_part", np.imag, "The imaginary part of z.")
AngleOp = _define(UnaryOp, "angle", "AngleOp", "complex_part", np.angle,
                  "The argument of z, arctan2(imag(z), real(z)), in [-pi, pi].")
ConjOp = _define(UnaryOp, "conj", "ConjOp", "complex_same", np.conjugate,
                 "The complex conjugate real(z) - i imag(z).")
ComplexOp = _define(BinaryOp, "complex", "ComplexOp", "complex_of", compose,
                    "The complex number x + i y.")
ComplexFromPolarOp = _define(BinaryOp, "complex_from_polar", "ComplexFromPolarOp", "complex_of",
                             from_polar, "The complex number r (cos theta + i sin theta).")

# Short name -> class, for the functions of this module (the tensor dialect mirrors them).
COMPLEX_OPS = {cls.short: cls for cls in (RealOp, ImagOp, AngleOp, ConjOp, ComplexOp,
                                          ComplexFromPolarOp)}

__all__ = ["COMPLEX_OPS", "RealOp", "ImagOp", "AngleOp", "ConjOp", "ComplexOp",
           "ComplexFromPolarOp", "compose", "from_polar"]
