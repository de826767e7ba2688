"""``inplace``: write results into the memory of inputs that nothing reads afterwards.

Theano's ``inplace`` stage, on buffers: the decisions need to know which memory a value lives
in, so they are made on loops IR, after ``bufferize``. The pass does three things:

1. **Shared variables updated in place.** The ``lowering.shared_updates = [[r, a], ...]`` attribute
   of a function says that result ``r`` is the new value of the shared variable read as argument
   ``a``. When the result is an allocation written only after the last read of the argument's old
   value (or read element for element by the loop that writes it: ``w - lr * g``), and its sizes are
   provably those of the argument, the result is computed into the argument's buffer: the allocation
   disappears, the result is no longer returned, and the function's ``lowering.updated_in_place =
   [[r, a], ...]`` attribute says where it is (``r`` numbered as before the pass;
   ``lowering.shared_updates`` lists the other pairs, renumbered, and ``lowering.result_devices``
   loses the entries of the results taken out). The argument's type becomes contiguous (the caller
   must pass contiguous, writable memory there: ``function()`` keeps such shared variables
   contiguous), so loops over it vectorize and BLAS can write into it.

   A failed call must change no shared variable: no op that may stop the function with an error
   (a check, an allocation, see ``buffer_analysis.may_fail``) may run after the first write into
   such an argument. The ops writing the updates are first moved as late as their data allow
   (past checks, allocations and everything else they do not depend on); an update whose writes
   would still come before a fallible op is not done in place.

2. **Dead temporaries reused by elementwise loops.** An allocation whose first writer is a loop
   nest reading an earlier temporary element for element, at the same indices it writes, when
   that temporary is not read afterwards and has the same type and provably the same sizes,
   takes the temporary's memory instead (Theano's ``Elemwise{...}[(0, 0)]``).

3. **Mutable inputs.** Arguments listed in the function's ``lowering.mutable_args`` attribute
   (``In(x, mutable=True)``) may be overwritten the same way when nothing reads them afterwards.
   Other inputs are never written.

At the tensor level (a function with tensor ops, as in the optimization pipeline of
``function()``), the pass only marks the function with ``lowering.allow_inplace``: the CPU
pipeline runs the pass again after ``bufferize`` where that mark is present, so
``optimizer_excluding=inplace`` and modes without the stage turn in-place updates off.

>>> from lowering.ir.parser import parse_module
>>> from lowering.ir.printer import print_op
>>> m = parse_module('''
... func.func @step(%w: !loops.buffer<?xf32, strides=[?], offset=?>, %g: !loops.buffer<?xf32>)
...     -> !loops.buffer<?xf32> attributes {lowering.shared_updates = [[0, 0]]} {
...   %c0 = "scalar.constant"() {value = 0 : index} : () -> index
...   %c1 = "scalar.constant"() {value = 1 : index} : () -> index
...   %n = loops.dim %w, 0 : !loops.buffer<?xf32, strides=[?], offset=?>
...   %m = loops.dim %g, 0 : !loops.buffer<?xf32>
...   %ok = "scalar.eq"(%n, %m) : (index, index) -> i1
...   loops.assert %ok, "sizes differ" {error_code = 1 : i64}
...   %new = loops.alloc(%n) : !loops.buffer<?xf32>
...   loops.parallel (%i) = (%c0) to (%n) step (%c1) {
...     %a = loops.load %w[%i] : !loops.buffer<?xf32, strides=[?], offset=?>
...     %b = loops.load %g[%i] : !loops.buffer<?xf32>
...     %d = "scalar.sub"(%a, %b) : (f32, f32) -> f32
...     loops.store %d, %new[%i] : !loops.buffer<?xf32>
...     loops.yield
...   }
...   func.return %new : !loops.buffer<?xf32>
... }''')
>>> Inplace().apply(m)
>>> func = m.functions[0]
>>> str(func.function_type), UPDATED_IN_PLACE.get(func)
('(!loops.buffer<?xf32>, !loops.buffer<?xf32>) -> ()', [(0, 0)])
>>> print(print_op(func.body.block.last_op.prev_op))
loops.parallel (%i) = (%c0) to (%n) step (%c1) {
  %a = loops.load %w[%i] : !loops.buffer<?xf32>
  %b = loops.load %g[%i] : !loops.buffer<?xf32>
  %d = scalar.sub %a, %b : f32
  loops.store %d, %w[%i] : !loops.buffer<?xf32>
  loops.yield
}
"""
from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Callable

