"""Rule tables: rules found by op class, the most derived registration winning, declarations
of unsupported ops, fallbacks, and errors that name the op and the layer."""
from __future__ import annotations

import pytest

from lowering.ir.core import IRError, Operation
from lowering.ir.location import Location
from lowering.ir.rules import RuleError, RuleTable


class _Base(Operation):
    name = "test_rules.base"


class _Middle(_Base):
    name = "test_rules.middle"


class _Leaf(_Middle):
    name = "test_rules.leaf"


class _Other(Operation):
    name = "test_rules.other"


def _op(cls):
    return cls.create(location=Location("model.py", 12, 5))


def test_the_most_derived_registration_wins_and_serves_subclasses():
    table = RuleTable("layer")
    table.register(_Base)(base := lambda: "base")
    assert table.find(_Leaf) is base and _Middle in table and _Other not in table
    table.register(_Middle)(middle := lambda: "middle")
    assert table.find(_Leaf) is middle and table.find(_Base) is base
    table.register(_Leaf, _Other)(leaf := lambda: "leaf")
    assert (table.find(_Leaf), table.find(_Other), table.find(_Middle)) == (leaf, leaf, middle)
    assert table.classes() == [_Base, _Middle, _Leaf, _Other]


def test_an_unsupported_declaration_is_inherited_until_a_subclass_registers_a_rule():
    table = RuleTable("layer")
    table.register(_Base)(lambda: "base")
    table.unsupported(_Middle, "middles are out of reach")
    assert table.find(_Middle) is None and table.find(_Leaf) is None
    assert table.unsupported_reason(_Leaf) == "middles are out of reach"
    assert table.unsupported_reason(_Base) is None
    table.register(_Leaf)(leaf := lambda: "leaf")
    assert table.find(_Leaf) is leaf and table.unsupported_reason(_Leaf) is None


def test_a_fallback_table_is_asked_only_when_the_table_says_nothing():
    shared = RuleTable("shared")
    own = RuleTable("own", fallback=shared)
    shared.register(_Base, _Other)(common := lambda: "common")
    own.unsupported(_Other, "not here")
    own.register(_Leaf)(special := lambda: "special")
    assert (own.find(_Middle), own.find(_Leaf), own.find(_Other)) == (common, special, None)
    assert own.unsupported_reason(_Other) == "not here"
    shared.register(_Middle)(later := lambda: "later")  # seen by the table that falls back
    assert own.find(_Middle) is later


def test_lookup_errors_name_the_op_its_location_and_the_layer():
    table = RuleTable("toy lowering", hint="only toy ops get here")
    table.unsupported(_Middle, "middles have no toy form")
    with pytest.raises(RuleError) as missing:
        table.lookup(_op(_Other))
    assert str(missing.value) == ("toy lowering: no rule for test_rules.other (at model.py:12:5); "
                                  "only toy ops get here")
    assert isinstance(missing.value, IRError) and missing.value.op.name == "test_rules.other"

    class LayerError(IRError):
        pass

    with pytest.raises(LayerError, match=r"^toy lowering: test_rules.leaf \(at model.py:12:5\) "
                                         r"is not supported: middles have no toy form$"):
        table.lookup(_op(_Leaf), LayerError)


def test_rules_are_registered_for_classes_only():
    with pytest.raises(TypeError, match="op classes"):
        RuleTable("layer").register("test_rules.base")
    with pytest.raises(TypeError, match="op classes"):
        RuleTable("layer").unsupported("test_rules.base", "names are not classes")
