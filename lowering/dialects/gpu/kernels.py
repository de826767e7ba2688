"""Kernels and launches: ``gpu.module``, ``gpu.func``, ``gpu.return``, ``gpu.launch_func``,
``gpu.launch`` and ``gpu.terminator``.

A ``gpu.module`` sits in the builtin module beside the host ``func.func`` and holds ``gpu.func``
kernels. The host launches one with ``gpu.launch_func``, naming it by ``@module`` and ``@kernel``
symbols; ``gpu.launch`` is the inline form that map-to-gpu produces before outline-kernels moves
its body into a kernel. Grid and block sizes are three ``index`` operands each (x, y, z).

>>> from lowering.ir.types import F32, INDEX
>>> from lowering.dialects.loops.types import BufferType
>>> kernel = GpuFuncOp.build("scale", [BufferType((None,), F32, memory_space="device"), INDEX],
...                          body=lambda b, x, n: None)
>>> kernel.body.block.last_op.name, kernel.is_kernel
('gpu.return', True)
>>> GpuModuleOp.build("kernels", [kernel]).lookup("scale") is kernel
True
"""
from __future__ import annotations

from typing import Callable, Sequence

from lowering.ir.attributes import StringAttr, SymbolRefAttr, TypeAttr, UnitAttr
from lowering.ir.builder import Builder
from lowering.ir.constraints import AnyFunctionType, Index, TypeAttrOf
from lowering.ir.core import (ISOLATED, SYMBOL, TERMINATOR, Block, Operation, Region, Value,
                              VerifyError, attr, operand, region, register_op, var_operand)
from lowering.ir.traits import HasParent
from lowering.ir.types import FunctionType

from lowering.dialects.builtin.ops import ModuleOp, parse_function, print_function

from .checks import ON_HOST, is_kernel_argument_type


def _three(op_name: str, what: str, values: Sequence[Value]) -> list[Value]:
    values = list(values)
    if len(values) != 3:
        raise TypeError(f"{op_name}: {what} takes 3 index values (x, y, z), got {len(values)}")
    return values


def _one_block(op: Operation, reg: Region, what: str) -> Block:
    if len(reg.blocks) != 1:
        raise VerifyError(f"{op.name}: {what} must have exactly one block, got {len(reg.blocks)}",
                          op)
    return reg.block


def _fill(block: Block, body: Callable | None, args, terminator: type[Operation]) -> None:
    """Let ``body(builder, *args)`` add ops to ``block``, then end it with ``terminator``."""
    if body is None:
        return
    body(Builder.at_end(block), *args)
    block.append(terminator.create(location=block.last_op.location if block.last_op else None))


@register_op
class GpuModuleOp(Operation):
    """A container of kernels: ``"gpu.module"() ({ gpu.func ... }) {sym_name = "kernels"}``.

    One block without arguments and without terminator, like ``builtin.module``.
    """

    name = "gpu.module"
    traits = frozenset({ISOLATED, SYMBOL, HasParent(ModuleOp)})
    assembly_format = "symbol($sym_name) attr-dict-with-keyword $body"
    body = region()
    sym_name = attr(StringAttr)

    @classmethod
    def build(cls, name: str, ops: Sequence[Operation] = (), location=None) -> "GpuModuleOp":
        return cls.create(attributes={"sym_name": StringAttr(name)},
                          regions=[Region([Block(ops=ops)])], location=location)

    @property
    def kernels(self) -> list["GpuFuncOp"]:
        return [op for op in self.body.block.ops if isinstance(op, GpuFuncOp)]

    def lookup(self, name: str) -> "GpuFuncOp | None":
        """The ``gpu.func`` called ``name``, or None."""
        for op in self.body.block.ops:
            if isinstance(op, GpuFuncOp) and op.sym_name == name:
                return op
        return None

    def verify_(self):
        block = _one_block(self, self.body, "the body")
        if block.args:
            raise VerifyError(f"{self.name}: the body block takes no arguments", self)
        names: set[str] = set()
        for op in block.ops:
            if not isinstance(op, GpuFuncOp):
                raise VerifyError(f"{self.name} holds only gpu.func kernels, found {op.name}", op)
            if op.sym_name in names:
                raise VerifyError(f"{self.name} @{self.sym_name}: kernel @{op.sym_name} is "
                                  f"defined twice", op)
            names.add(op.sym_name)