from lowering.dialects.builtin import FuncOp, ReturnOp
from lowering.dialects.function_attrs import (ALLOW_INPLACE, MUTABLE_ARGS, RESULT_DEVICES,
                                              SHARED_UPDATES, UPDATED_IN_PLACE)
from lowering.dialects.gpu import ToDeviceOp, ToHostOp
from lowering.dialects.loops import (AllocOp, BroadcastViewOp, CopyOp, DimOp, FillOp, LoadOp,
                                     ReshapeViewOp, StoreOp, SubviewOp, TransposeViewOp,
                                     broadcast_type, subview_type, transpose_type)
from lowering.dialects.loops.views import ViewOp
from lowering.ir.attributes import TypeAttr
from lowering.ir.core import Block, BlockArgument, Operation, OpResult, Value
from lowering.ir.passes import ModulePass, option, register_pass
from lowering.ir.rewriter import Rewriter
from lowering.ir.types import FunctionType, TensorType

from .bufferize.bufferize import BufferMap
from .buffer_analysis import (SizeFacts, aliases, content_uses, effects, escapes, is_buffer,
                              is_returned, may_fail, reads_then_writes_pointwise, top_ancestor)

@register_pass
class Inplace(ModulePass):
    """Write updates of shared variables into their buffers and results into dead inputs'."""

    name = "inplace"
    calls_may_fail: bool = option(False, "external calls may stop with an error (a BLAS with "
                                         "32-bit integers checks its sizes): no in-place update "
                                         "before one")

    def apply(self, module: Operation) -> None:
        rewriter = Rewriter()
        for func in _functions(module):
            if _has_tensors(func):
                ALLOW_INPLACE.set(func, True, rewriter)
            else:
                run_inplace(func, self.calls_may_fail, rewriter)


@dataclass(frozen=True)
class Decision:
    """One buffer the pass did away with: ``replaced`` (the allocation's result, now erased) lives
    in ``into`` (an argument or an earlier allocation); for a shared variable's update,
    ``result`` is the function's result it was (numbered as in ``lowering.updated_in_place``)."""

    replaced: Value
    into: Value
    result: int | None = None


def run_inplace(func: FuncOp, calls_may_fail: bool = False,
                rewriter: Rewriter | None = None) -> list[Decision]:
    """Apply the pass to one loops-level function, changing it through ``rewriter``; returns
    what it did (see the module doc for an example, and ``bufferize_in_place`` for the
    decisions in tensor-level terms)."""
    rewriter = rewriter if rewriter is not None else Rewriter()
    decisions = _update_shared_in_place(func, calls_may_fail, rewriter)
    decisions += _reuse_dead_inputs(func, rewriter)
    return decisions


def _functions(module: Operation) -> list[FuncOp]:
    if isinstance(module, FuncOp):
        return [module]
    return [op for op in module.walk() if isinstance(op, FuncOp)]


def _has_tensors(func: FuncOp) -> bool:
    ftype = func.function_type
    return any(isinstance(t, TensorType) for t in (*ftype.inputs, *ftype.results)) or any(
        isinstance(r.type, TensorType) for op in func.walk() for r in op.results)


# ---------------------------------------------------------------------------------------------
# 1. Shared variables updated in place


@dataclass
class _Update:
    result: int
    arg: int
    new: Value  # the allocation holding the new value (returned)
    old: BlockArgument  # the variable's buffer


