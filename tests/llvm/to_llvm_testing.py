"""Helpers for the to-llvm tests: compile loops-dialect modules, call them with NumPy arrays
through the native ABI, run them in the interpreter, and build small loop functions.

>>> from lowering.ir.types import F64
>>> module = elementwise_module({"twice": lambda b, x: add(b, x, x)}, [F64])
>>> compiled = compile_loops(module)
>>> compiled("twice", np.array([1.0, 2.5]))[0].tolist()
[2.0, 5.0]
"""
from __future__ import annotations

from typing import Callable

import numpy as np

import lowering.dialects  # noqa: F401  (registers every op)
from lowering.dialects.builtin.interpret import run_function
from lowering.dialects.builtin.ops import FuncOp, ModuleOp, ReturnOp
from lowering.dialects.loops import AllocOp, BufferType, DimOp, ForOp, LoadOp, ParallelOp, StoreOp
from lowering.dialects.scalar import AddOp, ConstantOp
from lowering.ir.builder import Builder
from lowering.ir.parser import parse_module
from lowering.ir.attributes import TypeAttr
from lowering.ir.types import INDEX, FunctionType, ScalarType
from lowering.llvm.cpu.abi import EntryPoint
from lowering.llvm.jit import JitLibrary, compile_object
from lowering.llvm.cpu.to_llvm import LoweredModule, translate_module


class CompiledCallError(Exception):
    """A compiled function returned a non-zero code."""

    def __init__(self, code: int, message: str, kind: str):
        super().__init__(f"[{code}] {message}")
        self.code, self.message, self.kind = code, message, kind


class Compiled:
    """A translated and JIT-compiled module; ``compiled(name, *arrays)`` calls function ``name``."""

    def __init__(self, lowered: LoweredModule):
        self.lowered = lowered
        self.library = JitLibrary(compile_object(lowered.llvm_ir))
        self._entries: dict[str, EntryPoint] = {}

    def entry(self, name: str) -> EntryPoint:
        if name not in self._entries:
            signature = self.lowered.signatures[name]
            self._entries[name] = EntryPoint(self.library.address(signature.entry), signature)
        return self._entries[name]

    def __call__(self, name: str, *inputs) -> list[np.ndarray]:
        code, outputs = self.entry(name)(*inputs)
        if code:
            message, location = self.lowered.errors[code]
            raise CompiledCallError(code, f"{message} ({location})", self.lowered.error_kinds[code])
        return outputs


def compile_loops(module, num_threads: int = 1, parallel_threshold: int = 1 << 16) -> Compiled:
    """Translate (IR text or a module) and compile."""
    if isinstance(module, str):
        module = parse_module(module)
    return Compiled(translate_module(module, num_threads=num_threads,
                                     parallel_threshold=parallel_threshold))


def interpret(module, name: str, *inputs) -> list:
    """Run function ``name`` of ``module`` in the reference interpreter (inputs are copied)."""
    if isinstance(module, str):
        module = parse_module(module)
    func = module.lookup(name)
    return run_function(func, [np.array(x, copy=True) for x in inputs])


# ---------------------------------------------------------------------------------------------
# Building loop functions


def tensor_module(arg_types, build, name: str = "f") -> ModuleOp:
    """A one-function tensor-level module: ``build(*args)`` returns the values to return (ops
    made with the tensor ops' ``build``, detached; they are put in order here)."""
    func = FuncOp.build(name, list(arg_types), [])
    outputs = list(build(*func.args))
    order, seen = [], set()

    def visit(value):
        owner = getattr(value, "op", None)
        if owner is None or id(owner) in seen:
            return
        seen.add(id(owner))
        for v in owner.operands:
            visit(v)
        order.append(owner)

    for value in outputs:
        visit(value)
    for op in order:
        func.body.block.append(op)
    func.body.block.append(ReturnOp.create(outputs))
    func.attributes["function_type"] = TypeAttr(FunctionType(tuple(arg_types),
                                                             tuple(v.type for v in outputs)))
    return ModuleOp.build([func])


