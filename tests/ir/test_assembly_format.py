"""Assembly formats: every registered op prints in its pretty form and parses back to the same op;
malformed formats are refused when the class is defined; malformed text is reported at its token.
"""
import numpy as np
import pytest

import lowering.dialects  # noqa: F401  (registers every op)
from lowering.dialects import loops, scalar
from lowering.dialects.tensor import branches as tensor_branches
from lowering.dialects.loops.types import BufferType
from lowering.ir.assembly_format import FormatError
from lowering.ir.attributes import (ArrayAttr, DenseAttr, FloatAttr, IntAttr, StringAttr,
                                    SymbolRefAttr, TypeAttr, UnitAttr)
from lowering.ir.constraints import ArrayAttrOf, EnumAttr
from lowering.ir.context import default_context
from lowering.ir.core import (TERMINATOR, Block, Operation, Region, attr, operand, region, result,
                              var_operand, var_result)
from lowering.ir.parser import ParseError, parse_module
from lowering.ir.printer import print_op
from lowering.ir.types import C64, F32, I1, I64, INDEX, FunctionType, TensorType

TENSOR = TensorType((None, 3), F32)
BUFFER = BufferType((None,), F32)

# Values an attribute field of each kind gets in the sample ops.
SAMPLE_ATTRIBUTES = {
    IntAttr: IntAttr(1),
    ArrayAttr: ArrayAttr((IntAttr(0), IntAttr(1))),
    StringAttr: StringAttr("x"),
    TypeAttr: TypeAttr(F32),
    UnitAttr: UnitAttr(),
    SymbolRefAttr: SymbolRefAttr("k"),
    FloatAttr: FloatAttr(0.5, F32),
    DenseAttr: DenseAttr.from_array(np.array([1.0, 2.0], dtype=np.float32)),
}
# Operand types to try, in order, until the op's class can type its results from them.
CANDIDATE_TYPES = [TENSOR, F32, INDEX, TensorType((None,), I64), BUFFER, I1,
                   TensorType((None,), C64), C64]  # the functions only complex numbers have


def sample_attribute(constraint):
    """An attribute the field's constraint accepts: an enum's first value, an array of samples of
    its element, else the first sample that fits."""
    if isinstance(constraint, EnumAttr):
        return StringAttr(constraint.values[0])
    if isinstance(constraint, ArrayAttrOf):
        element = sample_attribute(constraint.element)
        return ArrayAttr((element, element))
    candidates = [*SAMPLE_ATTRIBUTES.values(), TypeAttr(FunctionType((F32,), ())),
                  TypeAttr(TENSOR), TypeAttr(I64)]
    return next(a for a in candidates if constraint.check(a, {}))


def sample_attributes(cls) -> dict:
    attributes = {}
    for field in cls._attr_fields:
        attributes[field.name] = sample_attribute(field.constraint)
    if cls.name in ("func.func", "gpu.func"):
        attributes["function_type"] = TypeAttr(FunctionType((F32,), ()))
    return attributes


MATRIX = BufferType((None, 4), F32)


def _constant_one(builder):
    """A branch body of its own (a sample op's regions use no value from outside)."""
    return builder.insert(scalar.ConstantOp.build(1.0, F32)).result