def _update_shared_in_place(func: FuncOp, calls_may_fail: bool,
                            rewriter: Rewriter) -> list[Decision]:
    block = func.body.block
    ret = block.last_op
    candidates = [c for c in (_candidate(func, r, a) for r, a in SHARED_UPDATES.get(func, []))
                  if c is not None]
    chosen: list[_Update] = []
    for c in candidates:
        if all(other.old is not c.old for other in chosen):
            chosen.append(c)
    if not chosen:
        return []
    for c in chosen:
        _sink_writers(block, c.new, rewriter)
    facts = SizeFacts(func)
    chosen = [c for c in chosen if _update_is_safe(block, c, facts)]
    while chosen and not _nothing_fails_after_writes(block, chosen, calls_may_fail):
        chosen.remove(min(chosen, key=lambda c: _position(block, _first_writer(block, c.new))))
    if not chosen:
        return []
    for c in chosen:
        _retype(c.old, c.new.type, rewriter)
        rewriter.replace_all_uses_with(c.new, c.old)
        rewriter.erase_op(c.new.op)
    _erase_self_copies(block, rewriter)
    done = sorted((c.result, c.arg) for c in chosen)
    removed = {r for r, _ in done}
    kept = [i for i in range(len(ret.operands)) if i not in removed]
    with rewriter.modify_op_in_place(ret):
        ret.set_operands([ret.operands[i] for i in kept])
    _set_function_type(func, rewriter)
    renumber = {old: new for new, old in enumerate(kept)}
    rest = [(renumber[r], a) for r, a in SHARED_UPDATES.get(func, []) if r in renumber]
    SHARED_UPDATES.set(func, rest or None, rewriter)
    if RESULT_DEVICES.present(func):
        devices = RESULT_DEVICES.get(func)
        RESULT_DEVICES.set(func, [devices[i] for i in kept], rewriter)
    earlier = UPDATED_IN_PLACE.get(func, [])
    gone = {r for r, _ in earlier}
    UPDATED_IN_PLACE.set(func, sorted(earlier + [(_original_index(r, gone), a) for r, a in done]),
                         rewriter)
    return [Decision(c.new, c.old, _original_index(c.result, gone)) for c in chosen]


def _original_index(index: int, gone: set[int]) -> int:
    """Result ``index`` numbered as before the results in ``gone`` (removed by an earlier run of
    the pass, in the original numbering) were taken out."""
    original = -1
    while index >= 0:
        original += 1
        if original not in gone:
            index -= 1
    return original


def _candidate(func: FuncOp, r: int, a: int) -> _Update | None:
    """The update of argument ``a`` by result ``r``, if it has the form the pass handles: a
    fresh allocation of the argument's element type and shape, returned once, kept by no op."""
    block = func.body.block
    ret = block.last_op
    if not (0 <= r < len(ret.operands) and 0 <= a < len(func.args)):
        return None
    new, old = ret.operands[r], func.args[a]
    if not (isinstance(new, OpResult) and isinstance(new.op, AllocOp) and new.op.parent is block):
        return None
    if sum(v is new for v in ret.operands) != 1 or escapes(new) or not is_buffer(old):
        return None
    if (old.type.element, old.type.shape, old.type.memory_space) != \
            (new.type.element, new.type.shape, new.type.memory_space):
        return None
    return _Update(r, a, new, old)


def _position(block: Block, op: Operation) -> int:
    for i, other in enumerate(block.ops):
        if other is op:
            return i
    raise ValueError("the op is not in the block")


def _writers(block: Block, buffer: Value) -> list[Operation]:
    """The top-level ops that access ``buffer``'s elements (not the return), in block order."""
    found = {id(top_ancestor(u, block)): top_ancestor(u, block) for u in content_uses(buffer)
             if not isinstance(u, ReturnOp)}
    return [op for op in block.ops if id(op) in found]


def _first_writer(block: Block, buffer: Value) -> Operation | None:
    writers = _writers(block, buffer)
    return writers[0] if writers else None


