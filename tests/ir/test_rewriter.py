"""The rewriter and the greedy pattern driver: fixpoints, caps, regions, folding, locations."""
import pytest

from lowering.dialects.test import AddOp, ConstantOp, GenericOp, PureOp, YieldOp
from lowering.ir.attributes import IntAttr
from lowering.ir.core import PURE, Block, IRError, Operation, Region
from lowering.ir.location import FusedLoc, Location
from lowering.ir.patterns import (GreedyRewriteResult, PatternSet, RewriteNotConverged,
                                  RewritePattern, apply_patterns_greedily, is_trivially_dead,
                                  rewrite_pattern)
from lowering.ir.rewriter import RewriteListener, Rewriter
from lowering.ir.types import I64

# -- IR of the test dialect's ops: constants, additions, one-operand pure ops standing for
# negations, ``test.op`` users with side effects, ``test.pure`` ops with a body --------------------


def const(n, loc=None):
    return ConstantOp.build(n, location=loc or Location("c.py", n, 1))


def add(a, b, loc=None):
    return AddOp.create([a, b], [I64], location=loc or Location("a.py", 1, 1))


def neg(value, loc=None):
    return PureOp.create([value], [I64], location=loc)


def is_neg(op):
    return isinstance(op, PureOp) and len(op.operands) == 1


def holder(*ops):
    """An op holding ``ops`` in one block (the driver rewrites inside its root's regions)."""
    return Operation(regions=[Region([Block(ops=ops)])])


def ops_of(root):
    return [op.name for op in root.regions[0].block.ops]


@rewrite_pattern(PureOp)
def double_negation(op, rewriter):
    if not (is_neg(op) and is_neg(op.operands[0].owner)):
        return False
    rewriter.replace_op(op, [op.operands[0].owner.operands[0]])
    return True


# -- the rewriter ---------------------------------------------------------------------------------


class Recorder(RewriteListener):
    def __init__(self):
        self.events = []

    def op_inserted(self, op):
        self.events.append(("inserted", op.name))

    def op_modified(self, op):
        self.events.append(("modified", op.name))

    def op_replaced(self, op, values):
        self.events.append(("replaced", op.name))

    def op_erased(self, op):
        self.events.append(("erased", op.name))


def test_replace_op_with_new_op_inserts_it_and_notifies():
    a = const(1)
    n = neg(a.result)
    sink = GenericOp.create([n.result])
    root = holder(a, n, sink)
    rec = Recorder()
    rw = Rewriter(rec)
    assert not rw.changed
    new = neg(a.result)
    rw.replace_op(n, new)
    assert ops_of(root) == ["test.constant", "test.pure", "test.op"]
    assert sink.operands[0] is new.result
    assert rw.changed
    assert rec.events == [("inserted", "test.pure"), ("replaced", "test.pure"),
                          ("modified", "test.op"), ("erased", "test.pure")]
    assert not a.result.uses[0].op is n


def test_replace_op_checks_counts_and_uses():
    a = const(1)
    sink = GenericOp.create([a.result])
    holder(a, sink)
    rw = Rewriter()
    with pytest.raises(IRError, match="1 results.*by 2 values"):
        rw.replace_op(a, [a.result, a.result])
    with pytest.raises(IRError, match="still has uses"):
        rw.replace_op(a, [None])


def test_erase_op_refuses_used_results_and_notifies_nested_first():
    a = const(1)
    sink = GenericOp.create([a.result])
    holder(a, sink)
    rw = Rewriter(rec := Recorder())
    with pytest.raises(IRError, match="still used by test.op"):
        rw.erase_op(a)
    inner = const(2)
    body = Block(ops=[inner, YieldOp.create([inner.result])])
    w = PureOp.create(result_types=[I64], regions=[Region([body])])
    holder(w)
    rw.erase_op(w)
    assert rec.events == [("erased", "test.constant"), ("erased", "test.yield"),
                          ("erased", "test.pure")]
    assert w.parent is None and not inner.result.uses