# Ops whose pretty forms leave out what their types say (index operands, a buffer's element):
# built by their builders, from values of these types.
BUILT = {
    "loops.alloc": ([INDEX], lambda n: loops.AllocOp.build([n, 4], F32)),
    "loops.assert": ([I1], lambda ok: loops.AssertOp.build(ok, "failed", 3, kind="index")),
    "loops.broadcast_view": ([BufferType((1, 4), F32), INDEX],
                             lambda b, n: loops.BroadcastViewOp.build(b, [n, None])),
    "loops.dealloc": ([MATRIX], lambda b: loops.DeallocOp.build(b)),
    "loops.dim": ([MATRIX], lambda b: loops.DimOp.build(b, 1)),
    "loops.stride": ([MATRIX], lambda b: loops.StrideOp.build(b, 0)),
    "loops.fill": ([F32, MATRIX], lambda x, b: loops.FillOp.build(x, b)),
    "loops.for": ([INDEX, INDEX, INDEX, F32],
                  lambda lo, hi, st, x: loops.ForOp.build(lo, hi, st, [x], lambda b, i, a: a)),
    "loops.load": ([MATRIX, INDEX], lambda b, i: loops.LoadOp.build(b, [i, i])),
    "loops.parallel": ([INDEX, INDEX, INDEX],
                       lambda lo, hi, st: loops.ParallelOp.build([lo], [hi], [st],
                                                                 lambda b, i: None)),
    "loops.reshape_view": ([MATRIX, INDEX], lambda b, n: loops.ReshapeViewOp.build(b, [n, 2, 2])),
    "loops.store": ([F32, MATRIX, INDEX], lambda x, b, i: loops.StoreOp.build(x, b, [i, i])),
    "loops.subview": ([MATRIX, INDEX], lambda b, i: loops.SubviewOp.build(
        b, [i, 3], [1, 2], [1, -1], drop_dims=[0])),
    "loops.transpose_view": ([MATRIX], lambda b: loops.TransposeViewOp.build(b, [1, "x", 0])),
    "loops.yield": ([F32, INDEX], lambda x, i: loops.YieldOp.build([x, i])),
    "loops.if": ([I1], lambda c: loops.IfOp.build(c, [F32], _constant_one, _constant_one)),
    "tensor.if": ([TensorType((), I1), TENSOR],
                  lambda c, x: tensor_branches.IfOp.build(c, [x], [x])),
    "loops.python_call": ([MATRIX], lambda b: loops.PythonCallOp.build([b], 0, "Op", [MATRIX])),
    "loops.python_results": ([INDEX, MATRIX], lambda t, b: loops.PythonResultsOp.build(t, [b])),
}


def sample_op(cls) -> tuple[Operation, Block]:
    """An op of ``cls`` with one value per operand field (two for a variadic one), results its
    format can spell, sample attributes and one block per region; and the block whose arguments
    are its operands."""
    if cls.name in BUILT:
        types, build = BUILT[cls.name]
        block = Block(types)
        return build(*block.args), block
    attributes = sample_attributes(cls)
    counts = [2 if f.variadic else 1 for f in cls._operand_fields]
    compiled = cls.compiled_format
    for candidate in CANDIDATE_TYPES:
        types = [candidate] * sum(counts)
        if cls._operand_fields and cls._operand_fields[0].name == "cond":  # select's condition
            types[0] = candidate.with_element(I1) if isinstance(candidate, TensorType) else I1
        if compiled is None or not compiled.infers_results:
            results = [F32] * sum(2 if f.variadic else 1 for f in cls._result_fields)
            break
        try:
            results = cls.infer_result_types(types, attributes)
            break
        except Exception:
            continue
    else:
        raise AssertionError(f"{cls.name}: no candidate operand type gives result types")
    block = Block(types)
    regions = [Region([Block([F32] if cls.name in ("func.func", "gpu.func") else [])])
               for _ in cls._region_fields]
    op = cls.create(list(block.args), results, attributes, regions)
    return op, block


def in_function(op: Operation, block: Block) -> str:
    """``op`` printed inside a function whose arguments stand for ``block``'s (a terminator
    ends the function)."""
    func = default_context().ops["func.func"].build("f", [a.type for a in block.args], [])
    body = func.body.block
    for index, value in enumerate(list(op.operands)):
        op.set_operand(index, body.args[value.index])
    body.append(op)
    if TERMINATOR not in op.traits:
        body.append(default_context().ops["func.return"].create([]))
    return print_op(default_context().ops["builtin.module"].build([func]))


# The ops of the default dialects.
PROJECT_OPS = sorted(default_context().ops)


def test_every_project_op_is_sampled():
    assert len(PROJECT_OPS) >= 185 and "tensor.exp" in PROJECT_OPS and "gpu.func" in PROJECT_OPS


@pytest.mark.parametrize("name", PROJECT_OPS)
def test_every_op_prints_pretty_and_parses_back(name):
    cls = default_context().ops[name]
    op, block = sample_op(cls)
    text = in_function(op, block)
    assert f'"{name}"' not in text, text  # the pretty form, not the generic one
    parsed = parse_module(text)
    assert print_op(parsed) == text
    module = op.parent_op.parent_op
    assert print_op(parsed, generic=True) == print_op(module, generic=True)