def _sink_writers(block: Block, buffer: Value, rewriter: Rewriter) -> None:
    """Move each op accessing ``buffer`` as late as the ops after it allow: past every op that
    neither uses its results nor touches memory it touches (last ones first)."""
    cache: dict[int, object] = {}

    def effects_of(op):
        if id(op) not in cache:
            cache[id(op)] = effects(op)
        return cache[id(op)]

    for op in reversed(_writers(block, buffer)):
        mine = effects_of(op)
        results = {id(r) for inner in op.walk() for r in inner.results}
        stop = op.next_op
        while stop is not None and stop is not block.last_op:
            uses_mine = any(id(v) in results for inner in stop.walk() for v in inner.operands)
            if uses_mine or mine.conflicts_with(effects_of(stop)):
                break
            stop = stop.next_op
        if stop is not op.next_op:
            rewriter.insert_op_before(op, stop)  # moves it


def _update_is_safe(block: Block, c: _Update, facts: SizeFacts) -> bool:
    """The argument's old value is read only before the first write of the new one (or element
    for element by that op itself), and the two have provably the same sizes."""
    first = _first_writer(block, c.new)
    if first is None or not facts.same_sizes(c.old, c.new, before=first):
        return False
    position = {id(op): i for i, op in enumerate(block.ops)}
    for user in content_uses(c.old):
        top = top_ancestor(user, block)
        if top is None or isinstance(user, ReturnOp):
            return False
        if position[id(top)] < position[id(first)]:
            if c.old in effects(top).writes:
                return False
            continue
        if top is first and reads_then_writes_pointwise(first, c.old, c.new):
            continue
        return False
    return True


def _nothing_fails_after_writes(block: Block, chosen: list[_Update], calls_may_fail) -> bool:
    """Whether no op after the first write into an updated argument may stop the function (the
    allocations that the updates replace do not count: they go)."""
    firsts = {id(_first_writer(block, c.new)) for c in chosen}
    replaced = {id(c.new.op) for c in chosen}
    started = False
    for op in block.ops:
        started = started or id(op) in firsts
        if not started or op is block.last_op or id(op) in replaced:
            continue
        if isinstance(op, CopyOp) and any(op.source is c.old and op.target is c.new
                                          for c in chosen):
            continue  # becomes a copy of the argument onto itself, which is erased
        if may_fail(op, calls_may_fail):
            return False
    return True


def _retype(value: Value, new_type, rewriter: Rewriter) -> None:
    """Give ``value`` (an argument) ``new_type`` and re-infer the types of its views."""
    rewriter.set_type(value, new_type)
    func = value.block.parent_op if isinstance(value, BlockArgument) else None
    if isinstance(func, FuncOp):
        _set_function_type(func, rewriter, results=func.function_type.results)
    _reinfer_views(value, rewriter)


def _set_function_type(func: FuncOp, rewriter: Rewriter, results=None) -> None:
    """Make ``func``'s type that of its arguments and returned values (or ``results``)."""
    if results is None:
        results = tuple(v.type for v in func.body.block.last_op.operands)
    rewriter.set_attribute(func, "function_type", TypeAttr(FunctionType(
        tuple(a.type for a in func.args), tuple(results))))


def _reinfer_views(value: Value, rewriter: Rewriter) -> None:
    """Re-infer the result types of the views of ``value`` (and of theirs) from its type."""
    for use in list(value.uses):
        op = use.op
        if isinstance(op, ViewOp) and use.index == 0:
            rewriter.set_type(op.result, _view_type(op, value.type))
            _reinfer_views(op.result, rewriter)


def _view_type(op: ViewOp, source):
    if isinstance(op, SubviewOp):
        return subview_type(source, *op.statics(), op.int_list("drop_dims"))
    if isinstance(op, TransposeViewOp):
        return transpose_type(source, op.int_list("pattern"))
    if isinstance(op, BroadcastViewOp):
        return broadcast_type(source, op.result.type.shape)
    if isinstance(op, ReshapeViewOp):
        return replace(source, shape=op.result.type.shape)
    raise TypeError(f"no type rule for {op.name}")


