"""Contexts and dialects: op registries scoped to a context, the default context, the test
dialect, and the parser, passes and lowering-opt reading ops through a context."""
import pytest

import lowering.dialects
from lowering.dialects import test as test_dialect
from lowering.dialects.builtin import FuncOp, ModuleOp, ReturnOp
from lowering.dialects.tensor import ExpOp
from lowering.dialects.test import ConstantOp, GenericOp, MulOp, PureOp, mul_by_one
from lowering.ir.attributes import StringAttr
from lowering.ir.context import Context, Dialect, default_context
from lowering.ir.core import IRError, Operation, VerifyError
from lowering.ir.parser import ParseError, Parser, parse_module
from lowering.ir.pass_manager import PassManager
from lowering.ir.types import I64
from lowering.ir.verifier import verify
from lowering.passes.canonicalize import Canonicalize, patterns_of_known_ops

TEXT = '%0 = "test.op"() : () -> i64\n%1 = test.constant 2'


class Ping(Operation):
    name = "demo.ping"


class OtherConstant(Operation):
    """Another class claiming the test dialect's op name ``test.constant``."""
    name = "test.constant"


# -- scoping ---------------------------------------------------------------------------------------


def test_test_ops_are_unknown_in_the_default_context_and_known_where_loaded(test_context):
    with pytest.raises(ParseError, match="unknown dialect 'test' in op 'test.op'"):
        parse_module(TEXT)
    module = parse_module(TEXT, context=test_context)
    assert [type(op) for op in module.body.block.ops] == [GenericOp, ConstantOp]
    assert module.body.block.last_op.value == 2
    assert "test" in test_context.dialects and "test" not in default_context().dialects
    assert "test.op" not in default_context().ops


def test_a_context_made_by_a_test_leaves_the_others_alone():
    first, second = Context(), Context()
    first.load_dialect(test_dialect.DIALECT)
    assert first.lookup_op("test.mul") is MulOp
    assert second.get_op("test.mul") is None and default_context().get_op("test.mul") is None
    assert second.ops.keys() == default_context().ops.keys()


def test_the_default_context_holds_the_default_dialects():
    assert list(default_context().dialects) == ["builtin", "scalar", "tensor", "loops", "gpu",
                                                "sparse"]
    assert default_context().lookup_op("tensor.exp") is ExpOp
    assert default_context().lookup_op("func.func") is FuncOp
    assert set(lowering.dialects.DIALECTS) == {"builtin", "scalar", "tensor", "loops", "gpu",
                                                "sparse", "test"}
    # Every op a dialect lists is found under its name, and no name is listed twice.
    listed = [op for dialect in default_context().dialects.values() for op in dialect.ops]
    assert {op.name: op for op in listed} == dict(default_context().ops)


def test_an_empty_context_knows_no_op():
    empty = Context([])
    assert dict(empty.ops) == {} and dict(empty.dialects) == {}
    with pytest.raises(IRError, match="unknown dialect 'builtin' in op 'builtin.module'"):
        parse_module("", context=empty)


def test_lookup_errors_name_the_nearest_ops_and_dialects(test_context):
    with pytest.raises(IRError, match=r"^unknown op 'test.mull'; did you mean 'test.mul'"):
        test_context.lookup_op("test.mull")
    with pytest.raises(IRError, match=r"^unknown dialect 'tset' in op 'tset.op'; did you mean "
                                      r"'test'"):
        test_context.lookup_op("tset.op")


# -- loading ---------------------------------------------------------------------------------------


def test_loading_a_dialect_twice_is_harmless():
    context = Context([])
    demo = Dialect("demo", [Ping])
    context.load_dialect(demo)
    context.load_dialect(demo)
    assert list(context.dialects) == ["demo"] and dict(context.ops) == {"demo.ping": Ping}


def test_an_op_name_two_dialects_define_is_an_error_and_loads_nothing(test_context):
    clash = Dialect("clash", [Ping, OtherConstant])
    with pytest.raises(ValueError, match="op 'test.constant' of dialect 'clash' is defined by "
                                         "dialect 'test' already"):
        test_context.load_dialect(clash)
    assert "clash" not in test_context.dialects and test_context.get_op("demo.ping") is None
    assert test_context.lookup_op("test.constant") is ConstantOp


def test_another_dialect_of_a_loaded_name_is_an_error(test_context):
    with pytest.raises(ValueError, match="another dialect called 'test' is loaded already"):
        test_context.load_dialect(Dialect("test", [Ping]))


def test_a_dialect_defines_each_op_name_once():
    with pytest.raises(ValueError, match="dialect 'demo' defines op 'test.constant' twice"):
        Dialect("demo", [ConstantOp, Ping, OtherConstant])


