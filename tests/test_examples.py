"""The seeds' CPU programs in examples/ run and compute the right values."""
import importlib.util
import pathlib
import subprocess
import sys

import numpy as np
import pytest

import lowering as theano
from lowering.llvm.vecmath.library import MATH_FUNCTIONS
from lowering.llvm.vecmath.accuracy import reference, ulp_error

EXAMPLES = pathlib.Path(__file__).resolve().parent.parent / "examples"


def load(name: str):
    """Import examples/<name>.py as a module (running its module-level program)."""
    spec = importlib.util.spec_from_file_location(f"example_{name}", EXAMPLES / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def run_script(name: str, *args: str) -> str:
    done = subprocess.run([sys.executable, str(EXAMPLES / f"{name}.py"), *args],
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    return done.stdout


@pytest.mark.parametrize("name", ["exp_check", "logreg", "logreg_shared", "shared_state"])
def test_the_examples_run_as_compiled_cpu_code(name):
    with theano.config.change_flags(floatX=theano.config.floatX):  # some examples set float32
        example = load(name)
    functions = [v for v in vars(example).values() if isinstance(v, theano.Function)]
    assert functions and {f.executor_name for f in functions} == {"cpu"}


# -- seed 003: shared variables -------------------------------------------------------------------


def test_accumulator_and_givens_give_the_seed_values():
    example = load("shared_state")
    assert [float(v) for v in example.main()] == [0.0, 1.0, 11.0, 2.0, 8.0]
    assert example.state.get_value() == 2.0  # givens left the shared value alone


def test_shared_state_script_prints_the_seed_values():
    assert run_script("shared_state").split() == ["0.0", "1.0", "11.0", "2.0", "8.0"]


# -- seed 002: the exp check --------------------------------------------------------------------


def test_exp_check_computes_numpy_exp_on_the_cpu(capsys):
    example = load("exp_check")
    assert example.f.executor_name == "cpu"  # machine code, the default mode
    result = example.main(3)
    # The compiled exp is the vector math library's: within its documented error of the exact
    # values (NumPy's own exp may differ from it by an ulp).
    fmt = {"float32": "f32", "float64": "f64"}[theano.config.floatX]
    x = example.x.get_value()
    assert ulp_error(result, reference("exp", x), fmt).max() <= MATH_FUNCTIONS["exp"].max_ulp[fmt]
    np.testing.assert_allclose(result, np.exp(x), rtol=4 * np.finfo(result.dtype).eps)
    assert result.dtype == np.dtype(theano.config.floatX) and result.shape == (230400,)
    out = capsys.readouterr().out
    assert out.splitlines()[0] == \
        f"[Elemwise{{exp,no_inplace}}(<TensorType({theano.config.floatX}, vector)>)]"
    assert out.splitlines()[-1] == "Used the cpu"


def test_exp_check_script_runs():
    out = run_script("exp_check", "2")
    assert "Looping 2 times took" in out and out.strip().endswith("Used the cpu")


# -- seed 000: memory and variables -------------------------------------------------------------


def test_memory_and_variables_cpu_steps():
    floatx = theano.config.floatX
    seen = load("memory_variables").main()
    assert theano.config.floatX == floatx  # the example's float32 was set for its steps only
    np.testing.assert_array_equal(seen["eval"], np.ones((2, 2)))
    assert seen["eval"].dtype == np.float32
    assert seen["transfer_gpu_graph"] == ("GpuFromHost<None> [id A] ''   \n"
                                          " |<TensorType(float32, matrix)> [id B]\n")
    assert seen["transfer_cpu"] == "<TensorType(float32, matrix)> [id A]\n"
    lines = seen["debugprint_function"].splitlines()
    assert lines[0].endswith("[id A] ''   0") and lines[1] == " |a [id B]"
    np.testing.assert_array_equal(seen["squares"], [[0.0, 1.0], [4.0, 9.0]])
    assert seen["state_repr"] == "<TensorType(int64, scalar)>"
    assert repr(seen["state_initial"]) == "array(0)" and repr(seen["state_set"]) == "array(1)"


def test_memory_and_variables_gpu_transfer_says_the_gpu_is_needed():
    with pytest.raises(ValueError, match="asked to stay on the GPU"):
        load("memory_variables").gpu_transfer()


# -- seed 002: logistic regression --------------------------------------------------------------


@pytest.fixture(scope="module")
def logreg():
    return load("logreg")


def _reference_step(x, y, w, b):
    """One step of the exercise computed with NumPy: predictions, cross-entropy, new w and b."""
    p = 1 / (1 + np.exp(-(x @ w + b)))
    xent = -y * np.log(p) - (1 - y) * np.log(1 - p)
    gw = x.T @ (p - y) / len(y) + 0.02 * w
    gb = np.mean(p - y)
    return p > 0.5, xent, w - 0.01 * gw, b - 0.01 * gb


def test_logreg_uses_the_cpu_matrix_vector_product(logreg):
    assert logreg.used_device(logreg.train) == "Used the cpu"
    assert logreg.train.executor_name == logreg.predict.executor_name == "cpu"
    assert logreg.train.name == "train"


def test_logreg_step_matches_numpy(logreg):
    x, y = logreg.D
    w0 = np.random.RandomState(0).randn(logreg.feats).astype(x.dtype) * 0.01
    logreg.w.set_value(w0)
    logreg.b.set_value(np.asarray(0.1, dtype=x.dtype))
    pred, xent = logreg.train(x, y)
    want_pred, want_xent, want_w, want_b = _reference_step(x, y, w0, 0.1)
    np.testing.assert_array_equal(pred, want_pred)
    np.testing.assert_allclose(xent, want_xent, rtol=1e-10)
    np.testing.assert_allclose(logreg.w.get_value(), want_w, rtol=1e-10)
    np.testing.assert_allclose(logreg.b.get_value(), want_b, rtol=1e-10)


def test_logreg_cost_decreases_until_predictions_match_labels(logreg):
    x, y = logreg.D[0][:40], logreg.D[1][:40]  # small data: 40 samples, 784 features
    logreg.w.set_value(np.random.RandomState(1).randn(logreg.feats) * 0.01)
    logreg.b.set_value(np.asarray(0.0))
    costs = []
    for _ in range(30):
        w_before = logreg.w.get_value()
        pred, xent = logreg.train(x, y)
        costs.append(xent.mean() + 0.01 * (w_before ** 2).sum())
    assert all(later < earlier for earlier, later in zip(costs, costs[1:]))
    np.testing.assert_array_equal(logreg.predict(x), y.astype(bool))


def test_logreg_script_runs_a_few_steps():
    out = run_script("logreg", "2")
    assert out.splitlines()[0] == "Used the cpu"
    assert "target values for D" in out and "prediction on D" in out


def test_logreg_with_shared_data_trains_in_float32():
    with theano.config.change_flags(floatX=theano.config.floatX):  # the example sets float32
        example = load("logreg_shared")
    assert example.used_device(example.train) == "Used the cpu"
    x, y = example.D
    w0 = (np.random.RandomState(2).randn(example.feats) * 0.01).astype("float32")
    example.w.set_value(w0)
    example.b.set_value(np.float32(0))
    pred, xent = example.train()
    assert xent.dtype == np.float32 and example.w.get_value().dtype == np.float32
    want_pred, want_xent, want_w, want_b = _reference_step(x.astype(float), y.astype(float),
                                                           w0.astype(float), 0.0)
    np.testing.assert_array_equal(pred, want_pred)
    np.testing.assert_allclose(xent, want_xent, rtol=1e-4)
    np.testing.assert_allclose(example.w.get_value(), want_w, rtol=1e-4, atol=1e-6)
    np.testing.assert_allclose(example.b.get_value(), want_b, rtol=1e-4)


# -- Theano's tutorial: IfElse vs Switch ----------------------------------------------------------


def test_the_ifelse_tutorial_computes_one_mean_and_the_profile_shows_it():
    import io
    example = load("ifelse_switch")
    assert {example.f_switch.executor_name, example.f_lazyifelse.executor_name} == {"cpu"}
    example.main()  # the tutorial's two timed loops (timings are printed, not checked)
    args = (example.val1, example.val2, example.big_mat1, 2 * example.big_mat2)
    assert float(example.f_switch(*args)) == float(example.f_lazyifelse(*args)) == 1.0
    out = io.StringIO()
    stats = example.profiled(calls=3, stream=out)
    calls = {str(node.apply): node.calls for node in stats.nodes}
    assert calls["Mean{acc_dtype=float64}(x)"] == 3
    assert calls["if{}(Elemwise{lt,no_inplace}.0, Mean{acc_dtype=float64}.0, "
                 "Mean{acc_dtype=float64}.0)"] == 3
    assert calls["Mean{acc_dtype=float64}(y)"] == 0  # the branch not taken never ran
    assert "never ran: 2 Mean{acc_dtype=float64}(y)" in out.getvalue()


def test_the_ifelse_tutorial_script_prints_both_timings_and_the_profile():
    out = run_script("ifelse_switch", "200")
    assert "time spent evaluating both values" in out and "time spent evaluating one value" in out
    assert "if{}" in out and "never ran" in out


# -- an Elman network trained with backpropagation through time (scan) ---------------------------


def test_rnn_bptt_example_learns_the_next_value_of_the_wave():
    with theano.config.change_flags(floatX=theano.config.floatX):
        example = load("rnn_bptt")
    assert example.train.executor_name == "cpu"
    losses = example.main(120, report=0)
    assert losses[-1] < losses[0] / 5
    predicted = example.predict(example.inputs)
    assert predicted.shape == example.targets.shape
