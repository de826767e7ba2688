"""Bad input, end to end through the public API (the "Bad input" list of the foundation issue).

- Malformed IR text, given to ``lowering-opt`` (a subprocess) or ``parse_module``: the error
  gives file, line and column, then the offending line and a caret under the column.
- Unknown names (``lowering-opt`` flags, passes and pass options in pipelines, ops and dialects
  in IR text, config flags, modes, IR stages) are named, with the nearest known names.
- Graph-building errors (incompatible shapes in ``dot``, an update whose type differs from its
  shared variable, an axis out of range, a missing input) are raised when the graph or the
  function is built, naming the variable and the user's line (a line of this file).
- A call that fails, also midway with updates pending, changes no shared variable.
- A wrong dtype or rank of a call argument is an error naming the input.
"""
import os
import subprocess
import sys

import numpy as np
import pytest

import lowering as theano
import lowering.passes  # noqa: F401  (registers every pass, as lowering-opt does)
import lowering.tensor as T
from lowering.compile.graph_to_module import MissingInputError
from lowering.compile.pipeline import ModeError
from lowering.compile.values import InputTypeError
from lowering.config import UnknownFlagError
from lowering.frontend.errors import GraphBuildError
from lowering.ir.interpreter import InterpreterError
from lowering.ir.parser import ParseError, parse_module
from lowering.ir.pass_manager import PassManager
from lowering.ir.passes import PipelineError

HERE = os.path.basename(__file__)


def lowering_opt(*args: str, stdin: str | None = None, env: dict | None = None):
    """Run the ``lowering-opt`` entry point (``lowering.cli:main``) in a fresh interpreter."""
    command = [sys.executable, "-c", "import sys; from lowering.cli import main; sys.exit(main())",
               *args]
    return subprocess.run(command, input=stdin, capture_output=True, text=True, timeout=120,
                          env={**os.environ, **(env or {})})


def assert_points_at(message: str, filename: str, line_text: str, line: int, column: int,
                     reason: str) -> None:
    """``message`` is ``file:line:col: error: reason...``, then the line, then a caret under
    the column."""
    first, source, caret = message.splitlines()[:3]
    assert first.startswith(f"{filename}:{line}:{column}: error: {reason}"), message
    assert source == line_text, message
    assert caret == " " * (column - 1) + "^", message


def raised_at(build, error=GraphBuildError) -> str:
    """Call ``build`` (a function written on one line), check it raises ``error`` naming this
    file and that line, and return the message."""
    with pytest.raises(error) as info:
        build()
    message = str(info.value)
    assert f"{HERE}:{build.__code__.co_firstlineno}" in message, message
    return message


# ---------------------------------------------------------------------------------------------
# Malformed IR text

GOOD_LINES = [
    "func.func @f(%x: tensor<?x3xf32>) -> tensor<?xf32> {",
    '  %0 = "tensor.exp"(%x) : (tensor<?x3xf32>) -> tensor<?x3xf32>',
    '  %1 = "tensor.sum"(%0) {axes = [1 : i64], keepdims = false} : (tensor<?x3xf32>) -> '
    'tensor<?xf32>',
    "  func.return %1 : tensor<?xf32>",
    "}",
]

# (line number, the line with a mistake, where the caret goes, what the error says)
MALFORMED = [
    (2, '  %0 = "tensor.exp"(%x) : (tensor<?x3xf32> -> tensor<?x3xf32>', "->",
     "expected ')'"),
    (2, '  %0 = "tensor.exp"(%y) : (tensor<?x3xf32>) -> tensor<?x3xf32>', "%y",
     "use of undefined value '%y'"),
    (2, '  %0 = "tensor.exp"(%x) : (tensor<?x3xf33>) -> tensor<?x3xf32>', "f33",
     "unknown type 'f33'; did you mean 'f32'"),
    (3, '  %1 = "tensor.sum"(%0) {axes = [1 : i64, keepdims = false} : (tensor<?x3xf32>) -> '
        'tensor<?xf32>', "keepdims", ""),
    (4, "  func.return %1 : tensor<?xf64>", "%1", "'%1' has type tensor<?xf32>, but is used here"),
]


def malformed_text(line: int, bad: str) -> str:
    lines = list(GOOD_LINES)
    lines[line - 1] = bad
    return "\n".join(lines) + "\n"