@register_op
class GpuFuncOp(Operation):
    """A kernel: ``"gpu.func"() ({ ^bb0(%x: !loops.buffer<?xf32, space="device">): ...
    "gpu.return"() : () -> () }) {function_type = (...) -> (), kernel, sym_name = "k"}``.

    Its arguments are device buffers and scalars; it returns nothing (results are written to
    buffers). The body is one block ended by ``gpu.return``.
    """

    name = "gpu.func"
    traits = frozenset({ISOLATED, SYMBOL, HasParent(GpuModuleOp)})
    body = region()
    sym_name = attr(StringAttr)
    function_type = attr(TypeAttrOf(AnyFunctionType))
    kernel = attr(UnitAttr)
    print_pretty = print_function
    parse_pretty = classmethod(parse_function)

    @classmethod
    def build(cls, name: str, input_types, body: Callable | None = None,
              location=None) -> "GpuFuncOp":
        """A kernel taking ``input_types``; ``body(builder, *args)``, when given, fills the entry
        block, which then gets its ``gpu.return``. Without ``body`` the block stays empty."""
        ftype = FunctionType(tuple(input_types), ())
        block = Block(ftype.inputs)
        op = cls.create(attributes={"sym_name": StringAttr(name), "function_type": TypeAttr(ftype),
                                    "kernel": UnitAttr()},
                        regions=[Region([block])], location=location)
        _fill(block, body, block.args, ReturnOp)
        return op

    @property
    def args(self):
        return self.body.block.args

    @property
    def is_kernel(self) -> bool:
        return isinstance(self.attributes.get("kernel"), UnitAttr)

    def verify_(self):
        ftype = self.function_type
        if ftype.results:
            raise VerifyError(f"{self.name} @{self.sym_name}: a kernel returns nothing (it writes "
                              f"buffers), but function_type has results "
                              f"({', '.join(map(str, ftype.results))})", self)
        for i, t in enumerate(ftype.inputs):
            if not is_kernel_argument_type(t):
                raise VerifyError(f"{self.name} @{self.sym_name}: argument #{i} has type {t}; a "
                                  f"kernel takes device buffers (space \"device\") and scalars",
                                  self)
        block = _one_block(self, self.body, "the body")
        if [a.type for a in block.args] != list(ftype.inputs):
            raise VerifyError(f"{self.name} @{self.sym_name}: entry block argument types differ "
                              f"from function_type inputs", self)
        if not isinstance(block.last_op, ReturnOp):
            raise VerifyError(f"{self.name} @{self.sym_name}: the body must end with gpu.return",
                              self)


@register_op
class ReturnOp(Operation):
    """Ends a ``gpu.func``: ``"gpu.return"() : () -> ()``."""

    name = "gpu.return"
    traits = frozenset({TERMINATOR, HasParent(GpuFuncOp)})
    assembly_format = "attr-dict"

    @classmethod
    def build(cls, location=None) -> "ReturnOp":
        return cls.create(location=location)


# The grid and block sizes in the launches' assembly formats, and their type (index).
_GRID = ("`(` $grid_x, $grid_y, $grid_z `)` `threads` `(` $block_x, $block_y, $block_z `)`")
_GRID_TYPE = "type($grid_x, $grid_y, $grid_z, $block_x, $block_y, $block_z)"


class _GridOp(Operation):
    """Base of the launches: grid sizes then block sizes, six ``index`` operands (x, y, z)."""

    traits = frozenset({ON_HOST})
    grid_x = operand(Index)
    grid_y = operand(Index)
    grid_z = operand(Index)
    block_x = operand(Index)
    block_y = operand(Index)
    block_z = operand(Index)

    @property
    def grid_sizes(self) -> tuple[Value, Value, Value]:
        return tuple(self.operands[0:3])

    @property
    def block_sizes(self) -> tuple[Value, Value, Value]:
        return tuple(self.operands[3:6])


def enclosing_module(op: Operation) -> ModuleOp | None:
    """The innermost ``builtin.module`` around ``op``, or None."""
    for ancestor in op.ancestors():
        if isinstance(ancestor, ModuleOp):
            return ancestor
    return None


def resolve_kernel(op: "LaunchFuncOp") -> GpuFuncOp:
    """The ``gpu.func`` that ``op`` launches, looked up from the enclosing ``builtin.module``;
    a VerifyError names what is missing."""
    target = f"@{op.module}::@{op.kernel}"
    module = enclosing_module(op)
    if module is None:
        raise VerifyError(f"{op.name}: cannot resolve {target} outside a builtin.module", op)
    gpu_module = module.lookup(op.module)
    if gpu_module is None:
        raise VerifyError(f"{op.name}: no gpu.module named @{op.module} in the enclosing module",
                          op)
    if not isinstance(gpu_module, GpuModuleOp):
        raise VerifyError(f"{op.name}: @{op.module} is a {gpu_module.name}, not a gpu.module", op)
    kernel = gpu_module.lookup(op.kernel)
    if kernel is None:
        known = ", ".join(f"@{k.sym_name}" for k in gpu_module.kernels) or "none"
        raise VerifyError(f"{op.name}: no kernel {target} (kernels of @{op.module}: {known})", op)
    return kernel