def bufferize(module: ModuleOp, **options) -> ModuleOp:
    """A bufferized copy of a tensor-level module."""
    from lowering.passes.bufferize.bufferize import Bufferize
    copy = module.clone()
    Bufferize(**options).apply(copy)
    return copy


def strided_vector(element: ScalarType) -> BufferType:
    """A rank-1 buffer of any stride and offset (what a NumPy view may be)."""
    return BufferType((None,), element, strides=(None,), offset=None)


def add(b: Builder, x, y):
    return b.insert(AddOp.build(x, y)).result


def elementwise_function(name: str, body: Callable, input_elements, parallel: bool = True,
                         input_type: Callable = strided_vector) -> FuncOp:
    """``out[i] = body(builder, in0[i], in1[i], ...)`` over rank-1 inputs of equal length (the
    first input's length); the output element type is the type ``body``'s value has."""
    types = [input_type(e) for e in input_elements]
    # The result type is only known once the body is built: build it in a scratch function.
    scratch = FuncOp.build("scratch", [e for e in input_elements], [])
    value = body(Builder.at_end(scratch.body.block), *scratch.args)
    out_element = value.type
    func = FuncOp.build(name, types, [BufferType((None,), out_element)])
    b = Builder.at_end(func.body.block)
    c0 = b.insert(ConstantOp.build(0, INDEX)).result
    c1 = b.insert(ConstantOp.build(1, INDEX)).result
    n = b.insert(DimOp.build(func.args[0], 0)).result
    out = b.insert(AllocOp.build([n], out_element)).result

    def loop_body(lb: Builder, i):
        loaded = [lb.insert(LoadOp.build(a, [i])).result for a in func.args]
        lb.insert(StoreOp.build(body(lb, *loaded), out, [i]))

    if parallel:
        b.insert(ParallelOp.build([c0], [n], [c1], body=loop_body))
    else:
        b.insert(ForOp.build(c0, n, c1, body=lambda lb, i: loop_body(lb, i)))
    b.insert(ReturnOp.create([out]))
    return func


def scalar_function(name: str, make: Callable, input_elements) -> FuncOp:
    """``out[] = make(builder, in0[], in1[], ...)`` on rank-0 buffers: one scalar operation,
    without a loop (cheap to compile, so every op of every type can be tested)."""
    scratch = FuncOp.build("scratch", list(input_elements), [])
    out_element = make(Builder.at_end(scratch.body.block), *scratch.args).type
    func = FuncOp.build(name, [BufferType((), e) for e in input_elements],
                        [BufferType((), out_element)])
    b = Builder.at_end(func.body.block)
    loaded = [b.insert(LoadOp.build(a, [])).result for a in func.args]
    value = make(b, *loaded)
    out = b.insert(AllocOp.build([], out_element)).result
    b.insert(StoreOp.build(value, out, []))
    b.insert(ReturnOp.create([out]))
    return func


def elementwise_module(bodies: dict[str, Callable], input_elements, **options) -> ModuleOp:
    """A module with one ``elementwise_function`` per entry of ``bodies``."""
    return ModuleOp.build([elementwise_function(name, body, input_elements, **options)
                           for name, body in bodies.items()])


def same_bits(a: np.ndarray, b: np.ndarray) -> bool:
    """Equal dtype, shape and values, NaN equal to NaN (payloads ignored), -0.0 != 0.0."""
    a, b = np.asarray(a), np.asarray(b)
    if a.dtype != b.dtype or a.shape != b.shape:
        return False
    if a.dtype.kind == "f":
        nan = np.isnan(a) & np.isnan(b)
        bits = a.view(f"u{a.itemsize}") == b.view(f"u{b.itemsize}")
        return bool(np.all(nan | bits))
    return bool(np.array_equal(a, b))
