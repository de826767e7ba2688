"""Floating-point math in kernels: the vector math library at scalar width, an exact ``frem``,
and the approximations of fast-math mode.

- ``exp``, ``log``, ``sin``, ``tanh``, ... are the vector math library's functions
  (``vecmath.MATH_FUNCTIONS``), with its documented accuracy in ulps: the same straight-line
  code as on the CPU, defined once per module, scaling by powers of two with multiplications
  (``llvm.ldexp`` would become a call that does not exist on the GPU) and without the vector
  versions the CPU's loop vectorizer uses. There is no libm on the GPU; every function the
  scalar dialect has is in the library.
- ``frem`` is the exact remainder of C's ``fmod`` (LLVM's meaning of ``frem``); the NVPTX
  backend computes it as ``x - trunc(x / y) * y``, off by far more than an ulp once ``x / y``
  is large, so kernels call ``lowering.fmod.<f32|f64>`` instead: a long division on the
  significands, one quotient bit per step (at most 277 steps for f32, 2098 for f64).
- fast-math mode (``GpuMath(fast=True)``) trades accuracy for speed on ``f32`` as CUDA's
  ``--use_fast_math`` does: ``exp``, ``exp2``, ``log``, ``log2``, ``log10``, ``sin``, ``cos``
  and ``tanh`` use the GPU's approximate instructions (``ex2.approx``, ``lg2.approx``,
  ``sin.approx``, ``cos.approx``, ``tanh.approx``; ``sin``/``cos`` are only accurate for
  ``|x|`` up to about ``π``·100), ``sigmoid`` is ``1 / (1 + ex2.approx(-x·log2 e))``, division
  is ``div.full`` (2 ulp), ``sqrt`` is ``sqrt.approx``; every ``f32`` operation flushes
  subnormals to zero (``to_ptx`` sets the function attribute) and multiplications may be fused
  with additions (``KernelBuilder(contract=True)``). ``f64`` keeps its exact code.

>>> import llvmlite.ir as ir
>>> module = ir.Module()
>>> fn = ir.Function(module, ir.FunctionType(ir.FloatType(), [ir.FloatType()] * 2), "f")
>>> b = KernelBuilder(fn.append_basic_block())
>>> _ = b.ret(b.frem(*fn.args))
>>> "call float @\\"lowering.fmod.f32\\"" in str(module)
True
"""
from __future__ import annotations

import math

import llvmlite.ir as ir

from ..cpu.context import TranslationError
from ..cpu.values import DOUBLE, FLOAT
from ..vecmath.library import MATH_FUNCTIONS, function_name
from ..vecmath.emit import MathBuilder, format_of

# Fast-math approximations of f32 functions by the GPU's special function unit.
FAST_F32_FUNCTIONS = ("exp", "exp2", "log", "log2", "log10", "sin", "cos", "tanh", "sigmoid")
# Names every supported LLVM knows (LLVM 22 renames some and reads the old names as the new).
_FTZ_INTRINSICS = {"ex2": "llvm.nvvm.ex2.approx.ftz.f", "lg2": "llvm.nvvm.lg2.approx.ftz.f",
                   "sin": "llvm.nvvm.sin.approx.ftz.f", "cos": "llvm.nvvm.cos.approx.ftz.f",
                   "sqrt": "llvm.nvvm.sqrt.approx.ftz.f", "div": "llvm.nvvm.div.full.ftz"}
# PTX instructions with no intrinsic in every supported LLVM (LLVM 20 lacks tanh's): inline
# assembly, which LLVM passes through as is.
_FTZ_INSTRUCTIONS = {"tanh": "tanh.approx.f32 $0, $1;"}


