"""``loops.call`` in LLVM IR: calls of external symbols, BLAS included.

The loops dialect's convention (``lowering.dialects.loops.externals``): an ``index`` argument is
a 64-bit integer, a scalar is its C type, a buffer is the address of its element ``[0, ..., 0]``,
the result (at most one) is the C return value.

A CBLAS routine (``cblas_sgemm``, ...) is called through the BLAS NumPy ships (``blas``): the
call goes to the library's own symbol, the leading enumeration arguments become C ``int`` and
the other integers the library's width; with a 32-bit-integer BLAS, a size that does not fit is
a run-time error. Any other symbol is declared as the convention says and resolved by the JIT
in the process (or through ``jit.register_symbol``).

>>> CallOp in CPU_LOWERING
True
"""
from __future__ import annotations

import llvmlite.ir as ir

from lowering.dialects.loops import BufferType, CallOp

from .blas import CBLAS_ENUM_PARAMS, find_blas
from .context import CPU_LOWERING, FunctionLowering, translation_error
from .values import I32, BufferValue, i64, memory_type, value_type


def _generic_argument(value, t) -> tuple[ir.Value, ir.Type]:
    if isinstance(t, BufferType):
        return value.ptr, value.ptr.type
    return value, value_type(t)


def _blas_arguments(fl: FunctionLowering, op, int_bits: int) -> tuple[list, list]:
    enums = CBLAS_ENUM_PARAMS[op.callee]
    values, types = [], []
    for index, v in enumerate(op.args):
        lowered = fl.get(v)
        if isinstance(lowered, BufferValue):
            values.append(lowered.ptr)
            types.append(memory_type(v.type.element).as_pointer())
            continue
        if v.type.name != "index":
            values.append(lowered)
            types.append(value_type(v.type))
            continue
        if index < enums:
            values.append(fl.builder.trunc(lowered, I32))
            types.append(I32)
        elif int_bits == 32:
            fits = fl.all_of([fl.icmp("<=", lowered, i64(2 ** 31 - 1)),
                              fl.icmp(">=", lowered, i64(-(2 ** 31)))])
            fl.check(fits, f"{op.name}: argument #{index} of {op.callee} does not fit the 32-bit "
                           f"integers of the BLAS library", op)
            values.append(fl.builder.trunc(lowered, I32))
            types.append(I32)
        else:
            values.append(lowered)
            types.append(value_type(v.type))
    return values, types


@CPU_LOWERING.register(CallOp)
def _call(fl: FunctionLowering, op):
    callee = op.callee
    result_type = value_type(op.outs[0].type) if op.outs else ir.VoidType()
    if callee in CBLAS_ENUM_PARAMS:
        library = find_blas()
        if library is None:
            raise translation_error(op, f"cannot call {callee}: no BLAS library was found next "
                                        f"to NumPy (blas_available() is False; use generated "
                                        f"loops instead)")
        symbol = library.symbol(callee)
        values, types = _blas_arguments(fl, op, library.int_bits)
    elif callee.startswith("cblas_"):
        raise translation_error(op, f"the CPU backend does not know the C signature of {callee} "
                                    f"(known: {', '.join(sorted(CBLAS_ENUM_PARAMS))})")
    else:
        symbol = callee
        pairs = [_generic_argument(fl.get(v), v.type) for v in op.args]
        values, types = [p[0] for p in pairs], [p[1] for p in pairs]
    fn = fl.state.function(symbol, ir.FunctionType(result_type, types))
    fn.attributes.add("nounwind")
    result = fl.builder.call(fn, values)
    return [result] if op.outs else []