def test_insert_before_after_keep_order_and_move_ops():
    a, b = const(1), const(2)
    root = holder(a, b)
    rw = Rewriter()
    c, d = const(3), const(4)
    rw.insert_op_before([c, d], b)
    assert [op.value for op in root.regions[0].block.ops] == [1, 3, 4, 2]
    e, f = const(5), const(6)
    rw.insert_op_after([e, f], a)
    assert [op.value for op in root.regions[0].block.ops] == [1, 5, 6, 3, 4, 2]
    rw.insert_op_at_start(b, root.regions[0].block)  # moves b
    rw.insert_op_at_end(const(7), root.regions[0].block)
    assert [op.value for op in root.regions[0].block.ops] == [2, 1, 5, 6, 3, 4, 7]
    with pytest.raises(IRError, match="not in a block"):
        rw.insert_op_before(const(8), const(9))


def test_replace_uses_where_and_in_place_changes():
    a, b = const(1), const(2)
    s1, s2 = GenericOp.create([a.result]), GenericOp.create([a.result])
    holder(a, b, s1, s2)
    rw = Rewriter(rec := Recorder())
    rw.replace_uses_where(a.result, b.result, lambda user: user is s2)
    assert s1.operands[0] is a.result and s2.operands[0] is b.result
    rw.set_attribute(s1, "tag", 3)
    assert s1.attributes["tag"] == IntAttr(3)
    rw.set_attribute(s1, "tag", None)
    assert "tag" not in s1.attributes
    rw.set_operand(s1, 0, b.result)
    assert not a.result.uses
    assert rec.events == [("modified", "test.op")] * 4


def test_fused_location_keeps_each_location_once():
    a, b, c = const(1), const(2), const(1)
    both = FusedLoc((Location("c.py", 1, 1), Location("c.py", 2, 1)))
    assert Rewriter.fused_location(a, b, c) == both
    assert Rewriter.fused_location(a, c) == Location("c.py", 1, 1)


# -- the driver -----------------------------------------------------------------------------------


def test_folding_propagates_constants_to_a_fixpoint_and_keeps_locations():
    a, b = const(2), const(3)
    s = add(a.result, b.result, Location("user.py", 10, 4))
    t = add(s.result, b.result, Location("user.py", 11, 4))
    sink = GenericOp.create([t.result])
    root = holder(a, b, s, t, sink)
    result = apply_patterns_greedily(root, [])
    assert result and result.converged
    assert ops_of(root) == ["test.constant", "test.op"]
    folded = sink.operands[0].owner
    assert folded.value == 8
    assert folded.location == Location("user.py", 11, 4)  # the location of the op it replaced


def test_fold_to_an_existing_value():
    a = const(5)
    zero = const(0)
    n = neg(a.result)
    s = add(n.result, zero.result)
    sink = GenericOp.create([s.result])
    root = holder(a, zero, n, s, sink)
    apply_patterns_greedily(root, [])
    assert sink.operands[0] is n.result
    assert ops_of(root) == ["test.constant", "test.pure", "test.op"]


def test_fold_false_leaves_constants_alone_and_constants_do_not_refold():
    a, b = const(2), const(3)
    s = add(a.result, b.result)
    root = holder(a, b, s, GenericOp.create([s.result]))
    assert not apply_patterns_greedily(root, [], fold=False)
    assert len(ops_of(root)) == 4
    # A constant folds to itself: no change, so this converges at once.
    root2 = holder(c := const(4), GenericOp.create([c.result]))
    result = apply_patterns_greedily(root2, [])
    assert not result and result.iterations == 1


def test_ops_without_materializer_are_not_folded():
    class NoMaterialize(Operation):
        name = "test.rw_nomat"
        traits = frozenset({PURE})

        def fold(self):
            return [IntAttr(1)]

    op = NoMaterialize(result_types=[I64])
    root = holder(op, GenericOp.create([op.results[0]]))
    assert not apply_patterns_greedily(root, [])


