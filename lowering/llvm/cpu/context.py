"""What every lowering rule shares: the module being built, one function's lowering state, the
rule table of per-op rules, and failures (run-time errors with codes).

A rule is registered in the ``CPU_LOWERING`` rule table per op class (a rule for a base class
serves its subclasses), like an interpreter rule, and gets the ``FunctionLowering`` and the op;
it returns the lowered results (an ``ir.Value`` per scalar result, a ``BufferValue`` per buffer
result)::

    @CPU_LOWERING.register(DimOp)
    def _dim(fl, op):
        return [fl.get(op.buffer).sizes[op.axis]]

Run-time errors: ``fl.fail_if(cond, code)`` branches to a block that frees every allocation that
is live at that point (``loops.alloc`` results visible there and not yet deallocated) and leaves
the function with ``code`` in the function's own way (an ``i32`` return, or a flag set by a
parallel loop's body). Codes of ``loops.assert`` are positive and come from the op; codes of the
checks this backend adds itself (a bad input layout, out of memory, a window out of bounds) are
negative. ``ModuleLowering.errors`` maps every code to its message and location.

>>> state = ModuleLowering(num_threads=1, parallel_threshold=1)
>>> state.error_code("out of memory", None, kind="memory")
-1
>>> state.errors[-1], state.error_kinds[-1]
(('out of memory', '<unknown>:0:0'), 'memory')
"""
from __future__ import annotations

import itertools
from dataclasses import dataclass
from typing import Callable

import llvmlite.ir as ir

from lowering.ir.core import Block, IRError, Operation, TERMINATOR, Value
from lowering.ir.rules import RuleTable

from .values import I1, I8P, I32, I64, VOID, BufferValue, i64

Rule = Callable[["FunctionLowering", Operation], list]
CPU_LOWERING = RuleTable("CPU lowering", hint="only loops, scalar and func ops reach to-llvm")


class TranslationError(IRError):
    """The module cannot be translated to LLVM IR; the message names the op and its location."""


def translation_error(op: Operation | None, message: str) -> TranslationError:
    where = f"{op.name} at {op.location.short()}: " if op is not None else ""
    return TranslationError(where + message, op)


class DistinctMetadata(ir.values.MDValue):
    """A ``distinct !{...}`` metadata node (loop ids, access groups); its operands may include
    the node itself, as a loop id's first operand must."""

    def __init__(self, module: ir.Module, operands=()):
        super().__init__(module, list(operands), name=str(len(module.metadata)))

    def descr(self, buf):
        parts: list[str] = []
        super().descr(parts)
        buf += ("distinct " + parts[0], "\n")

    __hash__ = object.__hash__

    def __eq__(self, other):
        return self is other


class ModuleLowering:
    """The LLVM module being built and what is shared between its functions."""

    def __init__(self, num_threads: int, parallel_threshold: int, name: str = "lowering"):
        self.module = ir.Module(name=name)
        self.num_threads = num_threads
        self.parallel_threshold = parallel_threshold
        self.errors: dict[int, tuple[str, str]] = {}
        self.error_kinds: dict[int, str] = {}
        self._internal_codes = itertools.count(-1, -1)
        self._names = itertools.count()
        # func.func name -> (LLVM implementation function, the FuncOp)
        self.functions: dict[str, tuple[ir.Function, Operation]] = {}
        # (buffer type, bytes) of each loops.constant -> the name of its global
        self.constants: dict[tuple[str, bytes], str] = {}

    # -- error codes -----------------------------------------------------------------------

    def error_code(self, message: str, op: Operation | None, kind: str = "value") -> int:
        """A new negative code for a check this backend adds, with its message and location."""
        code = next(self._internal_codes)
        self.errors[code] = (message, op.location.short() if op is not None else "<unknown>:0:0")
        self.error_kinds[code] = kind
        return code

    def assert_code(self, op: Operation) -> int:
        """The code of a ``loops.assert`` (registered with its message; reused codes must agree)."""
        code, message, kind = op.error_code, op.message, op.kind
        entry = (message, op.location.short())
        if code in self.errors and self.errors[code][0] != message:
            raise translation_error(op, f"error_code {code} is used for two different messages: "
                                        f"{self.errors[code][0]!r} and {message!r}")
        self.errors.setdefault(code, entry)
        self.error_kinds[code] = kind
        return code

    # -- declarations ----------------------------------------------------------------------

    def unique_name(self, prefix: str) -> str:
        return f"{prefix}.{next(self._names)}"

    def function(self, name: str, fnty: ir.FunctionType) -> ir.Function:
        """The function ``name`` of the module, declared with ``fnty`` if it is new."""
        existing = self.module.globals.get(name)
        if existing is not None:
            if existing.function_type != fnty:
                raise TranslationError(f"symbol '{name}' is declared with two signatures: "
                                       f"{existing.function_type} and {fnty}")
            return existing
        return ir.Function(self.module, fnty, name)

    def aligned_alloc(self) -> ir.Function:
        fn = self.function("aligned_alloc", ir.FunctionType(I8P, [I64, I64]))
        if "noalias" not in fn.return_value.attributes:
            fn.return_value.add_attribute("noalias")
            fn.attributes.add("nounwind")
        return fn

    def free(self) -> ir.Function:
        fn = self.function("free", ir.FunctionType(VOID, [I8P]))
        fn.attributes.add("nounwind")
        return fn


