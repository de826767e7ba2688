"""theano.printing.Print, compile.MonitorMode and Function.copy through the public API."""
import numpy as np
import pytest

import lowering as theano
import lowering.tensor as T


# -- printing.Print ----------------------------------------------------------------------------

@pytest.mark.parametrize("mode", ["FAST_RUN", "FAST_COMPILE", "INTERP"])
def test_print_prints_when_the_function_computes(mode, capsys):
    x = T.dvector("x")
    shown = theano.printing.Print("x is", attrs=("__str__", "shape", "sum"))(x)
    f = theano.function([x], (shown * 2).sum(), mode=mode)
    assert capsys.readouterr().out == ""  # building and compiling print nothing
    assert f(np.array([1.0, 2.0])) == 6.0
    assert capsys.readouterr().out == "x is __str__ = [1. 2.]\nx is shape = (2,)\nx is sum = 3.0\n"
    f(np.array([4.0]))
    assert capsys.readouterr().out == "x is __str__ = [4.]\nx is shape = (1,)\nx is sum = 4.0\n"


def test_print_defaults_identity_and_gradient(capsys):
    x = T.dmatrix("x")
    p = theano.printing.Print()(x)
    assert p.type == x.type and p.broadcastable == x.broadcastable
    op = p.owner.op
    assert (op.message, op.attrs) == ("", ("__str__",))
    assert op == theano.printing.Print() and op != theano.printing.Print("other")
    g = theano.function([x], theano.grad((p ** 2).sum(), x))
    np.testing.assert_array_equal(g(np.ones((1, 2))), [[2.0, 2.0]])
    assert capsys.readouterr().out == " __str__ = [[1. 1.]]\n"


def test_print_only_prints_when_its_result_is_used(capsys):
    x = T.dscalar("x")
    theano.printing.Print("unused")(x)
    f = theano.function([x], x + 1)
    assert f(1.0) == 2.0
    assert capsys.readouterr().out == ""


def test_print_with_a_global_fn():
    seen = []
    x = T.dvector("x")
    p = theano.printing.Print("m", global_fn=lambda op, value: seen.append((op.message,
                                                                           value.tolist())))(x)
    theano.function([x], p)(np.array([1.0, 2.0]))
    assert seen == [("m", [1.0, 2.0])]


# -- compile.MonitorMode -----------------------------------------------------------------------

def test_monitor_mode_calls_the_hooks_around_every_node():
    calls = []

    def pre(i, node, fn):
        calls.append(("pre", i, str(node.op), [v[0].tolist() for v in fn.inputs],
                      [o[0] for o in fn.outputs]))

    def post(i, node, fn):
        calls.append(("post", i, str(node.op), [o[0].tolist() for o in fn.outputs]))

    x = T.dscalar("x")
    mode = theano.compile.MonitorMode(pre_func=pre, post_func=post)
    f = theano.function([x], [5 * x], mode=mode)
    assert f(3) == [15.0]
    assert calls == [("pre", 0, "Elemwise{mul,no_inplace}", [5.0, 3.0], [None]),
                     ("post", 0, "Elemwise{mul,no_inplace}", [15.0])]


def test_monitor_mode_node_indices_follow_the_toposort_and_can_find_nans():
    bad = []

    def detect_nan(i, node, fn):
        for output in fn.outputs:
            if np.isnan(output[0]).any():
                bad.append((i, str(node)))

    x = T.dvector("x")
    f = theano.function([x], T.log(x) * T.dot(x, x),
                        mode=theano.compile.MonitorMode(post_func=detect_nan, optimizer="None"))
    nodes = f.maker.fgraph.toposort()
    np.testing.assert_allclose(f(np.array([1.0, 2.0])), np.log([1.0, 2.0]) * 5)
    assert bad == []
    f(np.array([-1.0, 2.0]))
    assert bad and all(str(nodes[i]) == text for i, text in bad)
    assert str(nodes[bad[0][0]].op).startswith("Elemwise{log")


