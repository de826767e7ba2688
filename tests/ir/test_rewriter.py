"""The rewriter and the greedy pattern driver: fixpoints, caps, regions, folding, locations."""
import pytest

from lowering.ir.attributes import IntAttr
from lowering.ir.core import (PURE, TERMINATOR, Block, IRError, Operation, Region, attr, operand,
                              region, register_op, result, var_operand)
from lowering.ir.location import FusedLoc, Location
from lowering.ir.patterns import (GreedyRewriteResult, PatternSet, RewriteNotConverged,
                                  RewritePattern, apply_patterns_greedily, is_trivially_dead,
                                  rewrite_pattern)
from lowering.ir.rewriter import RewriteListener, Rewriter
from lowering.ir.types import I64

# -- test ops -------------------------------------------------------------------------------------


@register_op
class Const(Operation):
    """An integer constant; folds to its value, which ``materialize_constant`` turns back."""
    name = "test.rw_const"
    traits = frozenset({PURE})
    value = attr(IntAttr)
    out = result()

    def fold(self):
        return [self.attributes["value"]]

    @classmethod
    def materialize_constant(cls, attribute, type, location):
        return Const.create(result_types=[type], attributes={"value": attribute}, location=location)


def const(n, loc=None):
    return Const.create(result_types=[I64], attributes={"value": IntAttr(n)},
                        location=loc or Location("c.py", n, 1))


@register_op
class Add(Operation):
    """Adds; folds constants, and ``x + 0`` to ``x``."""
    name = "test.rw_add"
    traits = frozenset({PURE})
    lhs = operand()
    rhs = operand()
    out = result()

    def fold(self):
        values = [v.owner.value if isinstance(v.owner, Const) else None for v in self.operands]
        if None not in values:
            return [IntAttr(values[0] + values[1])]
        if values[1] == 0:
            return [self.lhs]
        return None

    materialize_constant = Const.materialize_constant


def add(a, b, loc=None):
    return Add.create([a, b], [I64], location=loc or Location("a.py", 1, 1))


@register_op
class Neg(Operation):
    name = "test.rw_neg"
    traits = frozenset({PURE})
    input = operand()
    out = result()


@register_op
class Sink(Operation):
    """Has a side effect: never erased."""
    name = "test.rw_sink"
    values = var_operand()


@register_op
class Yield(Operation):
    name = "test.rw_yield"
    traits = frozenset({TERMINATOR, PURE})
    values = var_operand()


@register_op
class Wrap(Operation):
    """A PURE op with a region whose yield gives its result."""
    name = "test.rw_wrap"
    traits = frozenset({PURE})
    body = region()
    out = result()


def holder(*ops):
    """An op holding ``ops`` in one block (the driver rewrites inside its root's regions)."""
    return Operation(regions=[Region([Block(ops=ops)])])


def ops_of(root):
    return [op.name for op in root.regions[0].block.ops]


@rewrite_pattern(Neg)
def double_negation(op, rewriter):
    inner = op.input.owner
    if not isinstance(inner, Neg):
        return False
    rewriter.replace_op(op, [inner.input])
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
    n = Neg.create([a.out], [I64])
    sink = Sink.create([n.out])
    root = holder(a, n, sink)
    rec = Recorder()
    rw = Rewriter(rec)
    assert not rw.changed
    new = Neg.create([a.out], [I64])
    rw.replace_op(n, new)
    assert ops_of(root) == ["test.rw_const", "test.rw_neg", "test.rw_sink"]
    assert sink.values[0] is new.out
    assert rw.changed
    assert rec.events == [("inserted", "test.rw_neg"), ("replaced", "test.rw_neg"),
                          ("modified", "test.rw_sink"), ("erased", "test.rw_neg")]
    assert not a.out.uses[0].op is n


def test_replace_op_checks_counts_and_uses():
    a = const(1)
    sink = Sink.create([a.out])
    holder(a, sink)
    rw = Rewriter()
    with pytest.raises(IRError, match="1 results.*by 2 values"):
        rw.replace_op(a, [a.out, a.out])
    with pytest.raises(IRError, match="still has uses"):
        rw.replace_op(a, [None])


