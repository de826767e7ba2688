"""Special functions of ``theano.tensor``: ``T.erfc``, ``T.gammaln``, ``T.gamma``, ``T.psi``,
``T.tri_gamma``, ``T.j0`` and ``T.j1``.

``erfc``, ``gammaln``, ``gamma``, ``j0`` and ``j1`` are elementwise ops of their own (compiled as
calls of the C library's functions: CPU only); ``psi`` and ``tri_gamma`` are compositions of
elementwise ops (recurrence, asymptotic series and reflection), as the gradients of the gamma
functions are. Integers compute in a float type, as Theano's ``upgrade_to_float``.

>>> import lowering.tensor as T
>>> x = T.dvector("x")
>>> gammaln(x).eval({x: [1.0, 5.0]}), erfc(x).eval({x: [0.0]})
(array([0.        , 3.17805383]), array([1.]))
>>> psi(x).eval({x: [1.0]})
array([-0.57721566])
"""
from __future__ import annotations

import numpy as np

from lowering.dialects.tensor import ErfcOp, GammaLnOp, GammaOp, J0Op, J1Op
from lowering.dialects.tensor.elementwise import Emitter
from lowering.dialects.tensor.special_functions import digamma, trigamma
from lowering.ir.location import caller_location

from .build import apply
from .constructors import as_tensor_variable
from .elemwise import cast, float_dtype_for
from .errors import GraphTypeError
from .variable import TensorVariable, wrap


def as_real_float(x, name: str) -> TensorVariable:
    """``x`` as a tensor of the float type ``name`` computes in; complex numbers are refused."""
    x = as_tensor_variable(x)
    if np.dtype(x.dtype).kind == "c":
        raise GraphTypeError(f"{name}: complex numbers are not supported, got {x} of type "
                             f"{x.type}")
    return cast(x, float_dtype_for(x.dtype))


def _special(op_class, name: str, doc: str):
    def fn(a) -> TensorVariable:
        x = as_real_float(a, name)
        return apply(op_class, x, named=[x])
    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = doc
    return fn


erfc = _special(ErfcOp, "erfc", "The complementary error function ``1 - erf(x)``, accurate "
                                "where it is tiny.")
gammaln = _special(GammaLnOp, "gammaln", "``log(|gamma(x)|)``; +inf at the poles.")
gamma = _special(GammaOp, "gamma", "The gamma function; ±inf at ±0, NaN at negative integers.")
j0 = _special(J0Op, "j0", "The Bessel function of the first kind of order 0.")
j1 = _special(J1Op, "j1", "The Bessel function of the first kind of order 1.")


def psi(a) -> TensorVariable:
    """The digamma function ``d/dx log(gamma(x))`` (SciPy's ``psi``; NaN at negative
    integers); its gradient is ``tri_gamma``."""
    x = as_real_float(a, "psi")
    return wrap(digamma(Emitter(caller_location()), x.value))


def tri_gamma(a) -> TensorVariable:
    """The trigamma function, the derivative of ``psi`` (+inf at the poles).

    >>> import lowering.tensor as T
    >>> round(float(tri_gamma(T.constant(1.0)).eval()), 12)  # pi**2 / 6
    1.644934066848
    """
    x = as_real_float(a, "tri_gamma")
    return wrap(trigamma(Emitter(caller_location()), x.value))