def _erase_self_copies(block: Block, rewriter: Rewriter) -> None:
    for op in list(block.ops):
        if isinstance(op, CopyOp) and op.source is op.target:
            rewriter.erase_op(op)


# ---------------------------------------------------------------------------------------------
# 2 and 3. Dead temporaries and mutable inputs


_LAYOUT_FREE = (LoadOp, StoreOp, DimOp, CopyOp, FillOp)


def _reuse_dead_inputs(func: FuncOp, rewriter: Rewriter) -> list[Decision]:
    """Give an allocation the memory of a buffer its first writer reads element for element
    and nothing reads afterwards: a temporary of the same type, or a mutable argument."""
    block = func.body.block
    mutable = {id(func.args[i]) for i in MUTABLE_ARGS.get(func, []) if 0 <= i < len(func.args)}
    facts = SizeFacts(func)
    decisions = []
    for alloc in [op for op in block.ops if isinstance(op, AllocOp)]:
        new = alloc.result
        if escapes(new):
            continue
        first = _first_writer(block, new)
        if first is None:
            continue
        for source in _loaded_roots(first):
            if source is new or not _may_take(source, new, mutable, block):
                continue
            if not facts.same_sizes(source, new, before=alloc):
                continue
            if not _dead_after(block, source, first, new):
                continue
            decisions.append(Decision(new, source))
            rewriter.replace_all_uses_with(new, source)
            rewriter.erase_op(alloc)
            if source.type != new.type:
                _reinfer_views(source, rewriter)
            _erase_self_copies(block, rewriter)
            break
    return decisions


def _loaded_roots(op: Operation) -> list[Value]:
    """The buffers ``op`` loads from directly (not through views), in first-load order."""
    found: dict[int, Value] = {}
    for inner in op.walk():
        if isinstance(inner, LoadOp) and not (isinstance(inner.buffer, OpResult) and
                                              isinstance(inner.buffer.op, ViewOp)):
            found.setdefault(id(inner.buffer), inner.buffer)
        elif isinstance(inner, CopyOp):
            found.setdefault(id(inner.source), inner.source)
    return list(found.values())


# Ops whose result is a fresh buffer of their own: an allocation, or a copy to the other memory
# (the GPU's ``GpuFromHost``, so ``GpuElemwise{sqr}[(0, 0)]`` squares in the copy's memory).
_FRESH_BUFFERS = (AllocOp, ToDeviceOp, ToHostOp)


def _may_take(source: Value, new: Value, mutable: set[int], block: Block) -> bool:
    """Whether ``new`` may live in ``source``'s memory as far as the buffers themselves go."""
    if isinstance(source, OpResult) and isinstance(source.op, _FRESH_BUFFERS):
        return source.op.parent is block and source.type == new.type and \
            not escapes(source) and not is_returned(source)
    if id(source) in mutable:  # its layout is the caller's: what reads it must not assume one
        same = (source.type.element, source.type.shape) == (new.type.element, new.type.shape)
        return same and not is_returned(new) and all(
            isinstance(u.op, _LAYOUT_FREE) or isinstance(u.op, ViewOp) and u.index == 0
            for value in aliases(new) for u in value.uses)
    return False


def _dead_after(block: Block, source: Value, first: Operation, new: Value) -> bool:
    """Nothing reads ``source`` after ``first``, which reads it element for element."""
    position = {id(op): i for i, op in enumerate(block.ops)}
    for user in content_uses(source):
        top = top_ancestor(user, block)
        if top is None:
            return False
        if position[id(top)] > position[id(first)]:
            return False
    return reads_then_writes_pointwise(first, source, new)


# ---------------------------------------------------------------------------------------------
# The CPU pipeline: bufferize, then inplace where allowed, and what it did for the tensor view