@register_op
class LaunchFuncOp(_GridOp):
    """Launches the kernel ``@module::@kernel`` from the host, asynchronously; the operands are
    the grid sizes, the block sizes, then the kernel's arguments::

        "gpu.launch_func"(%gx, %gy, %gz, %bx, %by, %bz, %a, %n) {kernel = @k, module = @kernels}
            : (index, index, index, index, index, index, !loops.buffer<...>, index) -> ()
    """

    name = "gpu.launch_func"
    assembly_format = ("$module $kernel `blocks` " + _GRID
                       + " (`args` `(` $args `:` type($args) `)`)? attr-dict : " + _GRID_TYPE)
    args = var_operand()
    module = attr(SymbolRefAttr)
    kernel = attr(SymbolRefAttr)

    @classmethod
    def build(cls, module: str, kernel: str, grid: Sequence[Value], block: Sequence[Value],
              args: Sequence[Value] = (), location=None) -> "LaunchFuncOp":
        """Launch ``@module::@kernel`` on ``grid`` x ``block`` (three index Values each)."""
        operands = [*_three(cls.name, "grid", grid), *_three(cls.name, "block", block), *args]
        return cls.create(operands=operands, attributes={"module": SymbolRefAttr(module),
                                                         "kernel": SymbolRefAttr(kernel)},
                          location=location)

    def callee(self) -> GpuFuncOp:
        """The launched kernel (a VerifyError when it cannot be found)."""
        return resolve_kernel(self)

    def verify_(self):
        kernel = resolve_kernel(self)
        want = list(kernel.function_type.inputs) if isinstance(kernel.function_type,
                                                               FunctionType) else []
        got = [v.type for v in self.args]
        if len(got) != len(want):
            raise VerifyError(f"{self.name}: @{self.module}::@{self.kernel} takes {len(want)} "
                              f"argument(s), got {len(got)}", self)
        for i, (g, w) in enumerate(zip(got, want)):
            if g != w:
                raise VerifyError(f"{self.name}: argument #{i} has type {g}, but "
                                  f"@{self.module}::@{self.kernel} takes {w}", self)


@register_op
class LaunchOp(_GridOp):
    """An inline kernel: ``"gpu.launch"(%gx, %gy, %gz, %bx, %by, %bz) ({ ... "gpu.terminator"()
    : () -> () }) : (index, index, index, index, index, index) -> ()``.

    The body (one block without arguments) runs once per thread and may use values defined
    above the launch; thread and block ids come from ``gpu.thread_id`` and friends.
    """

    name = "gpu.launch"
    assembly_format = "`blocks` " + _GRID + " : " + _GRID_TYPE + " attr-dict-with-keyword $body"
    body = region()

    @classmethod
    def build(cls, grid: Sequence[Value], block: Sequence[Value], body: Callable | None = None,
              location=None) -> "LaunchOp":
        """The launch with an empty body, or with ``body(builder)`` filling it (then
        ``gpu.terminator`` is appended)."""
        operands = [*_three(cls.name, "grid", grid), *_three(cls.name, "block", block)]
        entry = Block()
        op = cls.create(operands=operands, regions=[Region([entry])], location=location)
        _fill(entry, body, (), TerminatorOp)
        return op

    def verify_(self):
        block = _one_block(self, self.body, "the body")
        if block.args:
            raise VerifyError(f"{self.name}: the body block takes no arguments (ids come from "
                              f"gpu.thread_id and gpu.block_id)", self)
        if not isinstance(block.last_op, TerminatorOp):
            raise VerifyError(f"{self.name}: the body must end with gpu.terminator", self)


@register_op
class TerminatorOp(Operation):
    """Ends the body of a ``gpu.launch``: ``"gpu.terminator"() : () -> ()``."""

    name = "gpu.terminator"
    traits = frozenset({TERMINATOR, HasParent(LaunchOp)})
    assembly_format = "attr-dict"

    @classmethod
    def build(cls, location=None) -> "TerminatorOp":
        return cls.create(location=location)


