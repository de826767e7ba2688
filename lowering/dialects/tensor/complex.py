"""Elementwise tensor ops of complex numbers, and the gradients of complex arithmetic.

``tensor.real``, ``tensor.imag``, ``tensor.angle``, ``tensor.conj``, ``tensor.complex`` and
``tensor.complex_from_polar`` apply the scalar functions of ``scalar/complex.py`` with
broadcasting, as every elementwise op does.

Gradients follow Theano's convention for a real cost ``C`` of complex values: the gradient with
respect to ``z`` is ``dC/d(real z) + i dC/d(imag z)`` (so ``real`` sends ``gz`` back as
``complex(gz, 0)`` and ``imag`` as ``complex(0, gz)``, as Theano's ``Real.grad`` and
``Imag.grad`` do). For a holomorphic ``w = f(z)`` that makes the gradient
``conj(f'(z)) * gw``: ``mul``, ``div``, ``exp`` and ``sqr`` have such rules
(``complex_partials``), and ``add``, ``sub`` and ``neg`` need none of their own; ``prod``
conjugates its factor with ``tensor.conj`` (``ProdOp.conjugate``).

>>> from lowering.ir.core import Block
>>> from lowering.ir.types import C64, F32, TensorType
>>> z, = Block([TensorType((None, 3), C64)]).args
>>> str(AbsOp.build(z).result.type), str(RealOp.build(z).result.type)
('tensor<?x3xf32>', 'tensor<?x3xf32>')
>>> x, = Block([TensorType((3,), F32)]).args
>>> str(ComplexOp.build(x, x).result.type)
'tensor<3xcomplex<f32>>'
"""
from __future__ import annotations

from lowering.dialects import scalar
from lowering.ir.core import register_op

from .elementwise import (ELEMENTWISE_OPS, AbsOp, BinaryElementwiseOp, CastOp, DivOp, ExpOp,
                          MulOp, SqrOp, UnaryElementwiseOp, _define)
from .reduction import ProdOp


def _op(cls, emit, *operands):
    return cls.build(*operands, location=emit.location).result


def conj(emit, z):
    return _op(ConjOp, emit, z)


def as_complex(emit, real):
    """``complex(real, 0)``, of the complex type with ``real``'s parts."""
    return _op(ComplexOp, emit, real, emit.zeros_like(real))


def _angle_partial(e, gz, z, theta):
    x, y = _op(RealOp, e, z), _op(ImagOp, e, z)
    scale = e.div(gz, e.add(e.sqr(x), e.sqr(y)))      # d theta = (x dy - y dx) / |z|^2
    return _op(ComplexOp, e, e.neg(e.mul(scale, y)), e.mul(scale, x))


def _from_polar_partials(e, gz, r, theta, z):
    gr, gi = _op(RealOp, e, gz), _op(ImagOp, e, gz)
    cos, sin = e.cos(theta), e.sin(theta)
    return (e.add(e.mul(gr, cos), e.mul(gi, sin)),
            e.mul(r, e.sub(e.mul(gi, cos), e.mul(gr, sin))))


RealOp = _define(UnaryElementwiseOp, scalar.RealOp,
                 lambda e, gz, z, y: _op(ComplexOp, e, gz, e.zeros_like(gz)))
ImagOp = _define(UnaryElementwiseOp, scalar.ImagOp,
                 lambda e, gz, z, y: _op(ComplexOp, e, e.zeros_like(gz), gz))
AngleOp = _define(UnaryElementwiseOp, scalar.AngleOp, _angle_partial)
ConjOp = _define(UnaryElementwiseOp, scalar.ConjOp, lambda e, gz, z, y: conj(e, gz))
ComplexOp = _define(BinaryElementwiseOp, scalar.ComplexOp,
                    lambda e, gz, x, y, z: (_op(RealOp, e, gz), _op(ImagOp, e, gz)))
ComplexFromPolarOp = _define(BinaryElementwiseOp, scalar.ComplexFromPolarOp, _from_polar_partials)

# Short name -> class, for the ops of this module.
COMPLEX_ELEMENTWISE_OPS = {cls.short: cls for cls in (RealOp, ImagOp, AngleOp, ConjOp, ComplexOp,
                                                      ComplexFromPolarOp)}
assert not set(COMPLEX_ELEMENTWISE_OPS) & set(ELEMENTWISE_OPS)
for _cls in COMPLEX_ELEMENTWISE_OPS.values():
    _cls.__module__ = __name__  # defined here, by the helper of elementwise.py


# ---------------------------------------------------------------------------------------------
# Complex partials of the arithmetic ops: conj(f'(z)) * gz.

def _mul(e, gz, x, y, z):
    return e.mul(gz, conj(e, y)), e.mul(gz, conj(e, x))


def _div(e, gz, x, y, z):
    conj_y = conj(e, y)
    return e.div(gz, conj_y), e.neg(e.div(e.mul(gz, conj(e, z)), conj_y))


def _abs(e, gz, x, y):  # gz * x / |x| (Theano's formula; NaN at 0, as Theano's)
    return e.mul(as_complex(e, e.div(gz, y)), x)


_COMPLEX_PARTIALS = {
    MulOp: _mul,
    DivOp: _div,
    ExpOp: lambda e, gz, x, y: e.mul(gz, conj(e, y)),
    SqrOp: lambda e, gz, x, y: e.mul(gz, conj(e, e.mul(x, e.const(2, x)))),
    AbsOp: _abs,
    # a real tensor cast to complex: only the real part's gradient flows back
    CastOp: lambda e, gz, x, y: _op(RealOp, e, gz),
}
for _cls, _rule in _COMPLEX_PARTIALS.items():
    _cls.complex_partials = staticmethod(_rule)
del _cls, _rule
ProdOp.conjugate = staticmethod(lambda value, location: ConjOp.build(value,
                                                                     location=location).result)

__all__ = ["COMPLEX_ELEMENTWISE_OPS", "RealOp", "ImagOp", "AngleOp", "ConjOp", "ComplexOp",
           "ComplexFromPolarOp", "conj", "as_complex"]
