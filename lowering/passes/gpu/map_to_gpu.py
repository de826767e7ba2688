"""``map-to-gpu``: run the work of host functions that reads or writes device memory as
``gpu.launch`` kernels.

It runs on loops IR whose device values are ``!loops.buffer<..., space="device">`` (what
``bufferize`` makes of values placed on the device). Each construct of a function body that
reads or writes device memory becomes one or more ``gpu.launch`` ops in its place:

- loop nests whose iterations are independent (elementwise work, broadcasting, indexing,
  set/inc_subtensor, copies), ``loops.fill`` and ``loops.copy``: a grid-stride loop over the
  flattened iteration space (``gpu.maps``);
- reductions, with accumulators in memory or carried by ``loops.for``: a block tree reduction
  per output, a thread per output, or a grid-wide reduction to one value with atomics
  (``gpu.reductions``); a nest storing into several accumulators is first split into
  one nest per accumulator (the shared elementwise work is computed in each);
- a ``loops.parallel`` over a few pieces of work (the host's column tiles): a block per
  piece, its threads sharing the piece (``gpu.tiles``);
- ``loops.call @cblas_?dot/gemv/gemm``: a reduction, threads per row, shared-memory tiles
  (``gpu.blas``);
- anything else that cannot be proven independent runs on a single GPU thread, never on the
  host.

Sizes, views, ``loops.alloc``/``dealloc``, ``loops.assert`` and index arithmetic stay on the
host: they only compute descriptors. A ``loops.for`` that only chooses which of those and which
constructs run (a branch: no loads or stores of its own) stays on the host too, its body mapped
construct by construct, and so does a ``loops.if`` (each of its blocks).

**Scalars computed on the device** (a reduction to one value, a load of one element, a dot) live
in a rank-0 device buffer made for them; kernels that use them, or scalar arithmetic on them,
read that buffer, and the host copies it back (``gpu.to_host``) only where a host op needs the
number (a check, a size), right before that op.

After the pass no host op reads or writes device memory (a ``PassFailure`` names the op
otherwise), and no kernel reads host memory.

Options: ``block-size`` (threads per block, a power of two up to 1024), ``max-blocks`` (the
grid is capped there; grid-stride loops cover the rest), ``elements-per-thread`` (elements a
thread handles per step in contiguous elementwise kernels, a grid's width apart),
``tile-size`` (the side of gemm's shared-memory tiles; blocks of ``tile-size`` squared
threads). docs/gpu.md describes every mapping.

>>> from lowering.ir.parser import parse_module
>>> m = parse_module('''
... func.func @f(%x: !loops.buffer<?xf32, space="device">) {
...   %c0 = "scalar.constant"() {value = 0 : index} : () -> index
...   %c1 = "scalar.constant"() {value = 1 : index} : () -> index
...   %n = loops.dim %x, 0 : !loops.buffer<?xf32, space="device">
...   loops.parallel (%i) = (%c0) to (%n) step (%c1) {
...     %v = loops.load %x[%i] : !loops.buffer<?xf32, space="device">
...     %e = "scalar.exp"(%v) : (f32) -> f32
...     loops.store %e, %x[%i] : !loops.buffer<?xf32, space="device">
...     loops.yield
...   }
...   func.return
... }''')
>>> MapToGpu(block_size=64).apply(m)
>>> [op.name for op in m.functions[0].body.block.ops if op.name.startswith("gpu")]
['gpu.launch']
"""
from __future__ import annotations

from lowering.dialects.builtin import FuncOp
from lowering.dialects.gpu import LaunchOp, TerminatorOp, ToHostOp
from lowering.dialects.loops import (AllocOp, AssertOp, CallOp, CopyOp, DeallocOp, DimOp,
                                     FillOp, ForOp, IfOp, LoadOp, ParallelOp, StoreOp)
from lowering.dialects.loops.control import WhileOp
from lowering.ir.attributes import StringAttr
from lowering.ir.builder import Builder
from lowering.ir.captures import used_from_outside
from lowering.ir.core import PURE, Block, Operation, OpResult, Value
from lowering.ir.passes import ModulePass, PassFailure, option, register_pass
from lowering.ir.types import INDEX, ScalarType

from ..buffer_analysis import SizeFacts, top_ancestor
from ..bufferize.core import Arith
from ..dce import eliminate_dead_code
from .blas import map_blas_call
from .host_loops import is_host_loop
from .kernel import ConstantsAtTop, KernelBuilder
from .maps import map_fill_or_copy, single_thread
from .nests import accessed_buffers, constant_int, is_device_buffer, touches_device, touches_host
from .plan import map_loop