def test_the_good_text_parses():
    module = parse_module("\n".join(GOOD_LINES))
    assert [op.name for op in module.functions[0].body.block.ops] == [
        "tensor.exp", "tensor.sum", "func.return"]


@pytest.mark.parametrize("line, bad, at, reason", MALFORMED)
def test_parse_module_points_at_the_mistake(line, bad, at, reason):
    with pytest.raises(ParseError) as info:
        parse_module(malformed_text(line, bad), "model.mlir")
    column = bad.index(at) + 1
    assert (info.value.line, info.value.col) == (line, column)
    assert_points_at(str(info.value), "model.mlir", bad, line, column, reason)


def test_lowering_opt_points_at_the_mistake(tmp_path):
    line, bad, at, reason = MALFORMED[0]
    path = tmp_path / "model.mlir"
    path.write_text(malformed_text(line, bad))
    proc = lowering_opt(str(path), "-p", "canonicalize")
    assert proc.returncode != 0 and proc.stdout == ""
    assert "Traceback" not in proc.stderr, proc.stderr
    assert_points_at(proc.stderr, str(path), bad, line, bad.index(at) + 1, reason)


def test_lowering_opt_reads_malformed_text_from_stdin():
    line, bad, at, reason = MALFORMED[2]
    proc = lowering_opt("-", stdin=malformed_text(line, bad))
    assert proc.returncode != 0 and "Traceback" not in proc.stderr, proc.stderr
    assert_points_at(proc.stderr, "<stdin>", bad, line, bad.index(at) + 1, reason)


def test_lowering_opt_prints_verifier_errors_under_the_failing_op(tmp_path):
    # It parses, but tensor.exp of f32 must give f32.
    path = tmp_path / "wrong.mlir"
    path.write_text("func.func @f(%x: tensor<?xf32>) -> tensor<?xf64> {\n"
                    '  %0 = "tensor.exp"(%x) : (tensor<?xf32>) -> tensor<?xf64>\n'
                    "  func.return %0 : tensor<?xf64>\n"
                    "}\n")
    proc = lowering_opt(str(path))
    assert proc.returncode != 0 and "Traceback" not in proc.stderr, proc.stderr
    lines = proc.stderr.splitlines()
    assert lines[0] == (f"{path}:2:8: error: tensor.exp: result type tensor<?xf64> should be "
                        f"tensor<?xf32>"), proc.stderr
    failing = next(i for i, text in enumerate(lines) if '"tensor.exp"' in text)
    assert "func.func @f" in "\n".join(lines[:failing])  # the enclosing function is printed
    assert "^" in lines[failing + 1] and "tensor.exp" in lines[failing + 1], proc.stderr
    assert "f64" in lines[failing + 1] and "f32" in lines[failing + 1], proc.stderr


# ---------------------------------------------------------------------------------------------
# Unknown names, with the nearest known ones


def test_unknown_lowering_opt_flag(tmp_path):
    path = tmp_path / "good.mlir"
    path.write_text("\n".join(GOOD_LINES))
    proc = lowering_opt(str(path), "--print-ir-afterall")
    assert proc.returncode == 2 and "Traceback" not in proc.stderr, proc.stderr
    assert ("unknown option '--print-ir-afterall'; did you mean '--print-ir-after-all'"
            in proc.stderr)


def test_unknown_pass_and_pass_option_in_a_lowering_opt_pipeline(tmp_path):
    path = tmp_path / "good.mlir"
    path.write_text("\n".join(GOOD_LINES))
    proc = lowering_opt(str(path), "-p", "cse,canonicalise")
    assert proc.returncode == 2 and "Traceback" not in proc.stderr, proc.stderr
    first, pipeline, caret = proc.stderr.splitlines()[:3]
    assert "at column 5: unknown pass 'canonicalise'; did you mean 'canonicalize'" in first
    assert pipeline.strip() == "cse,canonicalise"
    assert caret.index("^") == pipeline.index("canonicalise")
    proc = lowering_opt(str(path), "-p", "canonicalize{max-iteration=3}")
    assert proc.returncode == 2, proc.stderr
    assert ("unknown option 'max-iteration' of pass 'canonicalize'; did you mean "
            "'max-iterations'" in proc.stderr)


