"""The LLVM IR of the Python-facing wrapper around a compiled function's native entry.

A ``Function`` call must cost little more than one native call (docs/performance.md). A call made
with ``ctypes`` costs about as much as NumPy's whole ``x + 1``, and reading an array's address
through ``__array_interface__`` twice that, so the wrapper is native code itself: a
``METH_FASTCALL`` built-in function ``wrapper(self, args, nargs)`` that, holding the GIL,

1. reads each argument's data pointer, sizes and byte strides straight from NumPy's array object
   (``ArrayLayout`` gives the field offsets, found and checked at run time) into a descriptor of
   the native ABI on its stack, after checking that the argument is exactly an ``ndarray`` with
   the expected dtype object and rank, an aligned data pointer, and byte strides that are
   multiples of the item size (strides become element counts);
2. releases the GIL, calls ``i32 entry(i8** packed)`` and takes the GIL back;
3. wraps each output descriptor the entry filled as an ``ndarray`` (NumPy's
   ``PyArray_NewFromDescr``) whose base is a capsule that frees the memory with the C library's
   ``free`` when the last array using it dies, and returns them in a new list.

It returns a Python ``int`` instead of a list when the call cannot go on: the entry's non-zero
error code (a failed shape check: nothing was allocated), ``NORMALIZE_CODE + i`` when argument
``i`` is not in the form step 1 accepts (the caller converts it and calls again), or
``ARGCOUNT_CODE`` for a wrong number of arguments. It returns NULL (a Python exception) only when
wrapping an output runs out of memory; the outputs' memory is freed then.

Everything specific to one function is in its context (a pointer array behind the ``self``
capsule): the entry's address, ``ndarray``, the two NumPy API functions, and the dtype objects of
the arguments and outputs (``cpu.call_protocol.CONTEXT_FIELDS``). The IR depends only on the item
sizes and ranks, so functions of one signature share one compiled wrapper.

>>> layout = ArrayLayout(ob_type=8, data=16, nd=24, dimensions=32, strides=40, descr=56)
>>> text = wrapper_ir(((4, 1),), ((4, 1),), layout)
>>> 'define i8* @"lowering_python_call"(i8* %"self", i8** %"args", i64 %"nargs")' in text
True
"""
from __future__ import annotations

import llvmlite.ir as ir

from .call_protocol import ARGCOUNT_CODE, CONTEXT_FIELDS, NORMALIZE_CODE, WRAPPER_NAME, ArrayLayout

_FIXED = len(CONTEXT_FIELDS)

# NumPy flags for an output array: writeable and aligned (the memory is 64-byte aligned); NumPy
# computes contiguity from the strides.
_NPY_ARRAY_ALIGNED = 0x0100
_NPY_ARRAY_WRITEABLE = 0x0400

I8, I32, I64 = ir.IntType(8), ir.IntType(32), ir.IntType(64)
I8P = I8.as_pointer()
I8PP = I8P.as_pointer()
VOID = ir.VoidType()


def descriptor_type(rank: int) -> ir.LiteralStructType:
    """``{i8* data, [r x i64] shape, [r x i64] strides}``; rank 0 is ``{i8* data}``."""
    if rank == 0:
        return ir.LiteralStructType([I8P])
    return ir.LiteralStructType([I8P, ir.ArrayType(I64, rank), ir.ArrayType(I64, rank)])


