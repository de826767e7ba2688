"""Passes: the registry and pipeline syntax, the pass manager and its instrumentations, and the
generic passes canonicalize, cse and dce."""
import io
from typing import Literal

import pytest

from lowering.dialects.builtin import FuncOp, ModuleOp, ReturnOp
from lowering.dialects.test import (ConstantOp, GenericOp, IsolatedOp, MulOp, PureOp, YieldOp,
                                    mul_by_one)
from lowering.ir.core import Block, Operation, Region, VerifyError
from lowering.ir.location import FusedLoc, Location
from lowering.ir.pass_manager import (CrashReproducer, IRPrinting, PassError, PassInstrumentation,
                                      PassManager, PassTiming)
from lowering.ir.passes import (PASS_REGISTRY, ModulePass, PassFailure, PipelineError, lookup_pass,
                                option, parse_pipeline, pipeline_to_string, register_pass)
from lowering.ir.printer import print_op
from lowering.ir.types import I64
from lowering.passes.canonicalize import canonicalization_patterns
from lowering.passes.cse import eliminate_common_subexpressions
from lowering.passes.dce import eliminate_dead_code

# -- IR of the test dialect's ops ----------------------------------------------------------------


def const(n, line=1):
    return ConstantOp.build(n, location=Location("m.py", line, 1))


def binary(cls, a, b, line=1):
    return cls.create([a.results[0] if isinstance(a, Operation) else a,
                       b.results[0] if isinstance(b, Operation) else b], [I64],
                      location=Location("m.py", line, 1))


def module_of(*ops, inputs=(), returns=None):
    """A module with one function ``f`` holding ``ops`` and returning ``returns`` (op results)."""
    f = FuncOp.build("f", list(inputs), [I64] * len(returns or []), location=Location("m.py", 0, 0))
    block = f.body.block
    for op in ops:
        block.append(op)
    block.append(ReturnOp.create([r.results[0] for r in returns or []]))
    return ModuleOp.build([f])


def body_names(module):
    return [op.name for op in module.functions[0].body.block.ops]


def map_op(x, k):
    """A ``test.pure`` op of ``x`` whose body multiplies by constant ``k``."""
    block = Block([I64])
    c = const(k)
    m = MulOp.create([block.args[0], c.out], [I64])
    for op in (c, m, YieldOp.create([m.out])):
        block.append(op)
    return PureOp.create([x], [I64], regions=[Region([block])])


# -- passes used by the pass manager tests ---------------------------------------------------------


@register_pass
class Options(ModulePass):
    """Takes one option of each kind."""
    name = "test-options"
    count: int = option(1, "how many")
    ratio: float = 0.5
    flag: bool = False
    label: str = "x"
    names: tuple[str, ...] = ()
    sizes: tuple[int, ...] = (1, 2)
    mode: Literal["fast", "slow"] = "fast"
    limit: int | None = None

    def apply(self, module):
        pass


@register_pass
class AddConst(ModulePass):
    """Appends a constant to the function (changes the IR)."""
    name = "test-add-const"
    value: int = 7

    def apply(self, module):
        f = module.functions[0]
        f.body.block.insert_before(const(self.value), f.body.block.last_op)


@register_pass
class Fails(ModulePass):
    """Fails with a message about the first op."""
    name = "test-fails"

    def apply(self, module):
        raise PassFailure("cannot handle this", module.functions[0].body.block.first_op)


@register_pass
class Crashes(ModulePass):
    """Has a bug."""
    name = "test-crashes"

    def apply(self, module):
        return {}["missing"]


@register_pass
class BreaksIR(ModulePass):
    """Leaves IR that does not verify: returns no value from a function that returns one."""
    name = "test-breaks-ir"

    def apply(self, module):
        ret = module.functions[0].body.block.last_op
        ret.set_operands([])


# -- pipelines ------------------------------------------------------------------------------------


def test_pipeline_parsing_with_options_of_each_type():
    (p,) = parse_pipeline('test-options{count=0x10 ratio=2.5e1 flag names=a,"b c" sizes=3,4 '
                          'mode=slow label={x y} limit=3}')
    assert p == Options(count=16, ratio=25.0, flag=True, label="x y", names=("a", "b c"),
                        sizes=(3, 4), mode="slow", limit=3)
    assert parse_pipeline("test-options{limit=none flag=false sizes=}")[0] == Options(sizes=())
    assert parse_pipeline("test-options{max_count=1}".replace("max_", "")) == [Options()]


