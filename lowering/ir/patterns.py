"""Rewrite patterns and the greedy worklist driver that applies them to a fixpoint.

A pattern says which op types it applies to and rewrites one op through a ``Rewriter``. Small
pattern tables read like tinygrad's or xDSL's: one function per rewrite, dispatched on op type::

    @rewrite_pattern(ExpOp)
    def exp_of_log(op, rewriter) -> bool:
        if not isinstance(op.input.owner, LogOp):
            return False
        rewriter.replace_op(op, [op.input.owner.input])
        return True

    apply_patterns_greedily(module, [exp_of_log, OtherPattern()])

Folding. With ``fold=True`` the driver calls ``op.fold()``, which returns ``None`` or one entry per
result: an existing ``Value``, or an ``Attribute`` meaning "this constant". Returning the op's own
results means the op was changed in place. Turning an Attribute into a constant op is the
dialect's business: the driver calls the classmethod

    ``OpClass.materialize_constant(attribute, type, location) -> Operation | None``

on the folded op's class (for ops of the tensor dialect, the tensor dialect implements it). The
new op must have one result of ``type``; ``None``, or no such classmethod, means the op is not
folded.

>>> from lowering.ir.core import Block, Operation, PURE, Region
>>> from lowering.ir.types import F32
>>> class Dead(Operation):
...     name = "doc.dead"
...     traits = frozenset({PURE})
>>> block = Block(ops=[Dead(result_types=[F32])])
>>> holder = Operation(regions=[Region([block])])
>>> bool(apply_patterns_greedily(holder, [])), len(block)
(True, 0)
"""
from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from typing import Callable, ClassVar, Iterable

from .attributes import Attribute
from .core import PURE, TERMINATOR, IRError, Operation, Value
from .location import default_location
from .rewriter import RewriteListener, Rewriter


class RewritePattern:
    """A rewrite of one op. Subclasses set ``op_types`` and implement ``match_and_rewrite``.

    ``op_types`` holds op classes (subclasses match too) or op names; empty means every op.
    Patterns with a higher ``benefit`` are tried first. ``match_and_rewrite`` returns True after
    rewriting ``op`` through ``rewriter``, and False, having changed nothing, when it does not
    apply.

    >>> class Nothing(RewritePattern):
    ...     op_types = ("test.op",)
    ...     def match_and_rewrite(self, op, rewriter):
    ...         return False
    >>> Nothing().name
    'Nothing'
    """

    op_types: ClassVar[tuple] = ()
    benefit: ClassVar[int] = 1

    @property
    def name(self) -> str:
        return type(self).__name__

    def match_and_rewrite(self, op: Operation, rewriter: Rewriter) -> bool:
        raise NotImplementedError(f"{self.name} does not implement match_and_rewrite")

    def __repr__(self):
        return f"<pattern {self.name}>"


class FunctionPattern(RewritePattern):
    """A pattern made from a function ``fn(op, rewriter) -> bool`` (see ``rewrite_pattern``)."""

    def __init__(self, fn: Callable[[Operation, Rewriter], bool], op_types: tuple,
                 benefit: int = 1):
        self.fn = fn
        self.op_types = tuple(op_types)
        self.benefit = benefit

    @property
    def name(self) -> str:
        return self.fn.__name__

    def match_and_rewrite(self, op, rewriter):
        return self.fn(op, rewriter)


def rewrite_pattern(*op_types, benefit: int = 1):
    """Decorator: make a function ``fn(op, rewriter) -> bool`` a pattern for ``op_types``.

    >>> @rewrite_pattern("test.a", "test.b")
    ... def noop(op, rewriter):
    ...     return False
    >>> noop.name, noop.op_types
    ('noop', ('test.a', 'test.b'))
    """
    def wrap(fn):
        return FunctionPattern(fn, op_types, benefit)
    return wrap


class PatternSet:
    """Patterns indexed by the op types they apply to, best benefit first.

    >>> from lowering.ir.core import Operation
    >>> p = rewrite_pattern("test.a")(lambda op, rw: False)
    >>> len(PatternSet([p]).for_op(Operation()))
    0
    """

    def __init__(self, patterns: Iterable[RewritePattern | type[RewritePattern]]):
        self.patterns: list[RewritePattern] = [_instance(p) for p in patterns]
        self._by_kind: dict[tuple, list[RewritePattern]] = {}

    def for_op(self, op: Operation) -> list[RewritePattern]:
        """The patterns that apply to ``op``, in the order to try them."""
        key = (type(op), op.name)
        found = self._by_kind.get(key)
        if found is None:
            found = [p for p in self.patterns if _applies(p, op)]
            found.sort(key=lambda p: -p.benefit)  # stable: equal benefits keep the given order
            self._by_kind[key] = found
        return found


