"""Ops written in Python (``theano.printing.Print``, ``theano.Op`` subclasses) in compiled CPU
code: the machine code calls the Python code, prints happen when the value is computed, errors
come back as the Python code raised them, and cached code calls the Python code of the process
that loads it."""
import json
import os
import re
import subprocess
import sys
import textwrap
import threading

import numpy as np
import pytest

import lowering as theano
import lowering.tensor as T
from lowering.config import config
from lowering.ifelse import ifelse


class Scale(theano.Op):
    """``factor * x`` and ``x.sum()``: two outputs, with Theano's ``infer_shape``."""

    __props__ = ("factor",)

    def __init__(self, factor):
        self.factor = factor

    def make_node(self, x):
        x = T.as_tensor_variable(x)
        return theano.Apply(self, [x], [x.type(), T.dscalar()])

    def perform(self, node, inputs, output_storage):
        output_storage[0][0] = inputs[0] * self.factor
        output_storage[1][0] = np.asarray(inputs[0].sum(), dtype="float64")

    def infer_shape(self, node, shapes):
        return [shapes[0], ()]


class Failing(theano.Op):
    """Raises ``error`` (an exception object) when it runs; Theano's default ``make_node``
    takes its ``itypes`` and gives its ``otypes``."""

    __props__ = ("error",)
    itypes, otypes = [T.dvector], [T.dvector]

    def __init__(self, error):
        self.error = error

    def perform(self, node, inputs, output_storage):
        raise self.error


class WrongResult(Failing):
    """Gives a result of the wrong dtype or rank (``error`` says which)."""

    def perform(self, node, inputs, output_storage):
        wrong = {"dtype": np.ones(2, dtype="int64"), "rank": np.ones((2, 2))}
        output_storage[0][0] = wrong[self.error]


class Keeper(Failing):
    """Keeps its input array after returning."""

    def perform(self, node, inputs, output_storage):
        self.error.append(inputs[0])
        output_storage[0][0] = inputs[0] + 1


def _loops_ops(f) -> list[str]:
    return re.findall(r"loops\.python_\w+", f.ir("loops"))


def test_print_prints_in_compiled_code_with_its_attrs(capsys):
    x = T.dvector("x")
    shown = theano.printing.Print("x is", attrs=("__str__", "shape", "sum"))(x * 2)
    f = theano.function([x], (shown + 1).sum(), mode="FAST_RUN")
    assert f.executor_name == "cpu"
    assert _loops_ops(f) == ["loops.python_call", "loops.python_results"]
    assert capsys.readouterr().out == ""
    assert f(np.array([1.0, 2.0])) == 8.0
    assert capsys.readouterr().out == "x is __str__ = [2. 4.]\nx is shape = (2,)\nx is sum = 6.0\n"


def test_prints_come_in_program_order_and_global_fn_sees_the_values(capsys):
    seen = []
    x = T.dvector("x")
    first = theano.printing.Print("first", attrs=("shape",))(x)
    second = theano.printing.Print("second", global_fn=lambda op, v: seen.append(v.tolist()))(
        first.sum() * 3)
    third = theano.printing.Print("third", attrs=("__str__",))(second + first)
    f = theano.function([x], third)
    np.testing.assert_array_equal(f(np.array([1.0, 2.0])), [10.0, 11.0])
    assert f.executor_name == "cpu"
    assert capsys.readouterr().out == "first shape = (2,)\nthird __str__ = [10. 11.]\n"
    assert seen == [9.0]


def test_a_python_op_with_two_outputs_and_infer_shape_runs_compiled():
    x = T.fmatrix("x")
    scaled, total = Scale(3.0)(x)
    f = theano.function([x], [scaled * 2, total + 1])
    assert f.executor_name == "cpu"
    a = np.arange(6, dtype="float32").reshape(2, 3)[:, ::2]  # a strided argument
    out, s = f(a)
    np.testing.assert_allclose(out, a * 6)
    assert out.dtype == np.float32 and s == a.sum() + 1


def test_as_op_with_infer_shape_runs_compiled():
    @theano.compile.ops.as_op(itypes=[T.dmatrix, T.dvector], otypes=[T.dvector, T.dscalar],
                              infer_shape=lambda node, shapes: [(shapes[0][0],), ()])
    def product_and_norm(a, v):
        return [a @ v, np.linalg.norm(v)]

    a, v = T.dmatrix("a"), T.dvector("v")
    prod, norm = product_and_norm(a, v)
    f = theano.function([a, v], prod * norm)
    assert f.executor_name == "cpu" and str(product_and_norm) == "FromFunctionOp{product_and_norm}"
    assert product_and_norm.infer_shape(None, [(2, 3), (3,)]) == [(2,), ()]
    np.testing.assert_allclose(f(np.eye(2), np.array([3.0, 4.0])), [15.0, 20.0])
    with pytest.raises(TypeError, match="expected inputs of types"):
        product_and_norm(v, v)
    assert theano.as_op is theano.compile.as_op is theano.compile.ops.as_op