@register_pass
class MapToGpu(ModulePass):
    """Run host work on device memory as gpu.launch kernels (grid-stride, tree reductions)."""

    name = "map-to-gpu"
    block_size: int = option(256, "threads per block (a power of two, at most 1024)",
                             minimum=1, maximum=1024, power_of_two=True)
    max_blocks: int = option(1024, "most blocks in a grid; grid-stride loops cover the rest",
                             minimum=1)
    elements_per_thread: int = option(4, "elements per thread and step (a grid's width apart) "
                                         "in contiguous elementwise kernels", minimum=1)
    tile_size: int = option(16, "side of the shared-memory tiles of gemm (tile-size^2 threads "
                                "per block)", minimum=1, maximum=32)

    def apply(self, module: Operation) -> None:
        codes = [op.error_code for op in module.walk() if isinstance(op, AssertOp)]
        counter = iter(range(max(codes, default=0) + 1, 1 << 62))
        for func in [op for op in module.walk() if isinstance(op, FuncOp)]:
            FunctionMapper(func, self, counter).run()
            check_memory_spaces(func)


class Site:
    """Where one construct is replaced: ``host`` inserts before it, ``launch`` adds kernels
    there, ``kernel_values`` gives a kernel the device-computed scalars the construct uses."""

    def __init__(self, mapper: "FunctionMapper", op: Operation):
        self.mapper = mapper
        self.op = op
        self.options = mapper.options
        self.host = Builder.before(op)

    def host_arith(self) -> Arith:
        """Folding index arithmetic inserted on the host before the construct."""
        return Arith(self.host, self.mapper.host_const)

    def launch(self, name: str, grid, block, fill) -> LaunchOp:
        """A ``gpu.launch`` of ``grid`` blocks (1-d) of ``block`` threads (an int, or (x, y))
        before the construct, its body made by ``fill(kernel_builder)``."""
        a = self.host_arith()
        sizes = block if isinstance(block, tuple) else (block, 1)
        one = a.value(1)
        launch = LaunchOp.build([a.value(grid), one, one],
                                [a.value(sizes[0]), a.value(sizes[1]), one],
                                location=self.op.location)
        launch.attributes["kernel_name"] = StringAttr(name)
        self.host.insert(launch)
        kb = KernelBuilder(launch.body.block, sizes[0])
        fill(kb)
        launch.body.block.append(TerminatorOp.build(location=self.op.location))
        kb.finish()
        return launch

    def kernel_values(self, kb: KernelBuilder) -> dict[Value, Value]:
        """Kernel-side values for the device-computed scalars the construct reads from outside
        (loaded from their device buffers, arithmetic on them recomputed)."""
        values: dict[Value, Value] = {}
        for v in used_from_outside(self.op):
            if self.mapper.is_device_value(v):
                self.mapper.materialize(kb, v, values)
        return values

    def size(self, buffer: Value, axis: int):
        """The size of dimension ``axis`` of ``buffer`` on the host: an int when static, the
        size an allocation was made with, or a ``loops.dim``."""
        static = buffer.type.shape[axis]
        if static is not None:
            return static
        if isinstance(buffer, OpResult) and isinstance(buffer.op, AllocOp):
            return buffer.op.sizes[buffer.type.shape[:axis].count(None)]
        return self.host.insert(DimOp.build(buffer, axis)).result

    def same_size(self, buffer: Value, axis: int, size) -> bool:
        """Whether dimension ``axis`` of ``buffer`` is ``size`` (an index Value) at run time."""
        static = buffer.type.shape[axis]
        size = constant_int(size)
        if static is not None and isinstance(size, int):
            return static == size
        facts = self.mapper.facts
        before = top_ancestor(self.op, facts.block)
        return facts.equal(facts.dim_key(buffer, axis), size, before=before)

    def check(self, condition, message: str) -> None:
        """A ``loops.assert`` of ``condition`` before the construct (nothing when it is known to
        hold; a PassFailure when it is known not to)."""
        if condition is True:
            return
        if condition is False:
            raise PassFailure(f"map-to-gpu: {message}", self.op)
        self.host.insert(AssertOp.build(condition, message, next(self.mapper.error_codes),
                                        location=self.op.location))