def test_monitor_mode_options():
    mode = theano.compile.MonitorMode(optimizer="fast_compile")
    assert mode.optimizations == ("canonicalize",)
    assert theano.compile.MonitorMode().excluding("fuse").pre_func is None
    with pytest.raises(ValueError, match="unknown optimizer 'fastest'"):
        theano.compile.MonitorMode(optimizer="fastest")
    with pytest.raises(TypeError, match="post_func must be a function"):
        theano.compile.MonitorMode(post_func="print")
    with pytest.raises(ValueError, match="its own linker"):
        theano.compile.MonitorMode(linker="cvm")
    x = T.dvector("x")  # no hooks: it computes as any mode
    f = theano.function([x], T.exp(x).sum(), mode=theano.compile.MonitorMode())
    assert f(np.zeros(3)) == 3.0


# -- Function.copy -----------------------------------------------------------------------------

def test_copy_computes_the_same_and_shares_shared_variables():
    x = T.dscalar("x")
    acc = theano.shared(0.0, name="acc")
    step = theano.function([x], acc * 10 + x, updates={acc: acc + x}, name="step")
    twin = step.copy()
    assert twin is not step and twin.name == "step copy"
    assert twin.maker is not step.maker
    assert step(1.0) == 1.0 and float(acc.get_value()) == 1.0
    assert twin(2.0) == [12.0] and float(acc.get_value()) == 3.0  # the same shared variable
    assert step.copy(share_memory=True, name="other").name == "other"


def test_copy_without_updates():
    x = T.dscalar("x")
    acc = theano.shared(1.0, name="acc")
    step = theano.function([x], acc + x, updates=[(acc, acc * x)])
    frozen = step.copy(delete_updates=True)
    assert frozen(5.0) == [6.0] and float(acc.get_value()) == 1.0
    assert step(5.0) == 6.0 and float(acc.get_value()) == 5.0
    assert frozen(1.0) == [6.0] and float(acc.get_value()) == 5.0


def test_copy_with_swapped_shared_variables():
    x = T.dvector("x")
    w = theano.shared(np.ones(2), name="w")
    w2 = theano.shared(np.full(2, 3.0), name="w2")
    train = theano.function([x], T.dot(w, x), updates={w: w + x})
    other = train.copy(swap={w: w2})
    assert other(np.array([1.0, 1.0])) == [6.0]
    np.testing.assert_array_equal(w2.get_value(), [4.0, 4.0])
    np.testing.assert_array_equal(w.get_value(), [1.0, 1.0])
    assert train(np.array([1.0, 1.0])) == 2.0
    np.testing.assert_array_equal(w.get_value(), [2.0, 2.0])


def test_copy_swap_errors():
    x = T.dvector("x")
    w = theano.shared(np.ones(2), name="w")
    f = theano.function([x], w + x)
    with pytest.raises(ValueError, match="^SharedVariable: unused not found$"):
        f.copy(swap={theano.shared(np.ones(2), name="unused"): w})
    with pytest.raises(TypeError, match="has type tensor<\\?xi64>, not the type"):
        f.copy(swap={w: theano.shared(np.ones(2, dtype="int64"))})
    with pytest.raises(TypeError, match="must be a shared variable"):
        f.copy(swap={w: x})


def test_copy_with_profile_and_of_functions_with_inputs_with_defaults():
    x, y = T.dscalars("xy")
    f = theano.function([x, theano.In(y, value=2.0)], x * y)
    from lowering.compile.profiling import ProfileStats
    stats = ProfileStats(atexit_print=False)
    g = f.copy(profile=stats)
    assert g(3.0) == [6.0] and g.profile is stats and stats.nodes
    assert f.copy()(3.0, 4.0) == [12.0]


def test_print_on_the_simulated_gpu_prints_between_device_steps(capsys):
    from lowering.config import config
    with config.change_flags({"gpuarray.simulate": True}, device="cuda", floatX="float32"):
        x = T.matrix("x")
        f = theano.function([x], T.exp(theano.printing.Print("p")(x)).sum())
        assert f.executor_name == "gpu"
        assert float(np.asarray(f(np.zeros((1, 2), "float32")))) == 2.0
    assert capsys.readouterr().out == "p __str__ = [[0. 0.]]\n"
