"""Traits as objects: the names the code base imports, traits with parameters, and the rules
traits verify (run by the structural verifier before an op's own ``verify_``).

The op classes here are not registered: the verifier needs only the class."""
import pytest

from lowering.dialects.builtin import FuncOp, ModuleOp
from lowering.ir import core
from lowering.ir.attributes import StringAttr
from lowering.ir.core import Block, Operation, Region, VerifyError, operand, region, result
from lowering.ir.traits import (COMMUTATIVE, ELEMENTWISE, ISOLATED, PURE,
                                SAME_OPERANDS_AND_RESULT_TYPE, SYMBOL, SYMBOL_TABLE, TERMINATOR,
                                Commutative, HasParent, MemoryEffects, Pure, Terminator, Trait,
                                get_trait)
from lowering.ir.types import F32, F64, TensorType
from lowering.ir.verifier import verify


def test_the_old_names_are_the_trait_objects():
    assert (core.PURE, core.TERMINATOR, core.ISOLATED, core.COMMUTATIVE, core.SYMBOL) == \
        (PURE, TERMINATOR, ISOLATED, COMMUTATIVE, SYMBOL)
    assert all(isinstance(t, Trait) for t in (PURE, TERMINATOR, ISOLATED, COMMUTATIVE, SYMBOL))
    # The op reference lists them by their old names, in order.
    assert [str(t) for t in sorted({SYMBOL, PURE, ISOLATED, TERMINATOR, COMMUTATIVE})] == \
        ["commutative", "isolated", "pure", "symbol", "terminator"]


def test_traits_compare_by_value():
    assert Pure() == PURE and Pure() in frozenset({PURE, COMMUTATIVE})
    assert Commutative() != PURE
    assert MemoryEffects(reads=("a",)) == MemoryEffects(reads=("a",))
    assert MemoryEffects(reads=("a",)) != MemoryEffects(writes=("a",))
    assert str(HasParent(FuncOp, ModuleOp)) == "has_parent(func.func, builtin.module)"


class Outer(Operation):
    name = "demo.outer"
    body = region()


class Inner(Operation):
    name = "demo.inner"
    traits = frozenset({TERMINATOR, HasParent(Outer)})


class Leaf(Operation):
    name = "demo.leaf"
    traits = frozenset({PURE})
    result = result()


def outer_with(*ops):
    return Outer.create(regions=[Region([Block(ops=ops)])])


def test_terminator_must_end_its_block():
    good = outer_with(Leaf.create(result_types=[F32]), Inner.create())
    verify(good)
    inner = Inner.create()
    bad = outer_with(inner, Leaf.create(result_types=[F32]))
    with pytest.raises(VerifyError, match="^a terminator must be the last op of its block$") as info:
        verify(bad)
    assert info.value.op is inner


def test_has_parent_names_the_parents_and_where_the_op_is():
    inner = Inner.create()
    wrong = FuncOp.build("f", [], [])
    wrong.body.block.append(inner)
    with pytest.raises(VerifyError, match="^demo.inner must be directly inside demo.outer, found "
                                          "in func.func$"):
        inner.verify_structure()
    Inner.create().verify_structure()  # not placed yet: nothing to say


def test_same_operands_and_result_type():
    class Twin(Operation):
        name = "demo.twin"
        traits = frozenset({SAME_OPERANDS_AND_RESULT_TYPE})
        lhs = operand()
        rhs = operand()
        result = result()

    a, b = Block([F32, F64]).args
    Twin.create([a, a], [F32]).verify_structure()
    with pytest.raises(VerifyError, match="^demo.twin: operands and results must have one type, "
                                          "got f32, f64, f32$"):
        Twin.create([a, b], [F32]).verify_structure()