def _instance(p) -> RewritePattern:
    if isinstance(p, type) and issubclass(p, RewritePattern):
        return p()
    if not isinstance(p, RewritePattern):
        raise TypeError(f"{p!r} is not a RewritePattern (wrap functions with @rewrite_pattern)")
    return p


def _applies(pattern: RewritePattern, op: Operation) -> bool:
    if not pattern.op_types:
        return True
    return any(op.name == t if isinstance(t, str) else isinstance(op, t) for t in pattern.op_types)


def is_trivially_dead(op: Operation) -> bool:
    """A PURE op (not a terminator) whose results nobody reads: erasing it changes nothing.

    >>> from lowering.ir.core import Operation
    >>> is_trivially_dead(Operation())  # no PURE trait: it may have side effects
    False
    """
    return (PURE in op.traits and TERMINATOR not in op.traits
            and not any(res.uses for res in op.results))


class RewriteNotConverged(IRError):
    """The greedy driver hit its iteration or rewrite cap while patterns still applied."""


@dataclass
class GreedyRewriteResult:
    """What ``apply_patterns_greedily`` did; true when anything changed."""

    changed: bool
    converged: bool
    iterations: int
    rewrites: int

    def __bool__(self) -> bool:
        return self.changed


def apply_patterns_greedily(root: Operation, patterns: Iterable, max_iterations: int = 10,
                            fold: bool = True, max_rewrites: int | None = None,
                            raise_on_cap: bool = True) -> GreedyRewriteResult:
    """Apply ``patterns`` (plus folding and dead-op removal) to the ops inside ``root``'s regions.

    One iteration processes a worklist of every op nested in ``root`` (producers before users),
    re-queuing ops that rewrites create, change or make dead; iterations repeat until one changes
    nothing. If iteration ``max_iterations`` still changed something, the rewrites did not
    converge: ``RewriteNotConverged`` names the rewrites of the last iteration, or with
    ``raise_on_cap=False`` the result says ``converged=False``. More than ``max_rewrites`` rewrites
    in one iteration (default: 20 per op, at least 1000) always raise: that is patterns undoing
    each other without end. ``root`` itself is never rewritten.
    """
    driver = _GreedyDriver(PatternSet(patterns), fold)
    return driver.run(root, max_iterations, max_rewrites, raise_on_cap)


class _Worklist:
    """A stack of ops without duplicates; removal is lazy (removed ops are skipped when popped)."""

    def __init__(self):
        self._stack: list[Operation] = []
        self._live: set[int] = set()  # ids of ops in the stack that are still wanted

    def push(self, op: Operation) -> None:
        if id(op) not in self._live:
            self._live.add(id(op))
            self._stack.append(op)

    def pop(self) -> Operation | None:
        while self._stack:
            op = self._stack.pop()
            if id(op) in self._live:
                self._live.discard(id(op))
                return op
        return None

    def remove(self, op: Operation) -> None:
        self._live.discard(id(op))