def test_erase_op_refuses_used_results_and_notifies_nested_first():
    a = const(1)
    sink = Sink.create([a.out])
    holder(a, sink)
    rw = Rewriter(rec := Recorder())
    with pytest.raises(IRError, match="still used by test.rw_sink"):
        rw.erase_op(a)
    inner = const(2)
    body = Block(ops=[inner, Yield.create([inner.out])])
    w = Wrap.create(result_types=[I64], regions=[Region([body])])
    holder(w)
    rw.erase_op(w)
    assert rec.events == [("erased", "test.rw_const"), ("erased", "test.rw_yield"),
                          ("erased", "test.rw_wrap")]
    assert w.parent is None and not inner.out.uses


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
    s1, s2 = Sink.create([a.out]), Sink.create([a.out])
    holder(a, b, s1, s2)
    rw = Rewriter(rec := Recorder())
    rw.replace_uses_where(a.out, b.out, lambda user: user is s2)
    assert s1.values[0] is a.out and s2.values[0] is b.out
    rw.set_attribute(s1, "tag", 3)
    assert s1.attributes["tag"] == IntAttr(3)
    rw.set_attribute(s1, "tag", None)
    assert "tag" not in s1.attributes
    rw.set_operand(s1, 0, b.out)
    assert not a.out.uses
    assert rec.events == [("modified", "test.rw_sink")] * 4


def test_fused_location_keeps_each_location_once():
    a, b, c = const(1), const(2), const(1)
    both = FusedLoc((Location("c.py", 1, 1), Location("c.py", 2, 1)))
    assert Rewriter.fused_location(a, b, c) == both
    assert Rewriter.fused_location(a, c) == Location("c.py", 1, 1)


# -- the driver -----------------------------------------------------------------------------------


def test_folding_propagates_constants_to_a_fixpoint_and_keeps_locations():
    a, b = const(2), const(3)
    s = add(a.out, b.out, Location("user.py", 10, 4))
    t = add(s.out, b.out, Location("user.py", 11, 4))
    sink = Sink.create([t.out])
    root = holder(a, b, s, t, sink)
    result = apply_patterns_greedily(root, [])
    assert result and result.converged
    assert ops_of(root) == ["test.rw_const", "test.rw_sink"]
    folded = sink.values[0].owner
    assert folded.value == 8
    assert folded.location == Location("user.py", 11, 4)  # the location of the op it replaced


def test_fold_to_an_existing_value():
    a = const(5)
    zero = const(0)
    n = Neg.create([a.out], [I64])
    s = add(n.out, zero.out)
    sink = Sink.create([s.out])
    root = holder(a, zero, n, s, sink)
    apply_patterns_greedily(root, [])
    assert sink.values[0] is n.out
    assert ops_of(root) == ["test.rw_const", "test.rw_neg", "test.rw_sink"]


def test_fold_false_leaves_constants_alone_and_constants_do_not_refold():
    a, b = const(2), const(3)
    s = add(a.out, b.out)
    root = holder(a, b, s, Sink.create([s.out]))
    assert not apply_patterns_greedily(root, [], fold=False)
    assert len(ops_of(root)) == 4
    # A constant folds to itself: no change, so this converges at once.
    root2 = holder(c := const(4), Sink.create([c.out]))
    result = apply_patterns_greedily(root2, [])
    assert not result and result.iterations == 1


def test_ops_without_materializer_are_not_folded():
    class NoMaterialize(Operation):
        name = "test.rw_nomat"
        traits = frozenset({PURE})

        def fold(self):
            return [IntAttr(1)]

    op = NoMaterialize(result_types=[I64])
    root = holder(op, Sink.create([op.results[0]]))
    assert not apply_patterns_greedily(root, [])


def test_patterns_dead_code_and_dispatch_on_op_type():
    a = const(1)
    n1 = Neg.create([a.out], [I64])
    n2 = Neg.create([n1.out], [I64])
    unused = Neg.create([a.out], [I64])
    sink = Sink.create([n2.out])
    root = holder(a, n1, n2, unused, sink)
    result = apply_patterns_greedily(root, [double_negation])
    assert sink.values[0] is a.out
    assert ops_of(root) == ["test.rw_const", "test.rw_sink"]
    assert result.converged and result.rewrites == 3  # the rewrite, then two dead negations


def test_rewrites_happen_inside_regions_and_nested_dead_ops_go():
    a = const(1)
    n1 = Neg.create([a.out], [I64])
    n2 = Neg.create([n1.out], [I64])
    dead = const(9)
    body = Block(ops=[dead, n1, n2, Yield.create([n2.out])])
    w = Wrap.create(result_types=[I64], regions=[Region([body])])
    sink = Sink.create([w.out])
    root = holder(a, w, sink)
    apply_patterns_greedily(root, [double_negation])
    assert [op.name for op in body.ops] == ["test.rw_yield"]
    assert body.last_op.values[0] is a.out


def test_terminators_and_side_effects_are_never_erased():
    y = Yield.create([])
    s = Sink.create([])
    assert not is_trivially_dead(y) and not is_trivially_dead(s)
    assert is_trivially_dead(const(1))