def test_unknown_name_in_a_python_input_of_lowering_opt(tmp_path):
    path = tmp_path / "model.py"
    path.write_text("import lowering as theano\nimport lowering.tensor as T\n"
                    "x = T.dvector('x')\ntrain = theano.function([x], x * 2)\n")
    proc = lowering_opt(f"{path}:trian")
    assert proc.returncode != 0 and "Traceback" not in proc.stderr, proc.stderr
    assert f"'{path}' defines no 'trian'; did you mean 'train'" in proc.stderr
    assert lowering_opt(f"{path}:train").returncode == 0


def test_unknown_passes_through_the_python_api():
    with pytest.raises(PipelineError, match="unknown pass 'dcee'; did you mean 'dce'"):
        PassManager("cse,dcee")


def test_unknown_op_and_dialect_in_ir_text(tmp_path):
    op_line = '  %0 = "tensor.expp"(%x) : (tensor<?x3xf32>) -> tensor<?x3xf32>'
    path = tmp_path / "typo.mlir"
    path.write_text(malformed_text(2, op_line))
    proc = lowering_opt(str(path))
    assert proc.returncode != 0 and "Traceback" not in proc.stderr, proc.stderr
    assert_points_at(proc.stderr, str(path), op_line, 2, op_line.index('"') + 1,
                     "unknown op 'tensor.expp'; did you mean 'tensor.exp'")
    dialect_line = op_line.replace("tensor.expp", "tensr.exp")
    with pytest.raises(ParseError) as info:
        parse_module(malformed_text(2, dialect_line), "typo.mlir")
    assert_points_at(str(info.value), "typo.mlir", dialect_line, 2, dialect_line.index('"') + 1,
                     "unknown dialect 'tensr' in op 'tensr.exp'; did you mean 'tensor'")


def test_unknown_config_flags():
    with pytest.raises(UnknownFlagError, match=r"unknown flag 'floatx'; did you mean floatX"):
        theano.config.floatx = "float32"
    with pytest.raises(UnknownFlagError, match=r"unknown flag 'devce'; did you mean device"):
        with theano.config.change_flags(devce="cpu"):
            pass  # never reached
    proc = subprocess.run([sys.executable, "-c", "import lowering"], capture_output=True,
                          text=True, timeout=120,
                          env={**os.environ, "LOWERING_FLAGS": "floatx=float32"})
    assert proc.returncode != 0
    assert "unknown flag 'floatx' in LOWERING_FLAGS; did you mean floatX" in proc.stderr


def test_unknown_mode_and_ir_stage():
    x = T.dvector("x")
    with pytest.raises(ModeError, match="unknown or unavailable mode 'FAST_RUNN'; did you mean "
                                        "'FAST_RUN'"):
        theano.function([x], x * 2, mode="FAST_RUNN")
    f = theano.function([x], x * 2, mode="INTERP")
    with pytest.raises(ValueError, match="unknown IR stage 'tensr'; did you mean 'tensor'"):
        f.ir("tensr")


# ---------------------------------------------------------------------------------------------
# Graph-building errors name the variables and the user's line


def test_dot_of_incompatible_shapes():
    x, w = T.tensor("float64", shape=(3, 4), name="x"), T.tensor("float64", shape=(5, 2), name="w")
    def build(): return T.dot(x, w)  # noqa: E704
    message = raised_at(build)
    assert "tensor.dot: incompatible shapes (3, 4) and (5, 2)" in message
    assert "x: tensor<3x4xf64>" in message and "w: tensor<5x2xf64>" in message


def test_axis_out_of_range():
    m = T.dmatrix("m")
    def build_sum(): return m.sum(axis=2)  # noqa: E704
    message = raised_at(build_sum)
    assert "axis 2" in message and "m: tensor<?x?xf64>" in message
    def build_argmax(): return T.argmax(m, axis=-3)  # noqa: E704
    assert "m: tensor<?x?xf64>" in raised_at(build_argmax)


def test_an_update_of_another_type_names_the_shared_variable_and_the_line():
    w = theano.shared(np.zeros(3, dtype="float32"), name="w")
    g = T.dvector("g")
    def build(): return theano.function([g], None, updates=[(w, w - 0.1 * g)])  # noqa: E704
    message = raised_at(build, TypeError)
    assert "shared variable 'w'" in message and "float32" in message and "f64" in message
    m = T.dmatrix("m")
    v = theano.shared(np.zeros(3), name="v")
    def build_rank(): return theano.function([m], None, updates={v: m * 2})  # noqa: E704
    message = raised_at(build_rank, TypeError)
    assert "shared variable 'v'" in message and "ranks differ" in message
    assert np.array_equal(w.get_value(), np.zeros(3)) and np.array_equal(v.get_value(), np.zeros(3))
    counter = theano.shared(np.int64(0), name="counter")
    def build_default(): counter.default_update = counter + 0.5  # noqa: E704
    assert "shared variable 'counter'" in raised_at(build_default, TypeError)