class _GreedyDriver(RewriteListener):
    def __init__(self, patterns: PatternSet, fold: bool):
        self.patterns = patterns
        self.fold = fold
        self.worklist = _Worklist()
        self.rewriter = Rewriter(self)
        self.applied: Counter = Counter()  # (what, op name) -> count, for the last iteration
        self.root: Operation | None = None

    # -- listener: keep the worklist right ----------------------------------------------------

    def op_inserted(self, op):
        for nested in op.walk():
            self.worklist.push(nested)

    def op_modified(self, op):
        self.worklist.push(op)

    def op_erased(self, op):
        self.worklist.remove(op)
        for value in op.operands:  # a producer may have lost its last user
            owner = value.owner
            if isinstance(owner, Operation):
                self.worklist.push(owner)

    # -- the loop -----------------------------------------------------------------------------

    def run(self, root, max_iterations, max_rewrites, raise_on_cap) -> GreedyRewriteResult:
        if max_iterations < 1:
            raise ValueError(f"max_iterations must be at least 1, got {max_iterations}")
        changed_at_all = False
        total = 0
        iteration = 0
        converged = False
        self.root = root
        while iteration < max_iterations:
            iteration += 1
            ops = [op for reg in root.regions for block in reg.blocks for top in block.ops
                   for op in top.walk()]
            for op in reversed(ops):  # the stack pops them in program order
                self.worklist.push(op)
            budget = max_rewrites if max_rewrites is not None else max(1000, 20 * len(ops))
            self.applied.clear()
            rewrites, exhausted = self._process(budget)
            total += rewrites
            changed_at_all = changed_at_all or rewrites > 0
            if exhausted:
                raise RewriteNotConverged(self._non_convergence_message(iteration, None), root)
            if rewrites == 0:
                converged = True
                break
        if not converged and raise_on_cap:
            message = self._non_convergence_message(iteration, max_iterations)
            raise RewriteNotConverged(message, root)
        return GreedyRewriteResult(changed_at_all, converged, iteration, total)

    def _process(self, budget: int) -> tuple[int, bool]:
        """Empty the worklist: (the number of rewrites, whether they ran over ``budget``)."""
        rewrites = 0
        while (op := self.worklist.pop()) is not None:
            if not self._inside_root(op):  # erased or detached since it was queued, or an outsider
                continue
            if self._erase_if_dead(op) or (self.fold and self._fold(op)) or self._rewrite(op):
                rewrites += 1
                if rewrites > budget:
                    return rewrites, True
        return rewrites, False

    def _inside_root(self, op: Operation) -> bool:
        parent = op.parent_op
        while parent is not None and parent is not self.root:
            parent = parent.parent_op
        return parent is not None

    def _non_convergence_message(self, iteration, max_iterations) -> str:
        done = ", ".join(f"{what} on {name} x{n}"
                         for (what, name), n in self.applied.most_common(8))
        if max_iterations is None:
            why = f"too many rewrites in iteration {iteration}; do patterns undo each other?"
        else:
            why = f"still rewriting after {max_iterations} iterations"
        return f"pattern rewrites did not converge ({why}); last rewrites: {done or 'none'}"

    # -- the three kinds of rewrite ---------------------------------------------------------

    def _erase_if_dead(self, op: Operation) -> bool:
        if not is_trivially_dead(op):
            return False
        self.rewriter.erase_op(op)
        self.applied[("erase", op.name)] += 1
        return True

    def _fold(self, op: Operation) -> bool:
        with default_location(op.location):
            folded = op.fold()
        if folded is None:
            return False
        folded = list(folded)
        if len(folded) != len(op.results):
            raise IRError(f"{op.name}.fold returned {len(folded)} values for "
                          f"{len(op.results)} results", op)
        own = [v is r for v, r in zip(folded, op.results)]
        if all(own):  # changed in place
            with self.rewriter.modify_op_in_place(op):
                pass
            self.applied[("fold in place", op.name)] += 1
            return True
        if any(own):
            raise IRError(f"{op.name}.fold returned some of its own results among replacements", op)
        values: list[Value] = []
        constants: list[Operation] = []
        for res, item in zip(op.results, folded):
            if isinstance(item, Value):
                values.append(item)
            elif isinstance(item, Attribute):
                const = _materialize(op, item, res.type)
                if const is None:
                    for c in constants:
                        c.erase()
                    return False
                constants.append(const)
                values.append(const.results[0])
            else:
                raise IRError(f"{op.name}.fold returned {type(item).__name__}; "
                              f"expected a Value or an Attribute", op)
        if len(constants) == 1 and len(op.results) == 1 and _same_constant(constants[0], op):
            constants[0].erase()  # op already is this constant
            return False
        self.rewriter.insert_op_before(constants, op)
        self.rewriter.replace_op(op, values)
        self.applied[("fold", op.name)] += 1
        return True

    def _rewrite(self, op: Operation) -> bool:
        for pattern in self.patterns.for_op(op):
            before = self.rewriter.changes
            with default_location(op.location):
                matched = pattern.match_and_rewrite(op, self.rewriter)
            changed = self.rewriter.changes != before
            if matched is True and changed:
                self.applied[(pattern.name, op.name)] += 1
                return True
            if matched is True:
                raise IRError(f"pattern {pattern.name} reported a rewrite of {op.name} but made "
                              f"no change through the rewriter", op)
            if changed:
                raise IRError(f"pattern {pattern.name} changed the IR but returned {matched!r}; "
                              f"it must return True after a rewrite", op)
        return False


def _materialize(op: Operation, value: Attribute, result_type) -> Operation | None:
    hook = getattr(type(op), "materialize_constant", None)
    if hook is None:
        return None
    with default_location(op.location):
        const = hook(value, result_type, op.location)
    if const is None:
        return None
    if len(const.results) != 1 or const.results[0].type != result_type:
        raise IRError(f"{type(op).__name__}.materialize_constant made {const.name} with results "
                      f"{[str(r.type) for r in const.results]}; expected one {result_type}", op)
    return const


def _same_constant(const: Operation, op: Operation) -> bool:
    return (const.name == op.name and not const.operands and not op.operands
            and const.attributes == op.attributes and not const.regions and not op.regions
            and [r.type for r in const.results] == [r.type for r in op.results])