def test_elementwise_ops_take_and_give_tensors():
    class Negate(Operation):
        name = "demo.negate"
        traits = frozenset({PURE, ELEMENTWISE})
        input = operand()
        result = result()

    x, s = Block([TensorType((2,), F32), F32]).args
    Negate.create([x], [x.type]).verify_structure()
    with pytest.raises(VerifyError, match="^demo.negate: operand #0 must be a tensor, got f32$"):
        Negate.create([s], [x.type]).verify_structure()
    with pytest.raises(VerifyError, match="^demo.negate: result #0 must be a tensor, got f32$"):
        Negate.create([x], [F32]).verify_structure()


def test_symbol_table_rejects_a_name_defined_twice():
    module = ModuleOp.build([FuncOp.build("f", [], []), FuncOp.build("f", [], [])])
    assert SYMBOL_TABLE in ModuleOp.traits
    assert SYMBOL_TABLE.verify(module) == "symbol defined twice: f"
    with pytest.raises(VerifyError, match="^symbol defined twice: f$") as info:
        module.verify_structure()
    assert info.value.op is module
    assert SYMBOL_TABLE.verify(ModuleOp.build([FuncOp.build("f", [], [])])) is None


def test_memory_effects_name_operand_fields():
    class Move(Operation):
        name = "demo.move"
        traits = frozenset({MemoryEffects(reads=("source",), writes=("targets",))})
        source = operand()
        targets = core.var_operand()

    a, b, c = Block([F32, F32, F32]).args
    fx = get_trait(Move, MemoryEffects)
    op = Move.create([a, b, c])
    assert fx.read_values(op) == [a] and fx.written_values(op) == [b, c]
    assert get_trait(op, Terminator) is None

    with pytest.raises(TypeError, match="memory effect on unknown operand field 'target'"):
        class Broken(Operation):
            traits = frozenset({MemoryEffects(writes=("target",))})
            source = operand()


def test_canonicalization_patterns_come_through_the_trait():
    from lowering.ir.patterns import rewrite_pattern
    from lowering.ir.traits import (CANONICALIZATION_PATTERNS, HAS_CANONICALIZATION_PATTERNS,
                                    add_canonicalization_pattern)

    class Base(Operation):
        name = "demo.base"
        traits = frozenset({HAS_CANONICALIZATION_PATTERNS})

    class Derived(Base):
        name = "demo.derived"

    class Plain(Operation):
        name = "demo.plain"

    on_base = rewrite_pattern(Base)(lambda op, rewriter: False)
    on_derived = rewrite_pattern(Derived)(lambda op, rewriter: False)
    try:
        add_canonicalization_pattern(Base, on_base)
        add_canonicalization_pattern(Derived, on_derived)
        add_canonicalization_pattern(Plain, on_base)
        assert Base.canonicalization_patterns() == [on_base]
        assert Derived.canonicalization_patterns() == [on_derived, on_base]
        assert Plain.canonicalization_patterns() == []  # no trait, no patterns
    finally:
        for cls in (Base, Derived, Plain):
            CANONICALIZATION_PATTERNS.pop(cls)


def test_a_trait_of_a_dialect_verifies_like_the_builtin_ones():
    class Named(Trait):
        name = "named"

        def verify(self, op):
            return None if "label" in op.attributes else f"{op.name} needs a label"

    class Labelled(Operation):
        name = "demo.labelled"
        traits = frozenset({Named()})

    Labelled.create(attributes={"label": StringAttr("x")}).verify_structure()
    with pytest.raises(VerifyError, match="^demo.labelled needs a label$"):
        verify(Labelled.create())


def test_real_ops_declare_their_traits():
    from lowering.dialects import gpu, loops, tensor
    from lowering.dialects.gpu.checks import IN_KERNEL, ON_HOST
    assert get_trait(loops.CopyOp, MemoryEffects) == MemoryEffects(reads=("source",),
                                                                  writes=("target",))
    assert get_trait(loops.YieldOp, HasParent) == HasParent(loops.ForOp, loops.ParallelOp,
                                                            loops.IfOp, loops.WhileOp)
    assert ELEMENTWISE in tensor.AddOp.traits and COMMUTATIVE in tensor.AddOp.traits
    assert IN_KERNEL in gpu.BarrierOp.traits and ON_HOST in gpu.MemcpyOp.traits
