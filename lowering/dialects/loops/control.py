"""Loops: ``loops.for`` (sequential, with loop-carried values), ``loops.parallel`` (a
multi-dimensional loop whose iterations are independent), the conditional ``loops.if`` (runs one
of two blocks) and their terminator ``loops.yield``.

A reduction is a ``for`` that carries its accumulator; ``parallel`` loops carry nothing.

>>> from lowering.ir.types import F32, INDEX
>>> from lowering.ir.core import Block
>>> block = Block([INDEX, INDEX, F32])
>>> lb, ub, init = block.args
>>> loop = ForOp.build(lb, ub, lb, [init], body=lambda b, i, acc: acc)
>>> [str(a.type) for a in loop.body.block.args], str(loop.results[0].type)
(['index', 'f32'], 'f32')
"""
from __future__ import annotations

import itertools
from typing import Callable

import numpy as np

from lowering.ir.builder import Builder
from lowering.ir.constraints import Bool, Index
from lowering.ir.core import TERMINATOR, Block, Operation, Region, Value, VerifyError, operand, \
    region, register_op, var_operand, var_result
from lowering.ir.interpreter import INTERPRETER
from lowering.ir.traits import HasParent
from lowering.ir.types import I1, INDEX

from .checks import check_count
from .runtime import as_index
from .syntax import all_index, well_formed


def _fill_body(block: Block, body: Callable | None, args) -> None:
    """Let ``body(builder, *args)`` add ops to ``block``; end it with the value(s) it returns."""
    if body is None:
        return
    values = body(Builder.at_end(block), *args)
    if values is None or isinstance(values, Value):
        values = [] if values is None else [values]
    elif not isinstance(values, (list, tuple)):
        raise TypeError(f"a loop body must return the values to yield (a Value, a list of Values "
                        f"or None), got {type(values).__name__}")
    block.append(YieldOp.build(list(values)))


def _check_body(op: Operation, arg_types: list, yield_types: list, reg: Region | None = None,
                what: str = "the loop carries") -> None:
    """One block of ``reg`` (default: the op's first region) with these argument types, ended by
    a ``loops.yield`` of these types."""
    reg = op.regions[0] if reg is None else reg
    check_count(op, len(reg.blocks), 1, "block in the body")
    block = reg.block
    got = [a.type for a in block.args]
    if got != arg_types:
        raise VerifyError(f"{op.name}: body arguments ({', '.join(map(str, got))}) should be "
                          f"({', '.join(map(str, arg_types))})", op)
    term = block.last_op
    if not isinstance(term, YieldOp):
        raise VerifyError(f"{op.name}: the body must end with loops.yield", op)
    got = [v.type for v in term.values]
    if got != yield_types:
        raise VerifyError(f"loops.yield: yields ({', '.join(map(str, got))}) but {what} "
                          f"({', '.join(map(str, yield_types))})", term)