def test_patterns_dead_code_and_dispatch_on_op_type():
    a = const(1)
    n1 = neg(a.result)
    n2 = neg(n1.result)
    unused = neg(a.result)
    sink = GenericOp.create([n2.result])
    root = holder(a, n1, n2, unused, sink)
    result = apply_patterns_greedily(root, [double_negation])
    assert sink.operands[0] is a.result
    assert ops_of(root) == ["test.constant", "test.op"]
    assert result.converged and result.rewrites == 3  # the rewrite, then two dead negations


def test_rewrites_happen_inside_regions_and_nested_dead_ops_go():
    a = const(1)
    n1 = neg(a.result)
    n2 = neg(n1.result)
    dead = const(9)
    body = Block(ops=[dead, n1, n2, YieldOp.create([n2.result])])
    w = PureOp.create(result_types=[I64], regions=[Region([body])])
    sink = GenericOp.create([w.result])
    root = holder(a, w, sink)
    apply_patterns_greedily(root, [double_negation])
    assert [op.name for op in body.ops] == ["test.yield"]
    assert body.last_op.operands[0] is a.result


def test_terminators_and_side_effects_are_never_erased():
    y = YieldOp.create([])
    s = GenericOp.create([])
    assert not is_trivially_dead(y) and not is_trivially_dead(s)
    assert is_trivially_dead(const(1))


def test_benefit_orders_patterns_and_names_match():
    order = []

    @rewrite_pattern("test.pure", benefit=1)
    def low(op, rewriter):
        order.append("low")
        return False

    @rewrite_pattern(PureOp, benefit=5)
    def high(op, rewriter):
        order.append("high")
        return False

    class Anything(RewritePattern):
        def match_and_rewrite(self, op, rewriter):
            order.append("any")
            return False

    patterns = PatternSet([low, high, Anything])
    negation = neg(const(1).result)
    assert [p.name for p in patterns.for_op(negation)] == ["high", "low", "Anything"]
    assert [p.name for p in patterns.for_op(const(1))] == ["Anything"]
    with pytest.raises(TypeError, match="not a RewritePattern"):
        PatternSet([lambda op, rw: False])


def test_patterns_that_undo_each_other_hit_the_cap():
    @rewrite_pattern(PureOp)
    def neg_to_wrap_neg(op, rewriter):
        # Replaces neg(x) by a new neg(x): always "changes" something.
        rewriter.replace_op(op, neg(op.operands[0]))
        return True

    a = const(1)
    n = neg(a.result)
    root = holder(a, n, GenericOp.create([n.result]))
    for raise_on_cap in (True, False):  # an endless loop is an error either way
        with pytest.raises(RewriteNotConverged, match="too many rewrites in iteration 1; do "
                           "patterns undo each other.*neg_to_wrap_neg on test.pure x51"):
            apply_patterns_greedily(root, [neg_to_wrap_neg], max_rewrites=50,
                                    raise_on_cap=raise_on_cap)


def test_iteration_cap_counts_sweeps():
    # The first sweep marks the op; the second changes nothing, which proves the fixpoint.
    @rewrite_pattern(GenericOp)
    def mark(op, rewriter):
        if "seen" in op.attributes:
            return False
        rewriter.set_attribute(op, "seen", 1)
        return True

    root = holder(GenericOp.create([]))
    assert apply_patterns_greedily(root, [mark], max_iterations=2).iterations == 2
    root = holder(GenericOp.create([]))
    with pytest.raises(RewriteNotConverged, match=r"after 1 iterations\); last rewrites: mark on "
                       "test.op x1"):
        apply_patterns_greedily(root, [mark], max_iterations=1)
    result = apply_patterns_greedily(holder(GenericOp.create([])), [mark], max_iterations=1,
                                     raise_on_cap=False)
    assert isinstance(result, GreedyRewriteResult)
    assert result.changed and not result.converged and result.iterations == 1
    with pytest.raises(ValueError, match="at least 1"):
        apply_patterns_greedily(root, [mark], max_iterations=0)