def define_math_function(module: ir.Module, name: str, ty: ir.Type) -> ir.Function:
    """The vector math library's ``name`` for ``ty`` as a scalar, ``alwaysinline`` function of
    ``module`` (defined once): ``lowering.<name>.<f32|f64>``.

    >>> module = ir.Module()
    >>> define_math_function(module, "tanh", ir.DoubleType()).name
    'lowering.tanh.f64'
    """
    if name not in MATH_FUNCTIONS:
        raise TranslationError(f"no GPU implementation of math function '{name}' (the vector "
                               f"math library has {', '.join(sorted(MATH_FUNCTIONS))})")
    symbol = function_name(name, ty)
    existing = module.globals.get(symbol)
    if existing is not None:
        return existing
    info = MATH_FUNCTIONS[name]
    fmt = format_of(ty)
    fn = ir.Function(module, ir.FunctionType(ty, [ty] * info.arity), symbol)
    fn.linkage = "internal"
    for attribute in ("alwaysinline", "nounwind", "readnone"):
        fn.attributes.add(attribute)
    mb = MathBuilder(ir.IRBuilder(fn.append_basic_block("entry")), fmt, ldexp_instruction=False)
    mb.builder.ret(info.emit(mb, *fn.args))
    return fn


def _nvvm(builder: ir.IRBuilder, key: str, *args: ir.Value) -> ir.Value:
    if key in _FTZ_INSTRUCTIONS:
        constraints = ",".join(["=f"] + ["f"] * len(args))
        asm = ir.InlineAsm(ir.FunctionType(FLOAT, [FLOAT] * len(args)), _FTZ_INSTRUCTIONS[key],
                           constraints)
        return builder.call(asm, list(args))
    name = _FTZ_INTRINSICS[key]
    fn = builder.module.globals.get(name)
    if fn is None:
        fn = ir.Function(builder.module, ir.FunctionType(FLOAT, [FLOAT] * len(args)), name)
    return builder.call(fn, list(args))


def fast_divide(builder: ir.IRBuilder, a: ir.Value, b: ir.Value) -> ir.Value:
    """``a / b`` in f32 with ``div.full.ftz`` (at most 2 ulp)."""
    return _nvvm(builder, "div", a, b)


def fast_sqrt(builder: ir.IRBuilder, x: ir.Value) -> ir.Value:
    """``sqrt(x)`` in f32 with ``sqrt.approx.ftz`` (LLVM 20 keeps ``llvm.sqrt`` exact even
    when it may approximate, so the instruction is asked for by its intrinsic)."""
    return _nvvm(builder, "sqrt", x)


def _fast_f32(builder: ir.IRBuilder, name: str, x: ir.Value, approx_tanh: bool) -> ir.Value | None:
    f = lambda v: ir.Constant(FLOAT, v)  # noqa: E731
    if name == "exp":
        return _nvvm(builder, "ex2", builder.fmul(x, f(1 / math.log(2))))
    if name == "exp2":
        return _nvvm(builder, "ex2", x)
    if name in ("log", "log2", "log10"):
        scale = {"log": math.log(2), "log2": 1.0, "log10": math.log10(2)}[name]
        log2 = _nvvm(builder, "lg2", x)
        return log2 if scale == 1.0 else builder.fmul(log2, f(scale))
    if name in ("sin", "cos"):
        return _nvvm(builder, name, x)
    if name == "tanh":
        return _nvvm(builder, "tanh", x) if approx_tanh else None
    if name == "sigmoid":
        e = _nvvm(builder, "ex2", builder.fmul(x, f(-1 / math.log(2))))
        return fast_divide(builder, f(1.0), builder.fadd(f(1.0), e))
    return None


class GpuMath:
    """The math calls of one kernel module: ``math_call(builder, name, args)`` is the
    ``ScalarEmitter``'s hook. ``fast``: fast-math approximations of f32 functions;
    ``approx_tanh``: the target has ``tanh.approx`` (sm_75 and PTX ISA 7.0 on)."""

    def __init__(self, fast: bool = False, approx_tanh: bool = True):
        self.fast = fast
        self.approx_tanh = approx_tanh

    def math_call(self, builder: ir.IRBuilder, name: str, args) -> ir.Value:
        ty = args[0].type
        if ty not in (FLOAT, DOUBLE):
            raise TranslationError(f"math function '{name}' is computed in float or double, "
                                   f"not {ty}")
        if self.fast and ty == FLOAT and name in FAST_F32_FUNCTIONS:
            value = _fast_f32(builder, name, args[0], self.approx_tanh)
            if value is not None:
                return value
        return builder.call(define_math_function(builder.module, name, ty), list(args))