def test_the_generic_form_still_parses():
    text = ('func.func @f(%x: tensor<?x3xf32>) -> tensor<?x3xf32> {\n'
            '  %e = "tensor.exp"(%x) : (tensor<?x3xf32>) -> tensor<?x3xf32>\n'
            '  func.return %e : tensor<?x3xf32>\n}')
    assert "%e = tensor.exp %x : tensor<?x3xf32>" in print_op(parse_module(text))


def test_elementwise_forms_write_a_shared_type_once_and_differing_types_each():
    text = ('func.func @f(%x: tensor<?x3xf32>, %y: tensor<1x3xf32>) {\n'
            '  %a = "tensor.add"(%x, %x) : (tensor<?x3xf32>, tensor<?x3xf32>) -> tensor<?x3xf32>\n'
            '  %b = "tensor.add"(%x, %y) : (tensor<?x3xf32>, tensor<1x3xf32>) -> tensor<?x3xf32>\n'
            '  %c = "tensor.gt"(%x, %y) : (tensor<?x3xf32>, tensor<1x3xf32>) -> tensor<?x3xi1>\n'
            '  func.return\n}')
    printed = print_op(parse_module(text))
    assert "%a = tensor.add %x, %x : tensor<?x3xf32>\n" in printed
    assert "%b = tensor.add %x, %y : tensor<?x3xf32>, tensor<1x3xf32>\n" in printed
    assert "%c = tensor.gt %x, %y : tensor<?x3xf32>, tensor<1x3xf32>\n" in printed
    assert print_op(parse_module(printed)) == printed


def test_an_op_its_format_cannot_spell_prints_generically():
    # The result type is not the one tensor.exp infers: only the generic form says it.
    text = ('func.func @f(%x: tensor<?xf32>) {\n'
            '  %e = "tensor.exp"(%x) : (tensor<?xf32>) -> tensor<?xf64>\n  func.return\n}')
    printed = print_op(parse_module(text))
    assert '%e = "tensor.exp"(%x) : (tensor<?xf32>) -> tensor<?xf64>' in printed


def test_optional_groups_and_attributes():
    text = ('func.func @f(%x: tensor<?x3xf32>) {\n'
            '  %s = tensor.sum %x axes [1] keepdims 1 : tensor<?x3xf32> -> tensor<?x1xf32>\n'
            '  %t = tensor.sum %x axes [0, 1] {note = "n"} : tensor<?x3xf32> -> tensor<f32>\n'
            '  func.return\n}')
    module = parse_module(text)
    s, t = list(module.functions[0].body.block.ops)[:2]
    assert s.attributes == {"axes": ArrayAttr((IntAttr(1),)), "keepdims": IntAttr(1)}
    assert t.attributes["note"] == StringAttr("n") and "keepdims" not in t.attributes
    assert print_op(module) == print_op(parse_module(print_op(module)))


def test_an_empty_variadic_list_stops_at_the_next_ops_results():
    # A terminator followed by another op (invalid, but printable): the names of the next op's
    # results are not the terminator's operands.
    text = ('func.func @f(%x: f32) {\n  func.return\n  %a, %b = "nodialect.pair"(%x) : (f32) -> (f32, f32)\n'
            '  %c = scalar.neg %x : f32\n}')
    with pytest.raises(ParseError, match="unknown dialect 'nodialect'"):
        parse_module(text)  # reached only when func.return took no operands
    ops = list(parse_module(text.replace('  %a, %b = "nodialect.pair"(%x) : (f32) -> (f32, f32)\n', ''))
               .functions[0].body.block.ops)
    assert [op.name for op in ops] == ["func.return", "scalar.neg"] and not ops[0].operands
    assert "  func.return\n  %c = scalar.neg %x : f32\n" in print_op(ops[0].parent_op)


# -- format errors, when the class is defined ------------------------------------------------


def define(fmt: str, **fields):
    namespace = {"name": "test.fmt", "assembly_format": fmt,
                 "x": operand(), "out": result(), "axis": attr(IntAttr, default=0), **fields}
    return type("FormatTestOp", (Operation,), namespace)