def test_new_ops_get_the_location_of_the_op_they_replace():
    @rewrite_pattern(PureOp)
    def neg_to_sub(op, rewriter):
        # no location given:
        zero = ConstantOp.build(0)
        rewriter.insert_op_before(zero, op)
        new = AddOp.create([zero.result, op.operands[0]], [I64])
        rewriter.replace_op(op, new)
        return True

    a = const(1)
    n = neg(a.result, Location("model.py", 42, 7))
    sink = GenericOp.create([n.result])
    root = holder(a, n, sink)
    apply_patterns_greedily(root, [neg_to_sub], fold=False)
    new = sink.operands[0].owner
    assert isinstance(new, AddOp)
    assert new.location == Location("model.py", 42, 7)
    assert new.lhs.owner.location == Location("model.py", 42, 7)
    assert ops_of(root) == ["test.constant", "test.constant", "test.add", "test.op"]


def test_dishonest_patterns_are_reported():
    @rewrite_pattern(GenericOp)
    def claims(op, rewriter):
        return True

    @rewrite_pattern(GenericOp)
    def hides(op, rewriter):
        rewriter.set_attribute(op, "x", 1)
        return None

    with pytest.raises(IRError, match="claims reported a rewrite of test.op but made no "
                                      "change"):
        apply_patterns_greedily(holder(GenericOp.create([])), [claims])
    with pytest.raises(IRError, match="hides changed the IR but returned None"):
        apply_patterns_greedily(holder(GenericOp.create([])), [hides])


def test_in_place_fold_counts_as_a_change():
    class Canonical(Operation):
        name = "test.rw_inplace"

        def fold(self):
            if "done" in self.attributes:
                return None
            self.attributes["done"] = IntAttr(1)
            return list(self.results)

    op = Canonical(result_types=[I64])
    result = apply_patterns_greedily(holder(op, GenericOp.create([op.results[0]])), [])
    assert result.changed and result.rewrites == 1 and op.attributes["done"] == IntAttr(1)


def test_fold_results_are_checked():
    class BadFold(Operation):
        name = "test.rw_badfold"

        def fold(self):
            return ["not a value"]

    op = BadFold(result_types=[I64])
    with pytest.raises(IRError, match="returned str; expected a Value or an Attribute"):
        apply_patterns_greedily(holder(op), [])

    class WrongCount(Operation):
        name = "test.rw_wrongcount"

        def fold(self):
            return []

    with pytest.raises(IRError, match="returned 0 values for 1 results"):
        apply_patterns_greedily(holder(WrongCount(result_types=[I64])), [])


def test_ops_outside_the_root_are_left_alone():
    # The dead user inside the root goes; its producer outside the root stays, though now dead.
    outside = const(1)
    user = neg(outside.result)
    inner = PureOp.create(result_types=[I64], regions=[Region([Block(ops=[user, YieldOp.create([])])])])
    holder(outside, inner)
    apply_patterns_greedily(inner, [])
    assert user.parent is None and outside.parent is not None


def test_set_type_tells_the_listener_of_the_value_and_of_its_readers():
    from lowering.ir.types import F32
    events = []

    class Listener(RewriteListener):
        def value_retyped(self, value, old_type):
            events.append(("retyped", value, old_type, value.type))

        def op_modified(self, op):
            events.append(("modified", op))

    block = Block([I64])
    first = block.append(Operation(operands=[block.args[0]]))
    second = block.append(Operation(operands=[block.args[0], block.args[0]]))
    rw = Rewriter(Listener())
    rw.set_type(block.args[0], F32)
    assert events == [("retyped", block.args[0], I64, F32), ("modified", first),
                      ("modified", second)]
    assert rw.changes == 1
    rw.set_type(block.args[0], F32)  # the same type: nothing changes, nobody is told
    assert len(events) == 3 and rw.changes == 1