@dataclass
class InplaceReport:
    """What ``bufferize_in_place`` did: for each tensor-level op (by position in its function's
    block) the results written into an operand's memory, ``{result: operand}`` (Theano's
    ``inplace_pattern``), and the function's ``lowering.updated_in_place`` pairs."""

    patterns: dict[int, dict[int, int]]
    updated: list[tuple[int, int]]


def bufferize_in_place(module: Operation, bufferize: Callable[[Operation], list[BufferMap]],
                       calls_may_fail: bool = False) -> tuple[Operation, InplaceReport]:
    """A loops-level copy of ``module`` (one function at the tensor level, left unchanged):
    ``bufferize(copy)`` lowers it (``Bufferize(...).lower``: it returns the ``BufferMap`` of each
    function it rebuilt), then the pass runs where the function has ``lowering.allow_inplace``.
    The buffer map says which tensor value each buffer a decision names was made for, so that
    each decision can be told as Theano's ``{result: operand}`` of a tensor op.

    >>> from lowering.ir.parser import parse_module
    >>> from lowering.passes.bufferize.bufferize import Bufferize
    >>> m = parse_module('''
    ... func.func @f(%w: tensor<?xf32>, %g: tensor<?xf32>) -> tensor<?xf32>
    ...     attributes {lowering.shared_updates = [[0, 0]], lowering.allow_inplace} {
    ...   %e = "tensor.exp"(%g) : (tensor<?xf32>) -> tensor<?xf32>
    ...   %new = "tensor.sub"(%w, %e) : (tensor<?xf32>, tensor<?xf32>) -> tensor<?xf32>
    ...   func.return %new : tensor<?xf32>
    ... }''')
    >>> loops, report = bufferize_in_place(m, Bufferize().lower)
    >>> report.patterns, report.updated  # op 1 (the sub) computes result 0 into operand 0
    ({1: {0: 0}}, [(0, 0)])
    """
    copy = module.clone()
    funcs = _functions(copy)
    if len(funcs) != 1:
        bufferize(copy)
        return copy, InplaceReport({}, [])
    tensor_func = funcs[0]
    allowed = ALLOW_INPLACE.present(tensor_func)
    maps = bufferize(copy)
    func = _functions(copy)[0]
    buffers = maps[0] if maps else _unchanged(func)
    decisions = run_inplace(func, calls_may_fail) if allowed else []
    return copy, InplaceReport(_patterns(decisions, buffers, tensor_func),
                               UPDATED_IN_PLACE.get(func, []))


def _unchanged(func: FuncOp) -> BufferMap:
    """The buffer map of a function bufferize left as it was: each value holds itself."""
    buffers = BufferMap(func, func)
    for value in (*func.args, *(r for op in func.body.block.ops for r in op.results)):
        buffers.record(value, value)
    return buffers


def _patterns(decisions: list[Decision], buffers: BufferMap,
              tensor_func: FuncOp) -> dict[int, dict[int, int]]:
    """The decisions as ``{op position: {result: operand}}`` of ``tensor_func``'s ops: which
    operand's memory each tensor result now lives in."""
    position = {id(op): i for i, op in enumerate(tensor_func.body.block.ops)}
    tensor_results = list(tensor_func.body.block.last_op.operands)
    holds: dict[int, Value | None] = {}  # a buffer -> the tensor value it holds now

    def held(buffer: Value) -> Value | None:
        return holds[id(buffer)] if id(buffer) in holds else buffers.tensor_value(buffer)

    patterns: dict[int, dict[int, int]] = {}
    for d in decisions:
        # An update computes that result of the function; a reused buffer, its allocation's.
        value = tensor_results[d.result] if d.result is not None else \
            buffers.tensor_value(d.replaced)
        if not (isinstance(value, OpResult) and id(value.op) in position):
            value = None
        into = held(d.into)
        holds[id(d.into)] = value
        if value is None or into is None:
            continue
        operand = next((k for k, v in enumerate(value.op.operands) if v is into), None)
        if operand is not None:
            patterns.setdefault(position[id(value.op)], {})[value.index] = operand
    return patterns