def test_nesting_is_flattened_and_text_round_trips():
    text = "builtin.module(test-options{count=2}, func.func(test-add-const, dce), any(cse))"
    passes = parse_pipeline(text)
    assert [p.name for p in passes] == ["test-options", "test-add-const", "dce", "cse"]
    printed = pipeline_to_string(passes)
    assert printed == "test-options{count=2},test-add-const,dce,cse"
    assert parse_pipeline(printed) == passes
    odd = Options(label="a b", names=("x,y", "z"), flag=True, limit=4)
    assert parse_pipeline(pipeline_to_string([odd])) == [odd]


@pytest.mark.parametrize("text, column, message", [
    ("cse,csee", 5, "unknown pass 'csee'; did you mean 'cse'"),
    ("test-options{cont=1}", 14,
     "unknown option 'cont' of pass 'test-options'; did you mean 'count'"),
    ("test-options{count=abc}", 20,
     "option 'count' of pass 'test-options': expected an integer, got 'abc'"),
    ("test-options{flag=maybe}", 19, "expected true or false, got 'maybe'"),
    ("test-options{mode=medium}", 19, "expected one of fast, slow, got 'medium'"),
    ("test-options{count}", 19, "option 'count' of pass 'test-options' needs a value (int)"),
    ("test-options{count=1", 21, "not closed"),
    ("cse dce", 5, "expected ',' or the end, got 'd'"),
    ("builtin.module(cse", 19, "expected ',' or ')', got the end"),
    ("cse,", 5, "expected a pass name, got the end"),
    ('test-options{label="x}', 20, "unterminated string"),
])
def test_pipeline_errors_name_what_is_wrong_and_where(text, column, message):
    with pytest.raises(PipelineError) as info:
        parse_pipeline(text)
    error = info.value
    assert message in error.message
    assert error.column + 1 == column
    lines = str(error).splitlines()
    assert lines[0].startswith(f"invalid pass pipeline at column {column}:")
    assert lines[1] == "  " + text and lines[2] == "  " + " " * (column - 1) + "^"


def test_registry_rules():
    assert lookup_pass("cse").name == "cse"
    with pytest.raises(KeyError, match="did you mean 'canonicalize'"):
        lookup_pass("canonicalise")
    with pytest.raises(ValueError, match="not kebab-case"):
        @register_pass
        class Bad(ModulePass):
            name = "Bad_Name"
    with pytest.raises(ValueError, match="'cse' is taken"):
        @register_pass
        class Other(ModulePass):
            name = "cse"
    with pytest.raises(TypeError, match="not supported"):
        @register_pass
        class WeirdOption(ModulePass):
            name = "test-weird-option"
            table: dict = None
    assert "test-weird-option" not in PASS_REGISTRY
    assert Options.summary() == "Takes one option of each kind."
    assert [(o.key, o.type_name(), o.default) for o in Options.options()][:2] == [
        ("count", "int", 1), ("ratio", "float", 0.5)]
    with pytest.raises(Exception):  # frozen
        Options().count = 3


# -- the pass manager -----------------------------------------------------------------------------


class Log(PassInstrumentation):
    def __init__(self):
        self.events = []

    def before_pass(self, pass_, module):
        self.events.append(("before", pass_.name))

    def after_pass(self, pass_, module, changed):
        self.events.append(("after", pass_.name, changed))

    def after_failure(self, pass_, module, error):
        self.events.append(("failed", pass_.name, type(error).__name__))


def small_module():
    a = const(2)
    return module_of(a, returns=[a])


def test_pass_manager_runs_in_order_and_reports_changes():
    module = small_module()
    log = Log()
    pm = PassManager("test-options,test-add-const{value=3},cse", instrumentations=[log])
    assert pm.pipeline == "test-options,test-add-const{value=3},cse"
    pm.run(module)
    assert log.events == [("before", "test-options"), ("after", "test-options", False),
                          ("before", "test-add-const"), ("after", "test-add-const", True),
                          ("before", "cse"), ("after", "cse", False)]
    assert body_names(module) == ["test.constant", "test.constant", "func.return"]


def test_failures_name_the_pass_and_reach_instrumentations():
    log = Log()
    pm = PassManager([AddConst(), Fails()], instrumentations=[log])
    module = small_module()
    with pytest.raises(PassError, match="pass 'test-fails' failed: cannot handle this") as info:
        pm.run(module)
    assert info.value.op is module.functions[0].body.block.first_op
    assert log.events[-1] == ("failed", "test-fails", "PassError")
    with pytest.raises(PassError, match="verification failed after pass 'test-breaks-ir'") as info:
        PassManager([BreaksIR()]).run(small_module())
    assert isinstance(info.value.__cause__, VerifyError)
    with pytest.raises(PassError, match="pass 'test-crashes' crashed: KeyError") as info:
        PassManager("test-crashes").run(small_module())
    assert info.value.crashed
    PassManager([BreaksIR()], verify_each=False).run(small_module())