def test_a_missing_input_names_the_variable_and_the_line_that_uses_it():
    x, forgotten = T.dvector("x"), T.dvector("forgotten")
    def build(): return x * forgotten  # noqa: E704
    product = build()
    with pytest.raises(MissingInputError) as info:
        theano.function([x], product.sum())
    message = str(info.value)
    assert "'forgotten'" in message and f"{HERE}:{build.__code__.co_firstlineno}" in message


# ---------------------------------------------------------------------------------------------
# A failed call changes no shared variable


def _training_step():
    """A step with updates pending when its dot fails: ``w`` and ``count`` get new values before
    the product of ``x`` with the new ``w`` is computed."""
    w = theano.shared(np.array([1.0, 2.0, 3.0]), name="w")
    count = theano.shared(np.int64(0), name="count")
    x, idx = T.dmatrix("x"), T.lvector("idx")
    new_w = w * 0.5 + 1.0
    score = T.dot(x, new_w)  # needs x.shape[1] == 3
    picked = score[idx]  # needs every idx in range
    step = theano.function([x, idx], picked.sum(),
                           updates=[(w, new_w), (count, count + 1)], mode="INTERP")
    return step, w, count


@pytest.mark.parametrize("x, idx, error", [
    (np.ones((2, 4)), np.array([0]), InterpreterError),  # the dot's shapes disagree
    (np.ones((2, 3)), np.array([0, 5]), InterpreterError),  # an index out of range
    (np.ones(3), np.array([0]), InputTypeError),  # the wrong rank, refused before running
])
def test_a_failed_call_changes_no_shared_variable(x, idx, error):
    step, w, count = _training_step()
    first = np.array([[1.0, 0.0, 0.0], [0.0, 0.0, 1.0]])
    assert step(first, np.array([1])) == 2.5  # w becomes [1.5, 2, 2.5]
    before = w.get_value()
    stored = w.get_value(borrow=True)
    with pytest.raises(error):
        step(x, idx)
    np.testing.assert_array_equal(w.get_value(), before)
    np.testing.assert_array_equal(stored, before)  # not changed in place either
    assert count.get_value() == 1
    # The function still works, and commits both updates after a call that succeeds.
    assert step(np.array([[1.0, 0.0, 1.0]]), np.array([0])) == 1.75 + 2.25
    np.testing.assert_array_equal(w.get_value(), [1.75, 2.0, 2.25])
    assert count.get_value() == 2


# ---------------------------------------------------------------------------------------------
# A wrong dtype or rank of a call argument names the input


def test_wrong_rank_and_dtype_name_the_input():
    x, labels = T.dmatrix("x"), T.ivector("labels")
    f = theano.function([x, labels], x.sum() + labels.sum(), name="loss")
    good = (np.ones((2, 2)), np.array([1, 2], dtype="int32"))
    assert f(*good) == 7.0
    with pytest.raises(InputTypeError, match=r"input 'x' \(#0\) of function 'loss' expects a "
                                             r"rank-2 array.*got rank 1"):
        f(np.ones(2), good[1])
    with pytest.raises(InputTypeError, match=r"input 'labels' \(#1\) of function 'loss' expects "
                                             r"int32 data.*got float64"):
        f(good[0], np.array([1.5, 2.0]))
    with pytest.raises(InputTypeError, match=r"input 'labels' \(#1\).*got complex128"):
        f(good[0], labels=np.array([1j, 2]))
    with pytest.raises(InputTypeError, match=r"input 'x' \(#0\)"):
        f(x="not numbers", labels=good[1])


def test_a_broadcastable_dimension_of_another_size_names_the_input():
    r = T.drow("bias")
    f = theano.function([r], r * 2)
    with pytest.raises(InputTypeError, match=r"input 'bias' \(#0\).*size 1 on axis 0"):
        f(np.ones((2, 3)))
