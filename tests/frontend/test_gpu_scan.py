"""``scan`` on the GPU, on the simulated device and on ``CudaDevice`` over the strict driver
stand-in: the step's ops run as kernels that the host's loop launches, the histories stay in
device memory (no transfer per step; a ``while`` loop copies its one-element condition back),
and the results, gradients included, are the CPU's."""
import re

import numpy as np
import pytest

import lowering as theano
import lowering.tensor as T
from lowering.config import config
from lowering.scan_module import until

from .test_gpu_functions import gpu  # noqa: F401  (the fixture: simulated device and stand-in)


def on_cpu_and_gpu(build, args):
    """``build()`` -> (inputs, outputs) compiled for the CPU and for the GPU in use: both
    results, and the GPU function."""
    with config.change_flags(device="cpu"):
        ins, outs = build()
        expected = theano.function(ins, outs)(*args)
    ins, outs = build()
    f = theano.function(ins, outs)
    return [np.asarray(v) for v in expected], [np.asarray(v) for v in f(*args)], f


def host_loop(text: str) -> str:
    """The body of the host function's first loop over the steps (``loops.for`` or
    ``loops.while``) in the ``gpu`` stage's text."""
    host = text[:text.index("gpu.module")]
    start = re.search(r"loops\.(for %\w+ = %\w+ to %\w+ step %\w+|while %\w+ :.*) \{", host)
    depth, end = 0, start.end()
    for k in range(start.end() - 1, len(host)):
        depth += {"{": 1, "}": -1}.get(host[k], 0)
        if depth == 0:
            end = k
            break
    return host[start.end():end]


def data(steps=6, units=5, seed=0):
    r = np.random.RandomState(seed)
    f32 = np.float32
    return (r.randn(steps, units).astype(f32), r.randn(units).astype(f32),
            (r.randn(units, units) * 0.5).astype(f32))


def test_an_elman_recurrence_and_its_gradient_run_as_kernels_launched_per_step(gpu):
    def build():
        xs, h0, W = T.fmatrix("xs"), T.fvector("h0"), T.fmatrix("W")
        h, _ = theano.scan(lambda x, h, w: T.tanh(T.dot(w, h) + x), sequences=xs,
                           outputs_info=h0, non_sequences=W)
        cost = (h ** 2).sum()
        return [xs, h0, W], [h, cost, *T.grad(cost, [W, h0])]

    expected, got, f = on_cpu_and_gpu(build, data())
    for e, g in zip(expected, got):
        np.testing.assert_allclose(g, e, rtol=2e-5, atol=2e-6)
    loop = host_loop(f.ir("gpu"))
    assert "gpu.launch_func" in loop
    assert "gpu.to_host" not in loop and "gpu.to_device" not in loop


def test_taps_scalar_outputs_and_go_backwards_on_the_gpu(gpu):
    def build():
        xs, h0 = T.fmatrix("xs"), T.fmatrix("h0")
        (h, s), _ = theano.scan(lambda x1, x0, h2, h1: (h1 * 0.5 + h2 * 0.25 + x0 - x1,
                                                        (h1 * x0).sum()),
                                sequences=dict(input=xs, taps=[1, 0]),
                                outputs_info=[dict(initial=h0, taps=[-2, -1]), None],
                                go_backwards=True)
        return [xs, h0], [h, s, h[-1]]

    xs, _, _ = data(steps=7, units=3, seed=1)
    expected, got, _ = on_cpu_and_gpu(build, [xs, np.ones((2, 3), np.float32)])
    for e, g in zip(expected, got):
        np.testing.assert_allclose(g, e, rtol=1e-5, atol=1e-6)


def test_a_while_loop_copies_only_its_condition_to_the_host_each_step(gpu):
    def build():
        xs, h0 = T.fmatrix("xs"), T.fvector("h0")

        def step(x, h):
            following = h + abs(x)
            return following, until(following.sum() > 6)
        h, _ = theano.scan(step, sequences=xs, outputs_info=h0)
        return [xs, h0], [h]

    xs, h0, _ = data(steps=8, units=4, seed=2)
    expected, got, f = on_cpu_and_gpu(build, [xs, np.zeros_like(h0)])
    assert 0 < len(got[0]) < 8
    np.testing.assert_allclose(got[0], expected[0], rtol=1e-5, atol=1e-6)
    transfers = re.findall(r"gpu\.to_(?:host|device) %\w+ context \"\w+\" : (\S+)",
                           host_loop(f.ir("gpu")))
    assert transfers == ["!loops.buffer<i1,"]


@pytest.mark.parametrize("steps", [0, 1])
def test_scans_of_zero_and_one_step_on_the_gpu(gpu, steps):
    def build():
        xs, h0 = T.fmatrix("xs"), T.fvector("h0")
        h, _ = theano.scan(lambda x, h: h * x + 1, sequences=xs, outputs_info=h0)
        return [xs, h0], [h, h.sum()]

    xs, h0, _ = data(steps=steps, units=3)
    expected, got, _ = on_cpu_and_gpu(build, [xs, h0])
    for e, g in zip(expected, got):
        np.testing.assert_allclose(g, e, rtol=1e-6)