def test_input_is_verified_before_any_pass():
    module = small_module()
    module.functions[0].body.block.last_op.set_operands([])
    with pytest.raises(VerifyError, match="the input does not verify"):
        PassManager("cse").run(module)


def run_printing(pipeline, **flags):
    out = io.StringIO()
    module = small_module()
    try:
        PassManager(pipeline, instrumentations=[IRPrinting(stream=out, **flags)]).run(module)
    except PassError:
        pass
    return out.getvalue()


def headers(text):
    return [line for line in text.splitlines() if line.startswith("// -----// IR Dump")]


def test_print_ir_before_and_after_named_passes_and_all():
    text = run_printing("cse,test-add-const,dce", before=["dce"], after=["cse"])
    assert headers(text) == ["// -----// IR Dump After cse //----- //",
                             "// -----// IR Dump Before dce //----- //"]
    after_cse, before_dce = text.split("// -----// IR Dump Before dce //----- //")
    assert after_cse.count("test.constant") == 1 and before_dce.count("test.constant") == 2
    assert headers(run_printing("cse,dce", before_all=True)) == [
        "// -----// IR Dump Before cse //----- //", "// -----// IR Dump Before dce //----- //"]
    assert headers(run_printing("cse,dce", after_all=True)) == [
        "// -----// IR Dump After cse //----- //", "// -----// IR Dump After dce //----- //"]


def test_print_ir_after_change_and_after_failure():
    assert headers(run_printing("cse,test-add-const{value=5},test-options", after_change=True)) == [
        "// -----// IR Dump After test-add-const{value=5} //----- //"]
    assert headers(run_printing("test-add-const,dce", after_change=True)) == [
        "// -----// IR Dump After test-add-const //----- //",
        "// -----// IR Dump After dce //----- //"]  # dce erased the unused constant
    assert headers(run_printing("cse,test-add-const", after=["cse"], after_change=True)) == []
    text = run_printing("test-add-const,test-fails", after_failure=True)
    assert headers(text) == ["// -----// IR Dump After test-fails Failed //----- //"]
    assert text.count("test.constant") == 2
    text = run_printing("cse", after_all=True, print_locations=True, generic=True)
    assert 'loc("m.py":1:1)' in text and '"func.func"' in text


def test_timing_records_every_pass():
    timing = PassTiming()
    PassManager("cse,test-add-const{value=2},dce", instrumentations=[timing]).run(small_module())
    assert [name for name, _ in timing.records] == ["cse", "test-add-const{value=2}", "dce"]
    assert all(seconds >= 0 for _, seconds in timing.records)
    report = timing.report().splitlines()
    assert "Execution time report" in report[1]
    assert report[-1].endswith("(100.0%)  Total")
    assert [line.split()[-1] for line in report[-4:-1]] == ["cse", "test-add-const{value=2}", "dce"]


def test_crash_reproducer_holds_the_failing_pass_input_and_pipeline(tmp_path):
    path = tmp_path / "repro.mlir"
    module = small_module()
    before = None

    class Snapshot(PassInstrumentation):
        def before_pass(self, pass_, module):
            nonlocal before
            before = print_op(module, print_locations=True)

    repro = CrashReproducer(str(path))
    with pytest.raises(PassError):
        PassManager("test-add-const,test-options{count=3 label={it's}},test-fails",
                    instrumentations=[Snapshot(), repro]).run(module)
    lines = path.read_text().splitlines()
    assert repro.written == str(path)
    assert lines[0] == "// configuration: -p 'test-fails'"
    assert lines[1] == "// reproducer of: pass 'test-fails' failed: cannot handle this"
    assert "\n".join(lines[2:]) == before.rstrip()
    assert "\n".join(lines[2:]).count("test.constant ") == 2  # after test-add-const
    assert not CrashReproducer(str(tmp_path / "unused")).written


def test_reproducer_quotes_the_pipeline(tmp_path):
    path = tmp_path / "r.mlir"
    with pytest.raises(PassError):
        PassManager([Crashes()], instrumentations=[CrashReproducer(str(path))]).run(small_module())
    assert path.read_text().startswith("// configuration: -p 'test-crashes'\n"
                                       "// reproducer of: pass 'test-crashes' crashed: KeyError")