class FunctionMapper:
    """Maps one host function (see the module docstring)."""

    def __init__(self, func: FuncOp, options: MapToGpu, error_codes):
        self.func = func
        self.options = options
        self.error_codes = error_codes
        self.entry: Block = func.body.block
        self.facts = SizeFacts(func)
        self._host_consts = ConstantsAtTop(self.entry)
        self.mapped = False  # whether any construct became kernels
        self.slots: dict[Value, Value] = {}  # a device-computed scalar -> its rank-0 buffer
        self._readbacks: dict[Value, list[Operation]] = {}
        self._device_value: dict[Value, bool] = {}

    # -- host values ----------------------------------------------------------------------------

    def host_const(self, value, t: ScalarType = INDEX) -> Value:
        """A ``scalar.constant`` at the top of the function (one per value and type)."""
        return self._host_consts(value, t)

    def is_device_value(self, v: Value) -> bool:
        """Whether ``v`` is a scalar computed on the device, or scalar arithmetic on one."""
        known = self._device_value.get(v)
        if known is not None:
            return known
        result = v in self.slots or (
            isinstance(v, OpResult) and v.op.name.startswith("scalar.")
            and PURE in v.op.traits and not v.op.regions
            and any(self.is_device_value(o) for o in v.op.operands))
        self._device_value[v] = result
        return result

    def materialize(self, kb: KernelBuilder, v: Value, values: dict) -> Value:
        """``v`` (a device value) inside the kernel ``kb`` is building."""
        found = values.get(v)
        if found is not None:
            return found
        if v in self.slots:
            found = kb.b.insert(LoadOp.build(self.slots[v], [])).result
        else:
            operands = {o: self.materialize(kb, o, values) for o in v.op.operands
                        if self.is_device_value(o)}
            new = kb.b.insert(v.op.clone(operands))
            found = new.results[v.index]
        values[v] = found
        return found

    # -- the walk -------------------------------------------------------------------------------

    def run(self) -> None:
        self.map_block(self.entry)
        self.settle()

    def map_block(self, block: Block) -> None:
        for op in list(block.ops):
            self.map_op(op)

    def map_op(self, op: Operation) -> None:
        if not touches_device(op):
            return
        if isinstance(op, (ForOp, WhileOp)) and is_host_loop(op):
            self.map_block(op.body.block)
            return
        if isinstance(op, IfOp):  # the host decides; each block is mapped construct by construct
            for region in op.regions:
                self.map_block(region.block)
            return
        host = touches_host(op)
        if host:
            raise PassFailure(f"map-to-gpu: {op.name} at {op.location.short()} reads or writes "
                              f"both device memory and host memory ({host[0].name} at "
                              f"{host[0].location.short()}); a kernel cannot reach host memory",
                              op)
        self.mapped = True
        site = Site(self, op)
        results = list(op.results)
        slots = [self.new_slot(site, r) for r in results]
        if isinstance(op, (FillOp, CopyOp)):
            map_fill_or_copy(site, op)
        elif isinstance(op, StoreOp):
            single_thread(site, [op], "store")
        elif isinstance(op, LoadOp):
            single_thread(site, [op], "load", results_to=list(zip(results, slots)))
        elif isinstance(op, CallOp):
            map_blas_call(site, op, slots[0] if slots else None)
        elif isinstance(op, (ParallelOp, ForOp)):
            map_loop(site, op, slots)
        else:
            raise PassFailure(f"map-to-gpu: no GPU mapping for {op.name} at "
                              f"{op.location.short()}, which reads or writes device memory", op)
        for r, slot in zip(results, slots):
            self.read_back(site, r, slot)
        op.erase()

    # -- scalars computed on the device ---------------------------------------------------------

    def new_slot(self, site: Site, value: Value) -> Value:
        """A rank-0 device buffer for ``value``, allocated before the construct."""
        if not isinstance(value.type, ScalarType):
            raise PassFailure(f"map-to-gpu: {value.owner.name} gives a {value.type}, not a "
                              f"scalar", value.owner)
        return site.host.insert(AllocOp.build([], value.type, memory_space="device")).result

    def read_back(self, site: Site, value: Value, slot: Value) -> None:
        """Copy ``slot`` to the host after the construct and make every use of ``value`` read
        the copy; kernels read ``slot`` instead (``settle`` drops or moves the copy)."""
        b = site.host
        copy = b.insert(ToHostOp.build(slot, location=site.op.location))
        load = b.insert(LoadOp.build(copy.result, [], location=site.op.location))
        free = b.insert(DeallocOp.build(copy.result, location=site.op.location))
        value.replace_all_uses_with(load.result)
        self.slots[load.result] = slot
        self._readbacks[load.result] = [copy, load, free]

    def settle(self) -> None:
        """Drop host copies of device scalars nothing on the host reads, move the others next
        to their first reader, and free each scalar's buffer after its last use."""
        if not self.mapped:
            return
        eliminate_dead_code(self.func)
        for value, (copy, load, free) in self._readbacks.items():
            block = copy.parent
            if not value.uses:
                for op in (free, load, copy):
                    op.erase()
                continue
            first = min((top_ancestor(use.op, block) for use in value.uses),
                        key=lambda o: _position(o))
            for op in (copy, load, free):
                op.detach()
                block.insert_before(op, first)
        for slot in dict.fromkeys(self.slots.values()):
            block = slot.op.parent
            last = max((top_ancestor(use.op, block) for use in slot.uses),
                       key=lambda o: _position(o), default=slot.op)
            block.insert_after(DeallocOp.build(slot, location=slot.op.location), last)


def _position(op: Operation) -> int:
    count = 0
    while op.prev_op is not None:
        op = op.prev_op
        count += 1
    return count


def check_memory_spaces(func: FuncOp) -> None:
    """No host op reads or writes device memory, no kernel op host memory (a PassFailure
    names the op)."""
    for op in func.walk():
        in_kernel = any(isinstance(a, LaunchOp) for a in op.ancestors())
        for buffer in accessed_buffers(op):
            on_device = is_device_buffer(buffer)
            if on_device and not in_kernel:
                raise PassFailure(f"map-to-gpu: {op.name} at {op.location.short()} reads or "
                                  f"writes device memory on the host", op)
            if in_kernel and not on_device:
                raise PassFailure(f"map-to-gpu: {op.name} at {op.location.short()} reads or "
                                  f"writes host memory inside a kernel", op)