@register_op
class ForOp(Operation):
    """``for i = lower; i < upper; i += step`` (step > 0), carrying values from one iteration to
    the next. The body's arguments are the induction variable (index) and the carried values; its
    ``loops.yield`` gives the next carried values; the results are the last ones (the initial
    values when the loop runs zero times)."""

    name = "loops.for"
    lower = operand(Index)
    upper = operand(Index)
    step = operand(Index)
    inits = var_operand()
    outs = var_result()
    body = region()

    @classmethod
    def build(cls, lower, upper, step, inits=(), body: Callable | None = None,
              location=None) -> "ForOp":
        """The loop with an empty body block, or with ``body(builder, iv, *carried)`` called to
        fill it: the values it returns are yielded."""
        inits = list(inits)
        types = [v.type for v in inits]
        block = Block([INDEX, *types])
        op = cls.create(operands=[lower, upper, step, *inits], result_types=types,
                        regions=[Region([block])], location=location)
        _fill_body(block, body, block.args)
        return op

    @property
    def induction_var(self):
        return self.body.block.args[0]

    @property
    def carried(self):
        """The body arguments holding the loop-carried values."""
        return self.body.block.args[1:]

    def print_pretty(self, printer):
        """``loops.for %i = %lb to %ub step %s iter_args(%acc = %init) -> f32 { ... }``."""
        if not well_formed(self) or len(self.body.blocks) != 1:
            return False
        types = [v.type for v in self.inits]
        args = self.body.block.args
        if not all_index([self.lower, self.upper, self.step]) \
                or [a.type for a in args] != [INDEX, *types] \
                or [r.type for r in self.outs] != types:
            return False
        printer.write(f" {printer.value_name(args[0])} = ")
        printer.print_operand(self.lower)
        printer.write(" to ")
        printer.print_operand(self.upper)
        printer.write(" step ")
        printer.print_operand(self.step)
        if types:
            printer.write(" iter_args(" + ", ".join(
                f"{printer.value_name(a)} = {printer.value_name(v)}"
                for a, v in zip(args[1:], self.inits)) + ") -> " + printer.results_text(types))
        printer.write(" ")
        printer.print_region(self.body, print_entry_block_args=False)

    @classmethod
    def parse_pretty(cls, parser, num_results):
        iv = parser.parse_operand()
        parser.expect("=", "after the induction variable")
        bounds = [parser.parse_operand()]
        for keyword in ("to", "step"):
            parser.expect(keyword, "in loops.for")
            bounds.append(parser.parse_operand())
        carried, inits, types = [], [], []
        if parser.accept("iter_args"):
            def pair():
                carried.append(parser.parse_operand())
                parser.expect("=", "between a carried value and its initial value")
                inits.append(parser.parse_operand())
            at = parser.position()
            parser.parse_comma_list(pair)
            parser.expect("->", "before the carried types")
            types = parser.parse_result_types()
            if len(types) != len(inits):
                parser.error(f"{len(inits)} carried value(s) but {len(types)} type(s)", at)
        operands = [*parser.resolve_operands(bounds, [INDEX] * 3),
                    *parser.resolve_operands(inits, types)]
        body = parser.parse_region(entry_args=[(iv, INDEX), *zip(carried, types)])
        return cls.create(operands=operands, result_types=types, regions=[body],
                          location=parser.op_location)

    def verify_(self):
        types = [v.type for v in self.inits]
        if [r.type for r in self.outs] != types:
            got = ", ".join(str(r.type) for r in self.outs)
            raise VerifyError(f"{self.name}: result types ({got}) differ from the initial "
                              f"values' ({', '.join(map(str, types))})", self)
        _check_body(self, [INDEX, *types], types)


@INTERPRETER.register(ForOp)
def _for(interp, op, args):
    lower, upper, step = (as_index(a) for a in args[:3])
    if step <= 0:
        raise ValueError(f"step must be positive, got {step}")
    carried = list(args[3:])
    for i in range(lower, upper, step):
        carried = interp.run_region(op.body, [np.int64(i), *carried])
    return carried