def test_the_exception_the_python_code_raises_reaches_the_caller():
    error = KeyError("from the op")
    x = T.dvector("x")
    f = theano.function([x], Failing(error)(x * 2).sum())
    assert f.executor_name == "cpu"
    with pytest.raises(KeyError) as caught:
        f(np.ones(3))
    assert caught.value is error
    g = theano.function([x], theano.printing.Print("ok")(x) + 1)  # later calls are unaffected
    np.testing.assert_array_equal(g(np.zeros(2)), [1.0, 1.0])


@pytest.mark.parametrize("wrong, problem", [
    ("dtype", "output 0 has dtype int64, its type is tensor<?xf64>"),
    ("rank", "output 0 has shape (2, 2), its type is tensor<?xf64>"),
])
def test_a_wrong_result_is_an_error_naming_the_op_and_line(wrong, problem):
    x = T.dvector("x")
    f = theano.function([x], WrongResult(wrong)(x) * 2)
    assert f.executor_name == "cpu"
    with pytest.raises(ValueError) as caught:
        f(np.ones(2))
    assert re.fullmatch(r"custom op 'WrongResult\{error=\w+\}' " + re.escape(problem)
                        + r" \(at .*test_python_ops_compiled.py:\d+:\d+\)", str(caught.value))


def test_an_op_keeping_its_lent_input_is_told_to_copy_it():
    kept = []
    x = T.dvector("x")
    f = theano.function([x], Keeper(kept)(x * 2))
    with pytest.raises(ValueError, match=r"kept its input\(s\) #0 after returning.*copy"):
        f(np.ones(2))


def test_print_inside_scan_steps_prints_at_every_step(capsys):
    x = T.dvector("x")
    out, _ = theano.scan(lambda a, acc: acc + theano.printing.Print("step")(a),
                         sequences=[x], outputs_info=[T.constant(0.0)])
    f = theano.function([x], out)
    assert f.executor_name == "cpu"
    np.testing.assert_array_equal(f(np.array([1.0, 2.0, 3.0])), [1.0, 3.0, 6.0])
    assert capsys.readouterr().out == "step __str__ = 1.0\nstep __str__ = 2.0\nstep __str__ = 3.0\n"


def test_only_the_branch_ifelse_takes_prints(capsys):
    c, x = T.dscalar("c"), T.dvector("x")
    f = theano.function([c, x], ifelse(T.gt(c, 0), theano.printing.Print("yes")(x).sum(),
                                       theano.printing.Print("no")(x * 2).sum()))
    assert f.executor_name == "cpu"
    assert (f(1.0, np.ones(2)), f(-1.0, np.ones(2))) == (2.0, 4.0)
    assert capsys.readouterr().out == "yes __str__ = [1. 1.]\nno __str__ = [2. 2.]\n"


def test_concurrent_calls_and_a_kept_workspace():
    seen = []
    x = T.dvector("x")
    g = theano.function([x], theano.printing.Print(
        "m", global_fn=lambda op, v: seen.append(float(v.sum())))(x) * 2)
    threads = [threading.Thread(target=lambda i=i: [g(np.full(3, float(i))) for _ in range(5)])
               for i in range(3)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert sorted(seen) == [0.0] * 5 + [3.0] * 5 + [6.0] * 5
    with config.change_flags(allow_gc=False):
        h = theano.function([x], (theano.printing.Print("w", global_fn=lambda op, v: None)(
            x + 1) * 3).sum())
    assert (h(np.ones(2)), h(np.zeros(3))) == (12.0, 9.0)


CACHED = textwrap.dedent("""
    import json
    import numpy as np
    import lowering as theano
    import lowering.tensor as T
    x = T.dvector("x")
    f = theano.function([x], theano.printing.Print("cached", attrs=("sum",))(x * 2) + 1)
    out = f(np.array([1.0, 2.0]))
    print(json.dumps({"from_disk": f._execute.compiled.from_disk, "out": out.tolist()}))
""")


def _printed_and_result(script, cache) -> tuple[str, dict]:
    """What a run of ``script`` in a fresh process printed, and its JSON line."""
    env = dict(os.environ, LOWERING_CACHE_DIR=str(cache))
    for flags in ("LOWERING_FLAGS", "THEANO_FLAGS"):
        env.pop(flags, None)
    done = subprocess.run([sys.executable, str(script)], capture_output=True, text=True,
                          timeout=300, env=env)
    assert done.returncode == 0, done.stderr
    printed, result = done.stdout.splitlines()
    return printed, json.loads(result)


def test_cached_code_calls_the_python_code_of_a_later_process(tmp_path):
    script = tmp_path / "program.py"
    script.write_text(CACHED)
    first, second = (_printed_and_result(script, tmp_path / "cache") for _ in range(2))
    assert (first[1]["from_disk"], second[1]["from_disk"]) == (False, True)
    for printed, result in (first, second):
        assert printed == "cached sum = 6.0" and result["out"] == [3.0, 5.0]