@pytest.mark.parametrize("fmt, message", [
    ("$y attr-dict : type($x) -> type($out)", "unknown field '$y'"),
    ("$x attr-dict : type($x) -> type($out) bogus", "unknown directive 'bogus'"),
    ("$x : type($x) -> type($out)", "no 'attr-dict' directive"),
    ("attr-dict : type($out)", "operand '$x' is not in the format"),
    ("$x attr-dict -> type($out)", "the type of operand '$x' is not in the format"),
    ("$x attr-dict : type($x)", "the type of result '$out' is not in the format"),
    ("$x $x attr-dict : type($x) -> type($out)", "'$x' prints 'x', which '$x' prints already"),
    ("$x (`axis` $axis attr-dict : type($x) -> type($out)", "expected ')' to end the optional"),
    ("$x ) attr-dict : type($x) -> type($out)", "unbalanced ')'"),
    ("$x (`axis` $axis)? attr-dict : type($x) -> type($out)", None),
    ("$x ($axis `axis`)? attr-dict : type($x) -> type($out)", "must start with a literal"),
    ("$x (`axis`)? attr-dict : type($x) -> type($out)", "anchor of optional group"),
    ("$out attr-dict : type($x) -> type($out)", "'$out' is a result"),
    ("$x attr-dict attr-dict : type($x) -> type($out)", "'attr-dict' appears twice"),
    ("$x attr-dict : type(%x) -> type($out)", "unexpected '%x"),
])
def test_malformed_formats_are_refused_naming_the_op_and_directive(fmt, message):
    if message is None:
        assert define(fmt).compiled_format is not None
        return
    with pytest.raises(FormatError) as info:
        define(fmt)
    assert "test.fmt (FormatTestOp)" in str(info.value)
    assert message in str(info.value)


def test_a_format_and_hand_written_hooks_together_are_refused():
    with pytest.raises(TypeError, match="both an assembly_format and print_pretty"):
        define("$x attr-dict : type($x) -> type($out)", print_pretty=lambda op, p: None)


def test_a_subclass_may_switch_its_bases_format_off():
    base = define("$x attr-dict : type($x) -> type($out)")
    plain = type("PlainOp", (base,), {"name": "test.plain", "assembly_format": None})
    assert plain.compiled_format is None and plain.print_pretty is None


def test_a_region_and_a_symbol_in_a_format():
    op_class = type("BoxOp", (Operation,), {
        "name": "test.box", "sym_name": attr(StringAttr), "body": region(),
        "ins": var_operand(), "outs": var_result(),
        "assembly_format": "symbol($sym_name) $ins attr-dict-with-keyword : "
                           "functional-type($ins, $outs) $body"})
    assert [str(e) for e in op_class.compiled_format.elements] == [
        "symbol($sym_name)", "$ins", "attr-dict-with-keyword", ":",
        "functional-type($ins, $outs)", "$body"]


# -- parse errors point at the token ---------------------------------------------------------


@pytest.mark.parametrize("line, column, reason", [
    ("%e = tensor.exp %x tensor<?xf32>", 20, "expected ':' in tensor.exp"),
    ("%e = tensor.exp %x : f32", 17, "'%x' has type tensor<?xf32>, but is used here as f32"),
    ("%e = tensor.and %x, %x : tensor<?xf32>", 6, "cannot infer the result types of 'tensor.and'"),
    ('%e = tensor.sum %x axes "a" : tensor<?xf32> -> tensor<f32>', 25,
     "attribute 'axes' must be an array of IntAttr"),
    ("%e = tensor.softmax %x axis [1] : tensor<?xf32>", 29, "expected an integer"),
    ("%e = tensor.add %x, %x : tensor<?xf32>, tensor<?xf32>, tensor<?xf32>", 26,
     "3 types for the values of type($lhs, $rhs)"),
])
def test_parse_errors_point_at_the_token(line, column, reason):
    text = f"func.func @f(%x: tensor<?xf32>) {{\n  {line}\n  func.return\n}}"
    with pytest.raises(ParseError) as info:
        parse_module(text, "in.mlir")
    assert (info.value.line, info.value.col - 2) == (2, column), str(info.value)
    assert reason in info.value.reason, str(info.value)


def test_a_region_whose_empty_entry_block_has_followers_prints_generically():
    launch_class = default_context().ops["gpu.launch"]
    (n,) = Block([INDEX]).args
    launch = launch_class.create([n] * 6, [], {}, [Region([Block(), Block()])])
    text = print_op(launch)
    assert text.startswith('"gpu.launch"(')
    single = launch_class.create([n] * 6, [], {}, [Region([Block()])])
    assert print_op(single).startswith("gpu.launch blocks(")