class _Wrapper:
    """Builds the wrapper function into ``module``."""

    def __init__(self, module: ir.Module, inputs, outputs, layout: ArrayLayout):
        self.module = module
        self.inputs = inputs
        self.outputs = outputs
        self.layout = layout
        self.api = self._declare_api()
        fnty = ir.FunctionType(I8P, [I8P, I8PP, I64])
        self.fn = ir.Function(module, fnty, WRAPPER_NAME)
        self.fn.args[0].name, self.fn.args[1].name, self.fn.args[2].name = "self", "args", "nargs"
        self.b = ir.IRBuilder(self.fn.append_basic_block("entry"))

    def _declare_api(self) -> dict[str, ir.Function]:
        signatures = {
            "PyLong_FromLongLong": (I8P, [I64]),
            "PyList_New": (I8P, [I64]),
            "PyList_SetItem": (I32, [I8P, I64, I8P]),
            "PyCapsule_New": (I8P, [I8P, I8P, ir.FunctionType(VOID, [I8P]).as_pointer()]),
            "PyCapsule_GetPointer": (I8P, [I8P, I8P]),
            "PyEval_SaveThread": (I8P, []),
            "PyEval_RestoreThread": (VOID, [I8P]),
            "Py_IncRef": (VOID, [I8P]),
            "Py_DecRef": (VOID, [I8P]),
            "free": (VOID, [I8P]),
        }
        api = {}
        for name, (ret, params) in signatures.items():
            api[name] = ir.Function(self.module, ir.FunctionType(ret, params), name)
        return api

    # -- small helpers --------------------------------------------------------------------

    def field(self, obj: ir.Value, offset: int, ty: ir.Type, name: str = "") -> ir.Value:
        """The value of type ``ty`` at byte ``offset`` of object ``obj`` (an ``i8*``)."""
        b = self.b
        address = b.gep(obj, [ir.Constant(I64, offset)], inbounds=True)
        return b.load(b.bitcast(address, ty.as_pointer()), name=name)

    def context(self, ctx: ir.Value, index: int, name: str) -> ir.Value:
        b = self.b
        return b.load(b.gep(ctx, [ir.Constant(I64, index)], inbounds=True), name=name)

    def returning_int(self, name: str, value: int) -> ir.Block:
        """A block returning ``PyLong(value)``."""
        block = self.fn.append_basic_block(name)
        builder = ir.IRBuilder(block)
        builder.ret(builder.call(self.api["PyLong_FromLongLong"], [ir.Constant(I64, value)]))
        return block

    def require(self, ok: ir.Value, otherwise: ir.Block, name: str) -> None:
        """Go on if ``ok`` (i1) holds, else branch to ``otherwise``."""
        cont = self.fn.append_basic_block(name)
        self.b.cbranch(ok, cont, otherwise)
        self.b.position_at_end(cont)

    # -- the function ---------------------------------------------------------------------

    def build(self) -> None:
        b, api = self.b, self.api
        self_obj, args, nargs = self.fn.args
        n_in, n_out = len(self.inputs), len(self.outputs)
        descriptors = [b.alloca(descriptor_type(rank), name=f"in{i}")
                       for i, (_, rank) in enumerate(self.inputs)]
        descriptors += [b.alloca(descriptor_type(rank), name=f"out{j}")
                        for j, (_, rank) in enumerate(self.outputs)]
        packed = b.alloca(ir.ArrayType(I8P, max(1, n_in + n_out)), name="packed")
        self.result_slot = b.alloca(I8P, name="result_slot")
        b.store(ir.Constant(I8P, None), self.result_slot)
        ctx = b.bitcast(b.call(api["PyCapsule_GetPointer"], [self_obj, ir.Constant(I8P, None)]),
                        I8PP, name="ctx")
        self.require(b.icmp_signed("==", nargs, ir.Constant(I64, n_in)),
                     self.returning_int("bad_count", ARGCOUNT_CODE), "count_ok")
        ndarray = self.context(ctx, CONTEXT_FIELDS.index("ndarray_type"), "ndarray")
        for i, (itemsize, rank) in enumerate(self.inputs):
            obj = b.load(b.gep(args, [ir.Constant(I64, i)], inbounds=True), name=f"arg{i}")
            self._read_input(i, obj, itemsize, rank, ndarray, ctx, descriptors[i])
        for k, desc in enumerate(descriptors):
            slot = b.gep(packed, [ir.Constant(I32, 0), ir.Constant(I32, k)], inbounds=True)
            b.store(b.bitcast(desc, I8P), slot)
        entry_fnty = ir.FunctionType(I32, [I8PP])
        entry = b.bitcast(self.context(ctx, CONTEXT_FIELDS.index("entry"), "entry_address"),
                          entry_fnty.as_pointer())
        first = b.gep(packed, [ir.Constant(I32, 0), ir.Constant(I32, 0)], inbounds=True)
        thread_state = b.call(api["PyEval_SaveThread"], [])
        code = b.call(entry, [first], name="code")
        b.call(api["PyEval_RestoreThread"], [thread_state])
        failed = self.fn.append_basic_block("entry_failed")
        ok = self.fn.append_basic_block("entry_ok")
        b.cbranch(b.icmp_signed("!=", code, ir.Constant(I32, 0)), failed, ok)
        b.position_at_end(failed)
        b.ret(b.call(api["PyLong_FromLongLong"], [b.sext(code, I64)]))
        b.position_at_end(ok)
        self._wrap_outputs(ctx, ndarray, descriptors[n_in:])

    def _read_input(self, i: int, obj, itemsize: int, rank: int, ndarray, ctx, desc) -> None:
        b, lay = self.b, self.layout
        normalize = self.returning_int(f"normalize{i}", NORMALIZE_CODE + i)
        self.require(b.icmp_unsigned("==", self.field(obj, lay.ob_type, I8P), ndarray),
                     normalize, f"arg{i}_is_ndarray")
        want = self.context(ctx, _FIXED + i, f"descr{i}")
        self.require(b.icmp_unsigned("==", self.field(obj, lay.descr, I8P), want),
                     normalize, f"arg{i}_dtype_ok")
        self.require(b.icmp_signed("==", self.field(obj, lay.nd, I32), ir.Constant(I32, rank)),
                     normalize, f"arg{i}_rank_ok")
        data = self.field(obj, lay.data, I8P, name=f"data{i}")
        mask = ir.Constant(I64, itemsize - 1)
        if itemsize > 1:
            misaligned = b.and_(b.ptrtoint(data, I64), mask)
            self.require(b.icmp_unsigned("==", misaligned, ir.Constant(I64, 0)), normalize,
                         f"arg{i}_aligned")
        zero = ir.Constant(I32, 0)
        b.store(data, b.gep(desc, [zero, zero], inbounds=True))
        if rank == 0:
            return
        dims = self.field(obj, lay.dimensions, I64.as_pointer(), name=f"dims{i}")
        strides = self.field(obj, lay.strides, I64.as_pointer(), name=f"strides{i}")
        shift = ir.Constant(I64, itemsize.bit_length() - 1)
        for d in range(rank):
            size = b.load(b.gep(dims, [ir.Constant(I64, d)], inbounds=True))
            stride = b.load(b.gep(strides, [ir.Constant(I64, d)], inbounds=True))
            if itemsize > 1:
                rest = b.and_(stride, mask)
                self.require(b.icmp_unsigned("==", rest, ir.Constant(I64, 0)), normalize,
                             f"arg{i}_stride{d}_ok")
                stride = b.ashr(stride, shift)
            b.store(size, b.gep(desc, [zero, ir.Constant(I32, 1), ir.Constant(I32, d)],
                                inbounds=True))
            b.store(stride, b.gep(desc, [zero, ir.Constant(I32, 2), ir.Constant(I32, d)],
                                  inbounds=True))

    def _wrap_outputs(self, ctx, ndarray, descriptors) -> None:
        b, api = self.b, self.api
        zero = ir.Constant(I32, 0)
        n_out = len(self.outputs)
        datas = [b.load(b.gep(desc, [zero, zero], inbounds=True), name=f"out_data{j}")
                 for j, desc in enumerate(descriptors)]
        # cleanup[j] frees the memory of outputs j.. (not yet owned by an array), drops the
        # list, and returns NULL: NumPy or Python has set the exception.
        result_slot = self.result_slot
        cleanup = [self.fn.append_basic_block(f"cleanup{j}") for j in range(n_out + 1)]
        for j, block in enumerate(cleanup):
            cb = ir.IRBuilder(block)
            if j < n_out:
                cb.call(api["free"], [datas[j]])
                cb.branch(cleanup[j + 1])
            else:
                result = cb.load(result_slot)
                has = cb.icmp_unsigned("!=", result, ir.Constant(I8P, None))
                with cb.if_then(has):
                    cb.call(api["Py_DecRef"], [result])
                cb.ret(ir.Constant(I8P, None))
        result = b.call(api["PyList_New"], [ir.Constant(I64, n_out)], name="result")
        self.require(b.icmp_unsigned("!=", result, ir.Constant(I8P, None)), cleanup[0],
                     "list_ok")
        b.store(result, result_slot)
        new_fnty = ir.FunctionType(I8P, [I8P, I8P, I32, I64.as_pointer(), I64.as_pointer(), I8P,
                                         I32, I8P])
        set_base_fnty = ir.FunctionType(I32, [I8P, I8P])
        new_from_descr = b.bitcast(
            self.context(ctx, CONTEXT_FIELDS.index("new_from_descr"), "new_from_descr"),
            new_fnty.as_pointer())
        set_base = b.bitcast(
            self.context(ctx, CONTEXT_FIELDS.index("set_base_object"), "set_base_object"),
            set_base_fnty.as_pointer())
        free_capsule = self._capsule_destructor()
        null64 = ir.Constant(I64.as_pointer(), None)
        for j, ((itemsize, rank), desc) in enumerate(zip(self.outputs, descriptors)):
            descr = self.context(ctx, _FIXED + len(self.inputs) + j, f"out_descr{j}")
            shape = strides = null64
            if rank:
                shape = b.gep(desc, [zero, ir.Constant(I32, 1), zero], inbounds=True)
                strides = b.gep(desc, [zero, ir.Constant(I32, 2), zero], inbounds=True)
                for d in range(rank):  # element strides -> byte strides, in place
                    slot = b.gep(desc, [zero, ir.Constant(I32, 2), ir.Constant(I32, d)],
                                 inbounds=True)
                    b.store(b.mul(b.load(slot), ir.Constant(I64, itemsize)), slot)
            b.call(api["Py_IncRef"], [descr])  # PyArray_NewFromDescr steals a reference
            array = b.call(new_from_descr, [
                ndarray, descr, ir.Constant(I32, rank), shape, strides, datas[j],
                ir.Constant(I32, _NPY_ARRAY_ALIGNED | _NPY_ARRAY_WRITEABLE),
                ir.Constant(I8P, None)], name=f"array{j}")
            self.require(b.icmp_unsigned("!=", array, ir.Constant(I8P, None)), cleanup[j],
                         f"array{j}_ok")
            capsule = b.call(api["PyCapsule_New"], [datas[j], ir.Constant(I8P, None),
                                                    free_capsule], name=f"owner{j}")
            no_capsule = self.fn.append_basic_block(f"no_owner{j}")
            nb = ir.IRBuilder(no_capsule)
            nb.call(api["Py_DecRef"], [array])
            nb.branch(cleanup[j])
            self.require(b.icmp_unsigned("!=", capsule, ir.Constant(I8P, None)), no_capsule,
                         f"owner{j}_ok")
            # PyArray_SetBaseObject steals the capsule, also when it fails (the capsule then
            # frees the memory); the array itself still has to go.
            no_base = self.fn.append_basic_block(f"no_base{j}")
            nb = ir.IRBuilder(no_base)
            nb.call(api["Py_DecRef"], [array])
            nb.branch(cleanup[j + 1])
            status = b.call(set_base, [array, capsule])
            self.require(b.icmp_signed("==", status, ir.Constant(I32, 0)), no_base,
                         f"base{j}_ok")
            b.call(api["PyList_SetItem"], [result, ir.Constant(I64, j), array])
        b.ret(result)

    def _capsule_destructor(self) -> ir.Function:
        """``void free_owner(PyObject *capsule)``: frees the memory the capsule holds."""
        fn = ir.Function(self.module, ir.FunctionType(VOID, [I8P]), "lowering_free_owner")
        fn.linkage = "internal"
        b = ir.IRBuilder(fn.append_basic_block("entry"))
        pointer = b.call(self.api["PyCapsule_GetPointer"], [fn.args[0], ir.Constant(I8P, None)])
        b.call(self.api["free"], [pointer])
        b.ret_void()
        return fn


def wrapper_ir(inputs, outputs, layout: ArrayLayout) -> str:
    """LLVM IR text of the wrapper for arguments and outputs given as ``(itemsize, rank)``
    pairs (item sizes are powers of two, as NumPy's numeric dtypes have)."""
    for itemsize, _ in (*inputs, *outputs):
        if itemsize < 1 or itemsize & (itemsize - 1):
            raise ValueError(f"item size {itemsize} is not a power of two")
    module = ir.Module(name="lowering_python_call")
    _Wrapper(module, tuple(inputs), tuple(outputs), layout).build()
    return str(module)