def test_a_package_dialect_lists_the_ops_its_modules_define():
    names = [op.name for op in test_dialect.DIALECT.ops]
    assert names == ["test.op", "test.pure", "test.isolated", "test.checked", "test.yield",
                     "test.constant", "test.add", "test.mul", "test.exp_without_loops"]
    # Abstract bases (not marked by register_op) are not ops of the dialect.
    assert all(op.__name__ != "_BinaryOp" for op in test_dialect.DIALECT.ops)
    assert ExpOp in lowering.dialects.tensor.DIALECT.ops


# -- the parser and passes read ops through a context ----------------------------------------------


def test_the_parser_keeps_its_context(test_context):
    assert Parser("").context is default_context()
    assert Parser("", context=test_context).context is test_context


def mul_by_one_module():
    """``f(x) = x * 1`` built from the test dialect's ops (no parsing, so no context needed)."""
    func = FuncOp.build("f", [I64], [I64])
    one = func.body.block.append(ConstantOp.build(1))
    product = func.body.block.append(MulOp.build(func.args[0], one.out))
    func.body.block.append(ReturnOp.create([product.out]))
    return ModuleOp.build([func])


def test_canonicalize_collects_the_patterns_of_its_contexts_ops(test_context):
    empty = ModuleOp.build([])
    assert mul_by_one not in patterns_of_known_ops(empty)
    assert mul_by_one in patterns_of_known_ops(empty, test_context)
    # The ops of the module count too, known to the context or not.
    assert mul_by_one in patterns_of_known_ops(mul_by_one_module())


def test_the_pass_manager_gives_its_context_to_the_passes_that_take_one(test_context):
    pm = PassManager("canonicalize,cse,stabilize{max-iterations=2}", context=test_context)
    canonicalize, cse, stabilize = pm.passes
    assert canonicalize.context is test_context and stabilize.context is test_context
    assert not hasattr(cse, "context")
    # The context is not an option: pipeline text and equality ignore it.
    assert pm.pipeline == "canonicalize,cse,stabilize{max-iterations=2}"
    assert canonicalize == Canonicalize()
    assert "context" not in [option.key for option in Canonicalize.options()]
    module = mul_by_one_module()
    pm.run(module)
    assert [op.name for op in module.functions[0].body.block.ops] == ["func.return"]


def test_the_test_dialects_ops_behave_as_documented(test_context):
    module = parse_module('''
        func.func @f(%x: i64) -> i64 {
          %two = test.constant 2
          %three = test.constant 3 : i8
          %p = "test.pure"(%x) : (i64) -> i64
          %s = test.add %x, %two : i64
          "test.checked"(%s) : (i64) -> ()
          func.return %s : i64
        }''', context=test_context)
    ops = list(module.functions[0].body.block.ops)
    assert [op.value for op in ops[:2]] == [2, 3] and str(ops[1].out.type) == "i8"
    assert isinstance(ops[2], PureOp) and ops[3].fold() is None
    verify(module)
    ops[4].attributes["error"] = StringAttr("no")
    with pytest.raises(VerifyError, match="^no$"):
        verify(module)


# -- lowering-opt --------------------------------------------------------------------------------


def test_lowering_opt_loads_a_dialect_on_request(tmp_path, capsys):
    from lowering.cli import main
    path = tmp_path / "t.mlir"
    path.write_text("func.func @f(%x: i64) -> i64 {\n  %one = test.constant 1\n"
                    "  %y = test.mul %x, %one : i64\n  func.return %y : i64\n}\n")
    assert main([str(path), "--load-dialect", "test", "-p", "canonicalize"]) == 0
    assert "func.return %x : i64" in capsys.readouterr().out
    assert main([str(path)]) == 1
    assert "unknown dialect 'test' in op 'test.constant'" in capsys.readouterr().err
    assert main([str(path), "--load-dialect", "nope"]) == 2
    assert "--load-dialect: unknown dialect 'nope'" in capsys.readouterr().err


def test_a_reproducer_records_the_dialects_its_input_needs(tmp_path, capsys):
    from lowering.cli import main
    path, reproducer = tmp_path / "t.mlir", tmp_path / "repro.mlir"
    path.write_text("func.func @f(%x: i64) -> i64 {\n  %one = test.constant 1\n"
                    "  %y = test.mul %x, %one : i64\n  func.return %y : i64\n}\n")
    failing = "canonicalize{disable-patterns=nope}"
    assert main([str(path), "--load-dialect", "test", "-p", f"cse,{failing}",
                 "--reproducer", str(reproducer)]) == 1
    capsys.readouterr()
    assert reproducer.read_text().splitlines()[0] == (
        f"// configuration: -p '{failing}' --load-dialect test")
    # Run again, it reads the test ops and fails in the same pass (not on an unknown dialect).
    assert main([str(reproducer), "--run-reproducer"]) == 1
    err = capsys.readouterr().err
    assert "pass 'canonicalize' failed: disable-patterns" in err and "unknown dialect" not in err