# -- cse -----------------------------------------------------------------------------------------


def test_cse_merges_equal_pure_ops_and_fuses_their_locations():
    a, b = const(2, line=1), const(2, line=2)
    c = const(3, line=3)
    m1 = binary(MulOp, a, c, line=4)
    m2 = binary(MulOp, c, b, line=5)  # commutative: equal to m1 once b is a
    s1 = binary(PureOp, m1, c)
    s2 = binary(PureOp, c, m2)  # not commutative: stays
    e1, e2 = GenericOp.create([], [I64]), GenericOp.create([], [I64])
    module = module_of(a, b, c, m1, m2, s1, s2, e1, e2, returns=[s1])
    s2_user = GenericOp.create([s2.results[0], e1.results[0], e2.results[0]], [I64])
    module.functions[0].body.block.insert_before(s2_user, module.functions[0].body.block.last_op)
    assert eliminate_common_subexpressions(module) == 2
    assert body_names(module) == ["test.constant", "test.constant", "test.mul", "test.pure",
                                  "test.pure", "test.op", "test.op",
                                  "test.op", "func.return"]
    assert a.location == FusedLoc((Location("m.py", 1, 1), Location("m.py", 2, 1)))
    assert m1.location == FusedLoc((Location("m.py", 4, 1), Location("m.py", 5, 1)))
    assert s2.operands[1] is m1.out


def test_cse_respects_scopes_regions_and_isolation():
    x = const(1)
    outer_const = const(3)
    m1, m2 = map_op(x.out, 3), map_op(x.out, 3)
    m3 = map_op(x.out, 4)  # different body: stays
    iso_body = Block(ops=[const(3), YieldOp.create([])])
    iso = IsolatedOp.create(regions=[Region([iso_body])])
    module = module_of(x, outer_const, m1, m2, m3, iso, returns=[m1])
    s = GenericOp.create([m2.results[0], m3.results[0]], [I64])
    module.functions[0].body.block.insert_before(s, module.functions[0].body.block.last_op)
    eliminate_common_subexpressions(module)
    # the constant inside m1's body is the outer one; m2 equals m1; the isolated body keeps its own
    assert s.operands[0] is m1.results[0] and s.operands[1] is m3.results[0]
    assert [op.name for op in m1.regions[0].block.ops] == ["test.mul", "test.yield"]
    assert m1.regions[0].block.first_op.rhs is outer_const.out
    assert [op.name for op in iso_body.ops] == ["test.constant", "test.yield"]
    # Two functions never share a constant.
    f2 = FuncOp.build("g", [], [I64])
    c2 = const(1)
    f2.body.block.append(c2)
    f2.body.block.append(ReturnOp.create([c2.out]))
    module.body.block.append(f2)
    assert eliminate_common_subexpressions(module) == 0


def test_cse_does_not_reach_into_sibling_blocks():
    b1, b2 = Block(ops=[const(5), YieldOp.create([])]), Block(ops=[const(5), YieldOp.create([])])
    holder = Operation(regions=[Region([b1, b2])])
    assert eliminate_common_subexpressions(holder) == 0


# -- dce and canonicalize ----------------------------------------------------------------------


def test_dce_erases_dead_chains_inside_regions_but_not_effects():
    a = const(1)
    m = binary(MulOp, a, a)
    dead_chain = binary(PureOp, m, m)
    effect = GenericOp.create([a.out], [I64])
    live_map = map_op(a.out, 2)
    inner_dead = const(9)
    live_map.regions[0].block.insert_before(inner_dead, live_map.regions[0].block.first_op)
    module = module_of(a, m, dead_chain, effect, live_map, returns=[live_map])
    assert eliminate_dead_code(module) == 3
    assert body_names(module) == ["test.constant", "test.op", "test.pure", "func.return"]
    assert [op.name for op in live_map.regions[0].block.ops] == ["test.constant", "test.mul",
                                                           "test.yield"]
    PassManager("dce").run(module)
    assert eliminate_dead_code(module) == 0


def test_canonicalize_folds_applies_op_patterns_and_removes_dead_code():
    x = GenericOp.create([], [I64])
    one, two, three = const(1), const(2), const(3)
    six = binary(MulOp, two, three, line=20)  # folds to 6
    y = binary(MulOp, x, one, line=21)  # x * 1 -> x (the op's canonicalization pattern)
    z = binary(PureOp, y, six, line=22)
    dead = binary(PureOp, x, x)
    module = module_of(x, one, two, three, six, y, z, dead, returns=[z])
    PassManager("canonicalize").run(module)
    assert body_names(module) == ["test.op", "test.constant", "test.pure", "func.return"]
    assert z.operands[0] is x.results[0]
    six = z.operands[1].owner
    assert six.value == 6 and six.location == Location("m.py", 20, 1)