# ---------------------------------------------------------------------------------------------
# The builder of kernel code


class KernelBuilder(ir.IRBuilder):
    """An ``IRBuilder`` for kernel code: ``frem`` is the exact remainder (``define_fmod``);
    with ``contract``, float additions and multiplications carry LLVM's ``contract`` flag, so
    that a product and a sum may become one ``fma`` (fast-math mode)."""

    def __init__(self, block: ir.Block | None = None, contract: bool = False):
        super().__init__(block)
        self.contract = contract

    def _flags(self, flags) -> tuple:
        return (*flags, "contract") if self.contract and "contract" not in flags else tuple(flags)

    def fadd(self, lhs, rhs, name="", flags=()):
        return super().fadd(lhs, rhs, name, flags=self._flags(flags))

    def fsub(self, lhs, rhs, name="", flags=()):
        return super().fsub(lhs, rhs, name, flags=self._flags(flags))

    def fmul(self, lhs, rhs, name="", flags=()):
        return super().fmul(lhs, rhs, name, flags=self._flags(flags))

    def frem(self, lhs, rhs, name="", flags=()):
        return self.call(define_fmod(self.module, lhs.type), [lhs, rhs], name=name)


def define_fmod(module: ir.Module, ty: ir.Type) -> ir.Function:
    """``lowering.fmod.<f32|f64>(x, y)``: C's ``fmod``, exact (musl's algorithm on the bits):
    NaN when ``y`` is 0 or NaN or ``x`` is infinite or NaN, ``x`` when ``|x| < |y|``, else the
    remainder with the sign of ``x``.

    >>> define_fmod(ir.Module(), ir.DoubleType()).name
    'lowering.fmod.f64'
    """
    if ty not in (FLOAT, DOUBLE):
        raise TranslationError(f"frem is computed in float or double, not {ty}")
    fmt = format_of(ty)
    symbol = f"lowering.fmod.{fmt.name}"
    existing = module.globals.get(symbol)
    if existing is not None:
        return existing
    fn = ir.Function(module, ir.FunctionType(ty, [ty, ty]), symbol)
    fn.linkage = "internal"
    fn.attributes.add("nounwind")
    fn.attributes.add("readnone")
    _FmodBody(fn, fmt).emit()
    return fn