def test_benefit_orders_patterns_and_names_match():
    order = []

    @rewrite_pattern("test.rw_neg", benefit=1)
    def low(op, rewriter):
        order.append("low")
        return False

    @rewrite_pattern(Neg, benefit=5)
    def high(op, rewriter):
        order.append("high")
        return False

    class Anything(RewritePattern):
        def match_and_rewrite(self, op, rewriter):
            order.append("any")
            return False

    patterns = PatternSet([low, high, Anything])
    neg = Neg.create([const(1).out], [I64])
    assert [p.name for p in patterns.for_op(neg)] == ["high", "low", "Anything"]
    assert [p.name for p in patterns.for_op(const(1))] == ["Anything"]
    with pytest.raises(TypeError, match="not a RewritePattern"):
        PatternSet([lambda op, rw: False])


def test_patterns_that_undo_each_other_hit_the_cap():
    @rewrite_pattern(Neg)
    def neg_to_wrap_neg(op, rewriter):
        # Replaces neg(x) by a new neg(x): always "changes" something.
        rewriter.replace_op(op, Neg.create([op.input], [I64]))
        return True

    a = const(1)
    n = Neg.create([a.out], [I64])
    root = holder(a, n, Sink.create([n.out]))
    for raise_on_cap in (True, False):  # an endless loop is an error either way
        with pytest.raises(RewriteNotConverged, match="too many rewrites in iteration 1; do "
                           "patterns undo each other.*neg_to_wrap_neg on test.rw_neg x51"):
            apply_patterns_greedily(root, [neg_to_wrap_neg], max_rewrites=50,
                                    raise_on_cap=raise_on_cap)


def test_iteration_cap_counts_sweeps():
    # The first sweep marks the op; the second changes nothing, which proves the fixpoint.
    @rewrite_pattern(Sink)
    def mark(op, rewriter):
        if "seen" in op.attributes:
            return False
        rewriter.set_attribute(op, "seen", 1)
        return True

    root = holder(Sink.create([]))
    assert apply_patterns_greedily(root, [mark], max_iterations=2).iterations == 2
    root = holder(Sink.create([]))
    with pytest.raises(RewriteNotConverged, match=r"after 1 iterations\); last rewrites: mark on "
                       "test.rw_sink x1"):
        apply_patterns_greedily(root, [mark], max_iterations=1)
    result = apply_patterns_greedily(holder(Sink.create([])), [mark], max_iterations=1,
                                     raise_on_cap=False)
    assert isinstance(result, GreedyRewriteResult)
    assert result.changed and not result.converged and result.iterations == 1
    with pytest.raises(ValueError, match="at least 1"):
        apply_patterns_greedily(root, [mark], max_iterations=0)


def test_new_ops_get_the_location_of_the_op_they_replace():
    @rewrite_pattern(Neg)
    def neg_to_sub(op, rewriter):
        # no location given:
        zero = Const.create(result_types=[I64], attributes={"value": IntAttr(0)})
        rewriter.insert_op_before(zero, op)
        new = Add.create([zero.out, op.input], [I64])
        rewriter.replace_op(op, new)
        return True

    a = const(1)
    n = Neg.create([a.out], [I64], location=Location("model.py", 42, 7))
    sink = Sink.create([n.out])
    root = holder(a, n, sink)
    apply_patterns_greedily(root, [neg_to_sub], fold=False)
    new = sink.values[0].owner
    assert isinstance(new, Add)
    assert new.location == Location("model.py", 42, 7)
    assert new.lhs.owner.location == Location("model.py", 42, 7)
    assert ops_of(root) == ["test.rw_const", "test.rw_const", "test.rw_add", "test.rw_sink"]


def test_dishonest_patterns_are_reported():
    @rewrite_pattern(Sink)
    def claims(op, rewriter):
        return True

    @rewrite_pattern(Sink)
    def hides(op, rewriter):
        rewriter.set_attribute(op, "x", 1)
        return None

    with pytest.raises(IRError, match="claims reported a rewrite of test.rw_sink but made no "
                                      "change"):
        apply_patterns_greedily(holder(Sink.create([])), [claims])
    with pytest.raises(IRError, match="hides changed the IR but returned None"):
        apply_patterns_greedily(holder(Sink.create([])), [hides])


def test_in_place_fold_counts_as_a_change():
    class Canonical(Operation):
        name = "test.rw_inplace"

        def fold(self):
            if "done" in self.attributes:
                return None
            self.attributes["done"] = IntAttr(1)
            return list(self.results)

    op = Canonical(result_types=[I64])
    result = apply_patterns_greedily(holder(op, Sink.create([op.results[0]])), [])
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
    user = Neg.create([outside.out], [I64])
    inner = Wrap.create(result_types=[I64], regions=[Region([Block(ops=[user, Yield.create([])])])])
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
