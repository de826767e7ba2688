"""Floor division, modulo and integer powers with NumPy's results, and never a trap.

Integers (Python's signs: the quotient rounds toward -inf, the remainder has the divisor's sign):
``x // 0`` and ``x % 0`` are 0; ``INT_MIN // -1`` wraps to ``INT_MIN``. LLVM's ``sdiv`` is
undefined (and traps on x86) in both cases, so the divisor is replaced by 1 there first and the
result chosen with a select.

Floats follow NumPy's ``npy_divmod``: ``fmod``, then the quotient ``(a - mod) / b`` adjusted to
the remainder's sign and snapped to the nearest integer; ``x // 0`` is ``x / 0`` and ``x % 0`` is
NaN.

Integer ``x ** y`` multiplies by squaring in a short loop over the bits of ``y`` (quick to
compile; a loop around it does not vectorize, which integer powers rarely need); a negative
``y`` gives ``1 // x ** -y`` truncated: 1 for ``x == 1``, ``+-1`` for ``x == -1``, else 0.

>>> import llvmlite.ir as ir
>>> module = ir.Module()
>>> i8 = ir.IntType(8)
>>> fn = ir.Function(module, ir.FunctionType(i8, [i8, i8]), "f")
>>> builder = ir.IRBuilder(fn.append_basic_block())
>>> _ = builder.ret(int_floordiv_mod(builder, *fn.args, signed=True)[0])
>>> "sdiv i8" in str(module)
True
"""
from __future__ import annotations

import llvmlite.ir as ir


def int_floordiv_mod(builder: ir.IRBuilder, a: ir.Value, b: ir.Value,
                     signed: bool) -> tuple[ir.Value, ir.Value]:
    """``(a // b, a % b)`` for integers of one type."""
    ty = a.type
    zero, one = ir.Constant(ty, 0), ir.Constant(ty, 1)
    by_zero = builder.icmp_unsigned("==", b, zero)
    if not signed:
        safe = builder.select(by_zero, one, b)
        q, r = builder.udiv(a, safe), builder.urem(a, safe)
        return builder.select(by_zero, zero, q), builder.select(by_zero, zero, r)
    minus_one = ir.Constant(ty, -1)
    by_minus_one = builder.icmp_signed("==", b, minus_one)
    safe = builder.select(builder.or_(by_zero, by_minus_one), one, b)
    q, r = builder.sdiv(a, safe), builder.srem(a, safe)
    # C truncates toward zero; Python floors: step down when the remainder's sign differs.
    adjust = builder.and_(builder.icmp_signed("!=", r, zero),
                          builder.icmp_signed("<", builder.xor(r, b), zero))
    q = builder.select(adjust, builder.sub(q, one), q)
    r = builder.select(adjust, builder.add(r, b), r)
    q = builder.select(by_minus_one, builder.sub(zero, a), q)  # wraps for INT_MIN
    return builder.select(by_zero, zero, q), builder.select(by_zero, zero, r)


def _intrinsic(builder: ir.IRBuilder, name: str, ty: ir.Type, nargs: int) -> ir.Function:
    return builder.module.declare_intrinsic(name, [ty], ir.FunctionType(ty, [ty] * nargs))


def float_floordiv_mod(builder: ir.IRBuilder, a: ir.Value,
                       b: ir.Value) -> tuple[ir.Value, ir.Value]:
    """``(a // b, a % b)`` for floats (``float`` or ``double``), as NumPy's ``npy_divmod``."""
    ty = a.type
    zero, one, half = ir.Constant(ty, 0.0), ir.Constant(ty, 1.0), ir.Constant(ty, 0.5)
    floor = _intrinsic(builder, "llvm.floor", ty, 1)
    copysign = _intrinsic(builder, "llvm.copysign", ty, 2)
    mod = builder.frem(a, b)
    div = builder.fdiv(builder.fsub(a, mod), b)
    # C's ``if (mod)``: NaN counts as true.
    mod_set = builder.fcmp_unordered("!=", mod, zero)
    signs_differ = builder.xor(builder.fcmp_ordered("<", b, zero),
                               builder.fcmp_ordered("<", mod, zero))
    adjust = builder.and_(mod_set, signs_differ)
    div = builder.select(adjust, builder.fsub(div, one), div)
    fixed_mod = builder.select(adjust, builder.fadd(mod, b), mod)
    fixed_mod = builder.select(mod_set, fixed_mod, builder.call(copysign, [zero, b]))
    floored = builder.call(floor, [div])
    floored = builder.select(builder.fcmp_ordered(">", builder.fsub(div, floored), half),
                             builder.fadd(floored, one), floored)
    quotient = builder.fdiv(a, b)
    floored = builder.select(builder.fcmp_unordered("!=", div, zero), floored,
                             builder.call(copysign, [zero, quotient]))
    by_zero = builder.fcmp_ordered("==", b, zero)
    return builder.select(by_zero, quotient, floored), builder.select(by_zero, mod, fixed_mod)


def int_power(builder: ir.IRBuilder, x: ir.Value, y: ir.Value, signed: bool) -> ir.Value:
    """``x ** y`` for integers of one type, wrapping: a loop over the bits of ``y``."""
    ty = x.type
    zero, one = ir.Constant(ty, 0), ir.Constant(ty, 1)
    negative = builder.icmp_signed("<", y, zero) if signed else ir.Constant(ir.IntType(1), 0)
    exponent = builder.select(negative, zero, y) if signed else y
    fn = builder.function
    before = builder.block
    head, body, done = (fn.append_basic_block(n) for n in ("pow.loop", "pow.step", "pow.done"))
    builder.branch(head)
    builder.position_at_end(head)
    result, base, rest = builder.phi(ty), builder.phi(ty), builder.phi(ty)
    for phi, start in ((result, one), (base, x), (rest, exponent)):
        phi.add_incoming(start, before)
    builder.cbranch(builder.icmp_unsigned("!=", rest, zero), body, done)
    builder.position_at_end(body)
    odd_bit = builder.icmp_unsigned("!=", builder.and_(rest, one), zero)
    result.add_incoming(builder.select(odd_bit, builder.mul(result, base), result), body)
    base.add_incoming(builder.mul(base, base), body)
    rest.add_incoming(builder.lshr(rest, one), body)
    builder.branch(head)
    builder.position_at_end(done)
    if not signed:
        return result
    minus_one = ir.Constant(ty, -1)
    odd = builder.icmp_unsigned("!=", builder.and_(y, one), zero)
    of_minus_one = builder.select(odd, minus_one, one)
    special = builder.select(builder.icmp_signed("==", x, one), one,
                             builder.select(builder.icmp_signed("==", x, minus_one),
                                            of_minus_one, zero))
    return builder.select(negative, special, result)