class _FmodBody:
    """The blocks of ``define_fmod``: exponents and significands as integers of the float's
    width; ``M`` fraction bits, significands normalized to ``[2**M, 2**(M+1))``."""

    def __init__(self, fn: ir.Function, fmt):
        self.fn = fn
        self.ty = fmt.ir_type
        self.ity = fmt.int_type
        self.width = fmt.bits
        self.m = fmt.fraction_bits
        self.b = ir.IRBuilder(fn.append_basic_block("entry"))

    def c(self, value: int) -> ir.Constant:
        return ir.Constant(self.ity, value)

    def block(self, name: str) -> ir.Block:
        return self.fn.append_basic_block(name)

    def normalize(self, bits: ir.Value) -> tuple[ir.Value, ir.Value]:
        """(significand with its leading one at bit M, exponent field), subnormals included."""
        b = self.b
        exponent = b.lshr(bits, self.c(self.m))
        fraction = b.and_(bits, self.c((1 << self.m) - 1))
        shift = b.sub(b.ctlz(bits, ir.Constant(ir.IntType(1), 0)),
                      self.c(self.width - 1 - self.m))
        subnormal = b.icmp_unsigned("==", exponent, self.c(0))
        significand = b.select(subnormal, b.shl(bits, shift),
                               b.or_(fraction, self.c(1 << self.m)))
        return significand, b.select(subnormal, b.sub(self.c(1), shift), exponent)

    def emit(self) -> None:
        b, c = self.b, self.c
        x, y = self.fn.args
        ux, uy = b.bitcast(x, self.ity), b.bitcast(y, self.ity)
        sign_bit = 1 << (self.width - 1)
        sign = b.and_(ux, c(sign_bit))
        ax, ay = b.and_(ux, c(sign_bit - 1)), b.and_(uy, c(sign_bit - 1))
        infinity = c(((1 << (self.width - 1 - self.m)) - 1) << self.m)
        invalid = b.or_(b.or_(b.icmp_unsigned("==", ay, c(0)),
                              b.icmp_unsigned(">", ay, infinity)),
                        b.icmp_unsigned(">=", ax, infinity))
        nan, check_small, small, divide = (self.block(n) for n in
                                           ("nan", "check_small", "small", "divide"))
        b.cbranch(invalid, nan, check_small)
        b.position_at_end(nan)
        product = b.fmul(x, y)
        b.ret(b.fdiv(product, product))
        b.position_at_end(check_small)
        b.cbranch(b.icmp_unsigned("<=", ax, ay), small, divide)
        b.position_at_end(small)
        b.ret(b.select(b.icmp_unsigned("==", ax, ay), b.fmul(ir.Constant(self.ty, 0.0), x), x))
        b.position_at_end(divide)
        mx, ex = self.normalize(ax)
        my, ey = self.normalize(ay)
        self._long_division(x, sign, mx, ex, my, ey)

    def _step(self, mx: ir.Value, my: ir.Value, zero: ir.Block) -> ir.Value:
        """One subtraction of the divisor where it fits; an exact zero remainder ends."""
        b = self.b
        difference = b.sub(mx, my)
        fits = b.icmp_signed(">=", difference, self.c(0))
        exact, go_on = self.block("exact"), self.block("go_on")
        b.cbranch(b.and_(fits, b.icmp_unsigned("==", difference, self.c(0))), exact, go_on)
        b.position_at_end(exact)
        b.branch(zero)
        b.position_at_end(go_on)
        return b.select(fits, difference, mx)

    def _long_division(self, x, sign, mx, ex, my, ey) -> None:
        b, c = self.b, self.c
        zero = self.block("zero")
        before = b.block
        header, body, tail = self.block("loop"), self.block("loop.body"), self.block("tail")
        b.branch(header)
        b.position_at_end(header)
        m_phi, e_phi = b.phi(self.ity), b.phi(self.ity)
        m_phi.add_incoming(mx, before)
        e_phi.add_incoming(ex, before)
        b.cbranch(b.icmp_signed(">", e_phi, ey), body, tail)
        b.position_at_end(body)
        reduced = self._step(m_phi, my, zero)
        m_phi.add_incoming(b.shl(reduced, c(1)), b.block)
        e_phi.add_incoming(b.sub(e_phi, c(1)), b.block)
        b.branch(header)
        b.position_at_end(tail)
        rest = self._step(m_phi, my, zero)
        # Renormalize (the leading one back to bit M), then rebuild the float.
        shift = b.sub(b.ctlz(rest, ir.Constant(ir.IntType(1), 0)), c(self.width - 1 - self.m))
        rest = b.shl(rest, shift)
        exponent = b.sub(e_phi, shift)
        normal = b.or_(b.sub(rest, c(1 << self.m)), b.shl(exponent, c(self.m)))
        subnormal = b.lshr(rest, b.sub(c(1), exponent))
        bits = b.select(b.icmp_signed(">", exponent, c(0)), normal, subnormal)
        b.ret(b.bitcast(b.or_(bits, sign), self.ty))
        b.position_at_end(zero)
        b.ret(b.fmul(ir.Constant(self.ty, 0.0), x))