@register_op
class ParallelOp(Operation):
    """A loop nest over ``n`` dimensions whose iterations may run in any order or at once.

    Operands: ``n`` lower bounds, ``n`` upper bounds, ``n`` steps (all index); the body takes the
    ``n`` induction variables and ends with an empty ``loops.yield``. Nothing is carried: a
    reduction is a ``loops.for``.
    """

    name = "loops.parallel"
    bounds = var_operand(Index)
    body = region()

    @classmethod
    def build(cls, lowers, uppers, steps, body: Callable | None = None,
              location=None) -> "ParallelOp":
        """The loop with an empty body block, or with ``body(builder, *ivs)`` filling it."""
        lowers, uppers, steps = list(lowers), list(uppers), list(steps)
        if not len(lowers) == len(uppers) == len(steps):
            raise VerifyError(f"loops.parallel: {len(lowers)} lower bounds, {len(uppers)} upper "
                              f"bounds and {len(steps)} steps")
        block = Block([INDEX] * len(lowers))
        op = cls.create(operands=[*lowers, *uppers, *steps], regions=[Region([block])],
                        location=location)
        _fill_body(block, body, block.args)
        return op

    @property
    def rank(self) -> int:
        return len(self.bounds) // 3

    @property
    def lowers(self):
        return self.bounds[:self.rank]

    @property
    def uppers(self):
        return self.bounds[self.rank:2 * self.rank]

    @property
    def steps(self):
        return self.bounds[2 * self.rank:]

    @property
    def induction_vars(self):
        return self.body.block.args

    def print_pretty(self, printer):
        """``loops.parallel (%i, %j) = (%a, %b) to (%m, %n) step (%c1, %c1) { ... }``."""
        if not well_formed(self) or len(self.body.blocks) != 1 or not self.bounds \
                or len(self.bounds) % 3 or not all_index(self.bounds):
            return False
        ivs = self.induction_vars
        if len(ivs) != self.rank or not all_index(ivs):
            return False
        printer.write(" (" + ", ".join(map(printer.value_name, ivs)) + ") = (")
        printer.print_operands(self.lowers)
        printer.write(") to (")
        printer.print_operands(self.uppers)
        printer.write(") step (")
        printer.print_operands(self.steps)
        printer.write(") ")
        printer.print_region(self.body, print_entry_block_args=False)

    @classmethod
    def parse_pretty(cls, parser, num_results):
        at = parser.position()
        ivs = parser.parse_comma_list(parser.parse_operand)
        parser.expect("=", "after the induction variables")
        lists = [parser.parse_comma_list(parser.parse_operand)]
        for keyword in ("to", "step"):
            parser.expect(keyword, "in loops.parallel")
            lists.append(parser.parse_comma_list(parser.parse_operand))
        if any(len(refs) != len(ivs) for refs in lists):
            parser.error(f"{len(ivs)} induction variable(s) need as many lower bounds, upper "
                         f"bounds and steps, got {', '.join(str(len(r)) for r in lists)}", at)
        refs = [ref for refs in lists for ref in refs]
        operands = parser.resolve_operands(refs, [INDEX] * len(refs))
        body = parser.parse_region(entry_args=[(iv, INDEX) for iv in ivs])
        return cls.create(operands=operands, regions=[body], location=parser.op_location)

    def verify_(self):
        if len(self.bounds) == 0 or len(self.bounds) % 3:
            raise VerifyError(f"{self.name}: expected lower bounds, upper bounds and steps for "
                              f"each of n >= 1 dimensions (3n operands), got {len(self.bounds)}",
                              self)
        _check_body(self, [INDEX] * self.rank, [])


@INTERPRETER.register(ParallelOp)
def _parallel(interp, op, args):
    n = op.rank
    bounds = [as_index(a) for a in args]
    lowers, uppers, steps = bounds[:n], bounds[n:2 * n], bounds[2 * n:]
    if any(s <= 0 for s in steps):
        raise ValueError(f"steps must be positive, got {steps}")
    ranges = [range(lo, hi, st) for lo, hi, st in zip(lowers, uppers, steps)]
    for ivs in itertools.product(*ranges):
        interp.run_region(op.body, [np.int64(i) for i in ivs])
    return []