def test_canonicalize_options():
    x = GenericOp.create([], [I64])
    one = const(1)
    y = binary(MulOp, x, one)
    module = module_of(x, one, y, returns=[y])
    PassManager("canonicalize{disable-patterns=mul_by_one}").run(module)
    assert body_names(module) == ["test.op", "test.constant", "test.mul", "func.return"]
    with pytest.raises(PassError, match="no canonicalization pattern is called 'mul_by_on'; "
                                        "did you mean 'mul_by_one'"):
        PassManager("canonicalize{disable-patterns=mul_by_on}").run(module)
    assert mul_by_one in canonicalization_patterns([MulOp, MulOp, ConstantOp])


# -- option ranges --------------------------------------------------------------------------------


@pytest.mark.parametrize("pipeline, message", [
    ("canonicalize{max-iterations=0}", "option 'max-iterations' of pass 'canonicalize' must be "
                                       "at least 1, got 0"),
    ("stabilize{max-iterations=-2}", "must be at least 1, got -2"),
    ("map-to-gpu{tile-size=33}", "option 'tile-size' of pass 'map-to-gpu' must be at most 32"),
    ("map-to-gpu{block-size=96}", "must be a power of two, got 96"),
    ("bufferize{blas-min-work=-1}", "must be at least 0, got -1"),
])
def test_options_out_of_range_are_pipeline_errors(pipeline, message):
    with pytest.raises(PipelineError, match=message.replace("(", r"\(")):
        parse_pipeline(pipeline)


def test_options_out_of_range_are_refused_from_python_too():
    canonicalize = PASS_REGISTRY["canonicalize"]
    with pytest.raises(ValueError, match="pass 'canonicalize': option 'max-iterations' must be "
                                         "at least 1, got 0"):
        canonicalize(max_iterations=0)
    with pytest.raises(ValueError, match="option 'max-iterations' must be an int, got '3'"):
        canonicalize(max_iterations="3")
    assert canonicalize(max_iterations=1).max_iterations == 1


def test_an_option_out_of_range_is_a_usage_error_of_the_cli(capsys, tmp_path):
    from lowering.cli import main
    path = tmp_path / "f.mlir"
    path.write_text("func.func @f() { func.return }\n")
    assert main([str(path), "-p", "canonicalize{max-iterations=0}"]) == 2
    err = capsys.readouterr().err
    assert "must be at least 1, got 0" in err and "Traceback" not in err


# -- crashes are reported at the op, without a traceback -----------------------------------------


@register_pass
class CrashesAtReturn(ModulePass):
    """Has a bug that shows on return ops."""
    name = "test-crashes-at-return"

    def apply(self, module):
        for op in module.walk():
            if op.name == "func.return":
                _ = op.operands[5]


CRASH_INPUT = """func.func @f(%x: f32) -> f32 {
  func.return %x : f32
}
"""


def test_a_crashing_pass_is_a_diagnostic_at_the_op_it_was_working_on(tmp_path, capsys):
    from lowering.cli import main
    path = tmp_path / "in.mlir"
    path.write_text(CRASH_INPUT)
    assert main([str(path), "-p", "test-crashes-at-return"]) == 1
    err = capsys.readouterr().err
    lines = err.splitlines()
    assert lines[0] == (f"{path}:2:3: error: pass 'test-crashes-at-return' crashed: IndexError: "
                        f"list index out of range")
    assert "Traceback" not in err
    assert lines[-1].startswith("note: this is a bug in lowering (raised at test_passes.py:")
    assert "--reproducer FILE" in lines[-1]
    assert main([str(path), "-p", "test-crashes-at-return", "--crash-traceback"]) == 1
    err = capsys.readouterr().err
    assert "Traceback (most recent call last)" in err and "op.operands[5]" in err


def test_a_crash_names_the_op_from_the_failing_frames():
    from lowering.ir.pass_manager import op_in_traceback
    module = small_module()
    with pytest.raises(PassError) as info:
        PassManager("test-crashes-at-return").run(module)
    assert info.value.crashed and info.value.op.name == "func.return"
    assert op_in_traceback(KeyError("no frames"), module) is None