FailureHandler = Callable[["FunctionLowering", ir.Value], None]


@dataclass(frozen=True)
class Allocation:
    """Memory a failure must free: the IR value it belongs to (None for the entry's own
    allocations) and a stack slot holding its pointer (nulled at run time once the memory is
    freed through another value, such as a buffer carried by a loop). LLVM turns the slots
    into registers."""

    value: Value | None
    slot: ir.Value


def return_code(fl: "FunctionLowering", code: ir.Value) -> None:
    """The failure handler of functions returning an ``i32`` status."""
    fl.builder.ret(code)


class FunctionLowering:
    """The state of lowering one region of IR into one LLVM function; ``rules`` is the rule
    table its ops are lowered with."""

    rules = CPU_LOWERING

    def __init__(self, state: ModuleLowering, fn: ir.Function, on_failure: FailureHandler,
                 outlined: bool = False):
        self.state = state
        self.fn = fn
        # The entry block holds the allocas only, then branches to where the code starts.
        self.entry_block = fn.append_basic_block("entry")
        start = fn.append_basic_block("start")
        self._entry_branch = ir.IRBuilder(self.entry_block).branch(start)
        self.builder = ir.IRBuilder(start)
        self.values: dict[Value, object] = {}
        # Buffers from loops.alloc (or returned by calls) visible here and not yet deallocated:
        # what a failure must free.
        self.live: list[Allocation] = []
        # Access groups of the parallel loops around the code being emitted.
        self.access_groups: list[DistinctMetadata] = []
        self.on_failure = on_failure
        # Inside an outlined parallel body, nested parallel loops run sequentially.
        self.outlined = outlined
        # The workspace of temporaries this function keeps between calls (allow_gc=False), set
        # by ``cpu.workspace.open_workspace``.
        self.workspace = None

    # -- values ----------------------------------------------------------------------------

    def get(self, value: Value):
        try:
            return self.values[value]
        except KeyError:
            raise TranslationError(f"value {value!r} is used before it is defined") from None

    def bind(self, value: Value, lowered) -> None:
        self.values[value] = lowered

    # -- ops -------------------------------------------------------------------------------

    def lower_op(self, op: Operation) -> None:
        results = self.rules.lookup(op, TranslationError)(self, op)
        results = [] if results is None else list(results)
        if len(results) != len(op.results):
            raise translation_error(op, f"lowering gave {len(results)} values for "
                                        f"{len(op.results)} results")
        for res, lowered in zip(op.results, results):
            self.bind(res, lowered)

    def lower_block(self, block: Block, args=()) -> Operation | None:
        """Bind the block's arguments, lower every op but the terminator, return the terminator."""
        for arg, lowered in zip(block.args, args):
            self.bind(arg, lowered)
        for op in block.ops:
            if TERMINATOR in op.traits and op is block.last_op:
                return op
            self.lower_op(op)
        return None

    # -- memory helpers ----------------------------------------------------------------------

    def alloca(self, ty: ir.Type, name: str = "") -> ir.Value:
        """Stack memory in the entry block (so loops do not grow the stack)."""
        entry_builder = ir.IRBuilder(self.entry_block)
        entry_builder.position_before(self._entry_branch)
        return entry_builder.alloca(ty, name=name)

    def tag_memory_access(self, instr: ir.Instruction) -> None:
        """Put a load or store in the access groups of the enclosing parallel loops."""
        if not self.access_groups:
            return
        groups = self.access_groups
        node = groups[0] if len(groups) == 1 else self.state.module.add_metadata(list(groups))
        instr.set_metadata("llvm.access.group", node)

    def free(self, ptr: ir.Value) -> None:
        self.builder.call(self.state.free(), [self.builder.bitcast(ptr, I8P)])

    def track(self, value: Value | None, pointer: ir.Value) -> None:
        """``pointer`` (from ``aligned_alloc``) is live until ``value`` is deallocated."""
        slot = self.alloca(I8P, name="live")
        self.builder.store(self.builder.bitcast(pointer, I8P), slot)
        self.live.append(Allocation(value, slot))

    def untrack(self, value: Value) -> bool:
        """``value`` was freed; False if it was not tracked itself (it may alias tracked memory)."""
        kept = [a for a in self.live if a.value is not value]
        found = len(kept) != len(self.live)
        self.live = kept
        return found

    def forget_freed(self, freed: ir.Value) -> None:
        """Memory was freed through a value that is not tracked (a loop-carried buffer): null
        the tracked pointers equal to it, so that no failure path frees it again."""
        b = self.builder
        freed = b.bitcast(freed, I8P)
        for a in self.live:
            current = b.load(a.slot)
            same = b.icmp_unsigned("==", current, freed)
            b.store(b.select(same, ir.Constant(I8P, None), current), a.slot)

    # -- failures ----------------------------------------------------------------------------

    def fail_if(self, cond: ir.Value, code: int | ir.Value) -> None:
        """If ``cond`` (i1) holds at run time, free the live allocations and fail with ``code``."""
        if isinstance(cond, ir.Constant) and not cond.constant:
            return
        fail = self.fn.append_basic_block("fail")
        ok = self.fn.append_basic_block("ok")
        branch = self.builder.cbranch(cond, fail, ok)
        branch.set_weights([1, 1 << 20])
        self.builder.position_at_end(fail)
        for a in reversed(self.live):
            self.free(self.builder.load(a.slot))
        self.on_failure(self, code if isinstance(code, ir.Value) else ir.Constant(I32, code))
        self.builder.position_at_end(ok)

    def check(self, ok: ir.Value, message: str, op: Operation, kind: str = "value") -> None:
        """Fail with a new error code (``message`` at ``op``'s location) unless ``ok`` holds."""
        if isinstance(ok, ir.Constant) and ok.constant:
            return
        code = self.state.error_code(message, op, kind)
        self.fail_if(self.builder.not_(ok), code)

    # -- small arithmetic helpers ------------------------------------------------------------

    def add(self, a: ir.Value, b: ir.Value) -> ir.Value:
        if isinstance(a, ir.Constant) and isinstance(b, ir.Constant):
            return i64(a.constant + b.constant)
        if isinstance(b, ir.Constant) and b.constant == 0:
            return a
        if isinstance(a, ir.Constant) and a.constant == 0:
            return b
        return self.builder.add(a, b, flags=["nsw"])

    def mul(self, a: ir.Value, b: ir.Value) -> ir.Value:
        if isinstance(a, ir.Constant) and isinstance(b, ir.Constant):
            return i64(a.constant * b.constant)
        for x, y in ((a, b), (b, a)):
            if isinstance(x, ir.Constant) and x.constant == 1:
                return y
            if isinstance(x, ir.Constant) and x.constant == 0:
                return i64(0)
        return self.builder.mul(a, b, flags=["nsw"])

    def mul_overflows(self, a: ir.Value, b: ir.Value) -> tuple[ir.Value, ir.Value]:
        """``a * b`` (wrapping) and an i1 that is true where the signed product overflows
        (``llvm.smul.with.overflow.i64``), folded when both sides are constants."""
        if isinstance(a, ir.Constant) and isinstance(b, ir.Constant):
            exact = a.constant * b.constant
            wrapped = (exact + 2 ** 63) % 2 ** 64 - 2 ** 63
            return i64(wrapped), ir.Constant(I1, int(wrapped != exact))
        for x, y in ((a, b), (b, a)):
            if isinstance(x, ir.Constant) and x.constant in (0, 1):
                return (y if x.constant else i64(0)), ir.Constant(I1, 0)
        pair = self.builder.smul_with_overflow(a, b)
        return self.builder.extract_value(pair, 0), self.builder.extract_value(pair, 1)

    def add_overflows(self, a: ir.Value, b: ir.Value) -> tuple[ir.Value, ir.Value]:
        """``a + b`` (wrapping) and an i1 that is true where the signed sum overflows
        (``llvm.sadd.with.overflow.i64``), folded when both sides are constants."""
        if isinstance(a, ir.Constant) and isinstance(b, ir.Constant):
            exact = a.constant + b.constant
            wrapped = (exact + 2 ** 63) % 2 ** 64 - 2 ** 63
            return i64(wrapped), ir.Constant(I1, int(wrapped != exact))
        for x, y in ((a, b), (b, a)):
            if isinstance(x, ir.Constant) and x.constant == 0:
                return y, ir.Constant(I1, 0)
        pair = self.builder.sadd_with_overflow(a, b)
        return self.builder.extract_value(pair, 0), self.builder.extract_value(pair, 1)

    def checked_product(self, factors) -> tuple[ir.Value, ir.Value]:
        """The product of non-negative i64 ``factors`` and an i1 that is true where it (or a
        partial product of the non-zero factors) does not fit in an i64: a zero factor does not
        excuse an overflow of the others, as in NumPy."""
        product: ir.Value = i64(1)
        nonzero: ir.Value = i64(1)  # the product of max(factor, 1), which is what must fit
        overflow: ir.Value = ir.Constant(I1, 0)
        for factor in factors:
            product, _ = self.mul_overflows(product, factor)
            at_least_one = i64(max(factor.constant, 1)) if isinstance(factor, ir.Constant) \
                else self.builder.select(self.icmp("<", factor, i64(1)), i64(1), factor)
            nonzero, over = self.mul_overflows(nonzero, at_least_one)
            overflow = self.any_of([overflow, over])
        return product, overflow

    def all_of(self, conds) -> ir.Value:
        """The conjunction of i1 values (constants folded)."""
        result: ir.Value = ir.Constant(I1, 1)
        for c in conds:
            if isinstance(c, ir.Constant):
                if not c.constant:
                    return ir.Constant(I1, 0)
                continue
            result = c if isinstance(result, ir.Constant) else self.builder.and_(result, c)
        return result

    def negate(self, cond: ir.Value) -> ir.Value:
        """The negation of an i1 value (a constant folded)."""
        if isinstance(cond, ir.Constant):
            return ir.Constant(I1, int(not cond.constant))
        return self.builder.not_(cond)

    def any_of(self, conds) -> ir.Value:
        """The disjunction of i1 values (constants folded)."""
        result: ir.Value = ir.Constant(I1, 0)
        for c in conds:
            if isinstance(c, ir.Constant):
                if c.constant:
                    return ir.Constant(I1, 1)
                continue
            result = c if isinstance(result, ir.Constant) else self.builder.or_(result, c)
        return result

    def icmp(self, pred: str, a: ir.Value, b: ir.Value) -> ir.Value:
        """Signed i64 comparison, folded when both sides are constants."""
        if isinstance(a, ir.Constant) and isinstance(b, ir.Constant):
            value = {"<": a.constant < b.constant, "<=": a.constant <= b.constant,
                     ">": a.constant > b.constant, ">=": a.constant >= b.constant,
                     "==": a.constant == b.constant, "!=": a.constant != b.constant}[pred]
            return ir.Constant(I1, int(value))
        return self.builder.icmp_signed(pred, a, b)


def buffer_of(fl: FunctionLowering, value: Value) -> BufferValue:
    lowered = fl.get(value)
    if not isinstance(lowered, BufferValue):
        raise TranslationError(f"expected a buffer, got {value.type}")
    return lowered