@register_op
class IfOp(Operation):
    """Runs ``then_region`` when ``condition`` (i1) holds, ``else_region`` otherwise; each is one
    block without arguments ended by a ``loops.yield`` of the op's result types, and the results
    are the values the branch that ran yields. Only that branch runs: its loads, stores, calls
    and checks do not happen when the other one is taken.

    >>> from lowering.ir.types import I1, F32
    >>> cond, a, b = Block([I1, F32, F32]).args
    >>> op = IfOp.build(cond, [F32], then_body=lambda bb: a, else_body=lambda bb: b)
    >>> [o.name for o in op.then_region.block.ops], str(op.results[0].type)
    (['loops.yield'], 'f32')
    """

    name = "loops.if"
    condition = operand(Bool)
    outs = var_result()
    then_region = region()
    else_region = region()

    @classmethod
    def build(cls, condition, result_types=(), then_body: Callable | None = None,
              else_body: Callable | None = None, location=None) -> "IfOp":
        """The conditional with empty branch blocks, or with ``then_body(builder)`` and
        ``else_body(builder)`` filling them: the values each returns are yielded (a branch
        given no function yields nothing)."""
        blocks = [Block(), Block()]
        op = cls.create(operands=[condition], result_types=list(result_types),
                        regions=[Region([blocks[0]]), Region([blocks[1]])], location=location)
        for block, body in zip(blocks, (then_body, else_body)):
            _fill_body(block, body if body is not None else (lambda b: None), [])
        return op

    def print_pretty(self, printer):
        """``loops.if %c -> f32 { ... } else { ... }`` (no ``->`` without results)."""
        if not well_formed(self) or any(len(r.blocks) != 1 or r.block.args
                                        for r in self.regions):
            return False
        printer.write(" ")
        printer.print_operand(self.condition)
        if self.outs:
            printer.write(" -> " + printer.results_text([r.type for r in self.outs]))
        printer.write(" ")
        printer.print_region(self.then_region, print_entry_block_args=False)
        printer.write(" else ")
        printer.print_region(self.else_region, print_entry_block_args=False)

    @classmethod
    def parse_pretty(cls, parser, num_results):
        from lowering.ir.types import I1
        condition = parser.parse_operand()
        types = parser.parse_result_types() if parser.accept("->") else []
        operands = parser.resolve_operands([condition], [I1])
        then_region = parser.parse_region(entry_args=[])
        parser.expect("else", "between the branches of loops.if")
        else_region = parser.parse_region(entry_args=[])
        return cls.create(operands=operands, result_types=types,
                          regions=[then_region, else_region], location=parser.op_location)

    def yields_fresh_allocation(self, index: int) -> bool:
        """Whether both branches yield, as result ``index``, a buffer that a ``loops.alloc`` of
        their own block made: the result then owns its memory, as an allocation does."""
        for reg in (self.then_region, self.else_region):
            yielded = reg.block.last_op.operands[index]
            owner = getattr(yielded, "op", None)
            if owner is None or owner.name != "loops.alloc" or owner.parent is not reg.block:
                return False
        return True

    def verify_(self):
        types = [r.type for r in self.outs]
        for reg in (self.then_region, self.else_region):
            _check_body(self, [], types, reg, "the results of loops.if are")


@INTERPRETER.register(IfOp)
def _if(interp, op, args):
    taken = op.then_region if bool(args[0]) else op.else_region
    return interp.run_region(taken, [])


@register_op
class WhileOp(Operation):
    """``loops.while``: a do-while loop carrying values. The body's arguments are the carried
    values; its ``loops.yield`` gives an ``i1`` first (true: run the body again), then the next
    carried values. The body runs at least once; the results are the values it yielded last (a
    loop that may run zero times sits inside a ``loops.for`` of at most one iteration).

    >>> from lowering.ir.types import INDEX
    >>> loop = WhileOp.build([Block([INDEX]).args[0]], [INDEX])
    >>> [str(a.type) for a in loop.body.block.args], str(loop.results[0].type)
    (['index'], 'index')
    """

    name = "loops.while"
    assembly_format = "$inits attr-dict : functional-type($inits, $outs) $body"
    inits = var_operand()
    outs = var_result()
    body = region()

    @classmethod
    def build(cls, inits, types=None, location=None) -> "WhileOp":
        """The loop carrying ``inits`` (of ``types``, by default theirs), with an empty body
        block taking the carried values."""
        inits = list(inits)
        types = list(types) if types is not None else [v.type for v in inits]
        return cls.create(operands=inits, result_types=types, regions=[Region([Block(types)])],
                          location=location)

    def verify_(self):
        types = [v.type for v in self.inits]
        got = [r.type for r in self.outs]
        if got != types:
            raise VerifyError(f"{self.name}: result types ({', '.join(map(str, got))}) differ "
                              f"from the initial values' ({', '.join(map(str, types))})", self)
        _check_body(self, types, [I1, *types])


@INTERPRETER.register(WhileOp)
def _while(interp, op, args):
    carried = list(args)
    while True:
        go_on, *carried = interp.run_region(op.body, carried)
        if not bool(go_on):
            return carried


@register_op
class YieldOp(Operation):
    """Ends a loop body or a branch: the next carried values of a ``loops.for``, nothing for a
    parallel loop, the results of a ``loops.if``."""

    name = "loops.yield"
    traits = frozenset({TERMINATOR, HasParent(ForOp, ParallelOp, IfOp, WhileOp)})
    assembly_format = "attr-dict ($values^ : type($values))?"
    values = var_operand()

    @classmethod
    def build(cls, values=(), location=None) -> "YieldOp":
        return cls.create(operands=list(values), location=location)

