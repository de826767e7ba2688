"""The kernel ABI: how a ``gpu.func`` becomes a PTX ``.entry`` and what the host passes it.

Parameters, in argument order (the contract between ``to_ptx`` and the host runtime):

- a buffer of rank ``r``: a global-memory pointer to its element ``[0, ..., 0]`` (the host
  adds the offset), then ``r`` sizes and ``r`` strides in elements, all 64-bit. What the buffer
  type states statically (sizes, strides, a contiguous layout) is used as a constant in the
  kernel; the parameters are passed all the same, so that the ABI depends on the rank only.
- a scalar: ``index``, ``i64`` and ``ui64`` as 64-bit integers, narrower integers at their
  width, ``i1`` as one byte (0 or 1), ``f32`` and ``f64`` as themselves, ``f16`` as its 16 bits.

``kernel_param_format`` spells the parameters in PyCUDA's prepared-call format (Python
``struct`` characters, PyCUDA's ``Function.prepare``).

>>> from lowering.ir.types import F16, F32, I1, INDEX
>>> from lowering.dialects.loops import BufferType
>>> param_format([BufferType((None, 4), F32, memory_space="device"), INDEX, F16, I1])
'PqqqqqHb'
"""
from __future__ import annotations

import re

import llvmlite.ir as ir

from lowering.dialects.loops import BufferType
from lowering.ir.core import Operation
from lowering.ir.types import ScalarType, Type

from ..cpu.context import ModuleLowering, translation_error
from .kernel_math import GpuMath
from .ops import KernelLowering
from ..cpu.values import HALF, I8, I64, VOID, make_buffer, memory_type, value_type

_GLOBAL = 1
# Kernel names are PTX identifiers as they are: the host looks kernels up by these names.
_PTX_IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")

# struct characters of scalar parameters, by (is float, is signed, bits); i1 travels as "b".
_SCALAR_FORMAT = {
    (True, True, 16): "H", (True, True, 32): "f", (True, True, 64): "d",
    (False, True, 8): "b", (False, True, 16): "h", (False, True, 32): "i", (False, True, 64): "q",
    (False, False, 8): "B", (False, False, 16): "H", (False, False, 32): "I",
    (False, False, 64): "Q",
}


def scalar_format(t: ScalarType) -> str:
    """The struct character of a scalar parameter of type ``t``.

    >>> from lowering.ir.types import I1, INDEX, UI8, F64
    >>> [scalar_format(t) for t in (I1, INDEX, UI8, F64)]
    ['b', 'q', 'B', 'd']
    """
    if t.is_bool:
        return "b"
    return _SCALAR_FORMAT[t.is_float, t.is_float or t.is_signed, t.bits]


def param_format(types) -> str:
    """The prepared-call format of kernel parameters of IR types ``types``."""
    parts = []
    for t in types:
        if isinstance(t, BufferType):
            parts.append("P" + "q" * (2 * t.rank))
        else:
            parts.append(scalar_format(t))
    return "".join(parts)


def kernel_param_format(func_op: Operation) -> str:
    """The PyCUDA prepared-call format of the parameters of kernel ``func_op`` (a gpu.func):
    ``"P" + "q" * 2r`` per buffer of rank r, one character per scalar."""
    return param_format(func_op.function_type.inputs)


def _scalar_param_type(t: ScalarType) -> ir.Type:
    if t.is_bool:
        return I8
    if t.is_float and t.bits == 16:
        return ir.IntType(16)
    return value_type(t)


def param_types(t: Type) -> list[ir.Type]:
    """The LLVM parameter types of one kernel argument of IR type ``t``."""
    if isinstance(t, BufferType):
        return [memory_type(t.element).as_pointer(_GLOBAL)] + [I64] * (2 * t.rank)
    return [_scalar_param_type(t)]


def _unpack(b: ir.IRBuilder, t: Type, params):
    """The lowered argument of IR type ``t`` from its parameters (an iterator)."""
    if isinstance(t, ScalarType):
        value = next(params)
        if t.is_bool:
            return b.icmp_unsigned("!=", value, ir.Constant(I8, 0))
        if t.is_float and t.bits == 16:
            return b.bitcast(value, HALF)
        return value
    pointer = b.addrspacecast(next(params), memory_type(t.element).as_pointer())
    sizes = [next(params) for _ in range(t.rank)]
    strides = [next(params) for _ in range(t.rank)]
    return make_buffer(b, t, pointer, sizes, strides)


def define_kernel(state: ModuleLowering, func: Operation, math: GpuMath) -> ir.Function:
    """Define ``func`` (a ``gpu.func`` with the ``kernel`` attribute) as a ``ptx_kernel``."""
    name = func.sym_name
    if not func.is_kernel:
        raise translation_error(func, f"gpu.func @{name} has no kernel attribute; only kernels "
                                      f"are translated (nothing calls device functions)")
    if not _PTX_IDENTIFIER.fullmatch(name):
        raise translation_error(func, f"kernel name @{name} is not a PTX identifier (letters, "
                                      f"digits and '_', not starting with a digit)")
    inputs = func.function_type.inputs
    params = [ty for t in inputs for ty in param_types(t)]
    fn = ir.Function(state.module, ir.FunctionType(VOID, params), name)
    fn.calling_convention = "ptx_kernel"
    fn.attributes.add("nounwind")
    fl = KernelLowering(state, fn, math)
    parts = iter(fn.args)
    args = [_unpack(fl.builder, t, parts) for t in inputs]
    terminator = fl.lower_block(func.body.block, args)
    if terminator is None or terminator.name != "gpu.return":
        raise translation_error(func, f"kernel @{name} must end with gpu.return")
    fl.builder.ret_void()
    return fn


# The most threads a block may have on any NVIDIA GPU so far.
MAX_BLOCK_THREADS = 1024


def declare_max_threads(module: ir.Module, fn: ir.Function, threads: int) -> None:
    """Declare that kernel ``fn`` runs in blocks of at most ``threads`` threads (PTX
    ``.maxntid``, through the ``nvvm.annotations`` entry ``maxntidx``).

    >>> m = ir.Module(); k = ir.Function(m, ir.FunctionType(VOID, []), "k")
    >>> declare_max_threads(m, k, 256)
    >>> '!"maxntidx", i32 256' in str(m)
    True
    """
    if not 1 <= threads <= MAX_BLOCK_THREADS:
        raise ValueError(f"kernel {fn.name}: a block has 1 to {MAX_BLOCK_THREADS} threads, "
                         f"not {threads}")
    annotations = module.add_named_metadata("nvvm.annotations")
    annotations.add(module.add_metadata([fn, "maxntidx", ir.Constant(ir.IntType(32), threads)]))
