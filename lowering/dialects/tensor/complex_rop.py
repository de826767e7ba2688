"""Forward-mode rules (``R_OP``) of elementwise ops on complex numbers.

A tangent ``dz`` of a complex value is itself complex, and every function here is real-linear
in it. The partials that the gradient rules give follow Theano's convention for complex numbers
(``tensor/complex.py``): with an output gradient of ones, a function ``w = f(z)`` gives
``conj(f'(z))`` when it is holomorphic, and ``df/dx + i df/dy`` when it is real-valued. So:

- a holomorphic function (``add``, ``sub``, ``neg``, ``mul``, ``div``, ``exp``, ``sqr``, and
  ``select`` between complex values) has the tangent ``sum_i conj(p_i) * dz_i``, which is
  ``f'(z) dz``;
- a real-valued function of complex numbers (``abs``, ``real``, ``imag``, ``angle``) has
  ``real(conj(p) * dz)``: ``d|z| = real(conj(z) dz) / |z|``, ``d real(z) = real(dz)``,
  ``d imag(z) = imag(dz)``, ``d angle(z) = imag(conj(z) dz) / |z|^2``;
- ``conj`` and ``complex(x, y)`` are real-linear: ``conj(dz)`` and ``complex(dx, dy)``;
- ``complex_from_polar(r, theta)``: ``complex_from_polar(dr, theta) + i w dtheta``.

Any other elementwise op meeting a complex value has no forward rule, and says so.

>>> from lowering.ir.core import Block
>>> from lowering.ir.types import C128, TensorType
>>> from .rop import R_OP
>>> z, v = Block([TensorType((3,), C128), TensorType((3,), C128)]).args
>>> op = AbsOp.build(z)
>>> (t,) = R_OP.lookup(op)(op, [v])
>>> str(t.type)
'tensor<3xf64>'
"""
from __future__ import annotations

from lowering.ir.core import VerifyError

from .complex import AngleOp, ComplexFromPolarOp, ComplexOp, ConjOp, ImagOp, RealOp
from .elementwise import (AbsOp, AddOp, DivOp, ElementwiseOp, Emitter, ExpOp, MulOp, NegOp,
                          SelectOp, SqrOp, SubOp)
from .gradutil import is_differentiable_type

# Functions whose tangent comes from their (conjugated) partials, as the module docstring says.
HOLOMORPHIC = (AddOp, SubOp, NegOp, MulOp, DivOp, ExpOp, SqrOp, SelectOp)
REAL_VALUED = (AbsOp, RealOp, ImagOp, AngleOp)


def is_complex(value) -> bool:
    return bool(getattr(getattr(value.type, "element", None), "is_complex", False))


def complex_elementwise(op: ElementwiseOp, tangents, as_result) -> list:
    """The tangent of an elementwise op with a complex operand or result, from its partials
    (``as_result`` brings it to the result's shape and type)."""
    if op.partials is None or not is_differentiable_type(op.result.type):
        return [None]
    if not isinstance(op, HOLOMORPHIC + REAL_VALUED):
        raise VerifyError(f"Rop: {op.name} (built at {op.location.short()}) has no "
                          f"forward-mode derivative for complex numbers", op)
    emit = Emitter(op.location)
    partials = op.partials
    if op.complex_partials is not None and any(is_complex(v) for v in op.operands):
        partials = op.complex_partials
    parts = partials(emit, emit.const(1, op.result), *op.operands, op.result)
    parts = parts if isinstance(parts, (tuple, list)) else (parts,)
    total = None
    for part, tangent, operand in zip(parts, tangents, op.operands):
        if part is None or tangent is None or not is_differentiable_type(operand.type):
            continue
        if is_complex(part):
            part = ConjOp.build(part, location=op.location).result
        term = emit.mul(part, tangent)
        total = term if total is None else emit.add(total, term)
    if total is None:
        return [None]
    if is_complex(total) and not is_complex(op.result):
        total = RealOp.build(total, location=op.location).result
    return [as_result(total, op.result, op.location)]


def from_polar(op: ComplexFromPolarOp, tangents, as_result) -> list:
    """``complex_from_polar(dr, theta) + w * complex(0, dtheta)``."""
    (dr, dtheta), loc = tangents, op.location
    r, theta = op.operands
    terms = []
    if dr is not None:
        terms.append(ComplexFromPolarOp.build(dr, theta, location=loc).result)
    if dtheta is not None:
        zero = Emitter(loc).zeros_like(dtheta)
        turn = ComplexOp.build(zero, dtheta, location=loc).result
        terms.append(MulOp.build(op.result, turn, location=loc).result)
    total = terms[0] if len(terms) == 1 else AddOp.build(*terms, location=loc).result
    return [as_result(total, op.result, loc)]
