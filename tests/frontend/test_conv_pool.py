"""``T.nnet.conv2d``, ``T.nnet.conv.conv2d`` and ``T.signal.pool.pool_2d`` through the public API:
values against direct-loop references written here (every border mode, strides, dilation,
flipping; every pooling mode, both ``ignore_border``s, padding), compiled and interpreted, on
small random shapes (hypothesis), gradients against finite differences, and the errors for
arguments that do not fit.
"""
import itertools

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import lowering as theano
import lowering.tensor as T
from lowering.frontend.errors import GraphBuildError
from lowering.tensor.signal import pool

from .helpers import float64_by_default, numeric_grad  # noqa: F401 (autouse)

MODES = ["FAST_RUN", "INTERP"]


# ---------------------------------------------------------------------------------------------
# References: one output element at a time, straight from the definitions


def reference_conv2d(x, w, border_mode="valid", subsample=(1, 1), filter_flip=True,
                     filter_dilation=(1, 1)):
    n_batch, channels, rows, cols = x.shape
    n_out, _, krows, kcols = w.shape
    kernel = (krows, kcols)
    if border_mode == "valid":
        pads = (0, 0)
    elif border_mode == "full":
        pads = tuple(filter_dilation[d] * (kernel[d] - 1) for d in range(2))
    elif border_mode == "half":
        pads = tuple(filter_dilation[d] * (kernel[d] // 2) for d in range(2))
    elif isinstance(border_mode, int):
        pads = (border_mode, border_mode)
    else:
        pads = tuple(border_mode)
    if filter_flip:
        w = w[:, :, ::-1, ::-1]
    padded = np.zeros((n_batch, channels, rows + 2 * pads[0], cols + 2 * pads[1]), x.dtype)
    padded[:, :, pads[0]:pads[0] + rows, pads[1]:pads[1] + cols] = x
    span = [filter_dilation[d] * (kernel[d] - 1) + 1 for d in range(2)]
    out_rows = (padded.shape[2] - span[0]) // subsample[0] + 1
    out_cols = (padded.shape[3] - span[1]) // subsample[1] + 1
    out = np.zeros((n_batch, n_out, out_rows, out_cols), np.float64)
    for n, o, i, j in itertools.product(range(n_batch), range(n_out), range(out_rows),
                                        range(out_cols)):
        total = 0.0
        for c, a, b in itertools.product(range(channels), range(krows), range(kcols)):
            total += (padded[n, c, i * subsample[0] + a * filter_dilation[0],
                             j * subsample[1] + b * filter_dilation[1]] * w[o, c, a, b])
        out[n, o, i, j] = total
    return out


def pool_count(size, ws, stride, pad, ignore_border):
    padded = size + 2 * pad
    if ignore_border:
        return (padded - ws) // stride + 1
    if stride >= ws:
        return (padded - 1) // stride + 1
    return max(0, (padded - 1 - ws + stride) // stride) + 1


def reference_pool(x, ws, ignore_border, stride=None, pad=(0, 0), mode="max"):
    stride = stride or ws
    rows, cols = x.shape[-2:]
    counts = [pool_count(s, ws[d], stride[d], pad[d], ignore_border)
              for d, s in enumerate((rows, cols))]
    out = np.zeros(x.shape[:-2] + tuple(counts), np.float64)
    for lead in np.ndindex(*x.shape[:-2]):
        for r0, r1 in itertools.product(range(counts[0]), range(counts[1])):
            elements, size = [], 1
            for d, r in enumerate((r0, r1)):
                start = r * stride[d] - pad[d]  # in input coordinates
                end = min(start + ws[d], x.shape[-2 + d] + pad[d])
                if mode == "average_inc_pad":
                    size *= end - start
                elements.append(range(max(start, 0), min(end, x.shape[-2 + d])))
            window = [x[lead + (i, j)] for i in elements[0] for j in elements[1]]
            if mode == "max":
                out[lead + (r0, r1)] = max(window)
            elif mode == "sum":
                out[lead + (r0, r1)] = sum(window)
            elif mode == "average_inc_pad":
                out[lead + (r0, r1)] = sum(window) / size
            else:
                out[lead + (r0, r1)] = sum(window) / len(window)
    return out


def rng(seed=0):
    return np.random.default_rng(seed)


# ---------------------------------------------------------------------------------------------
# Convolution values


CONV_CASES = [
    dict(border_mode="valid"),
    dict(border_mode="full"),
    dict(border_mode="half"),
    dict(border_mode=1),
    dict(border_mode=(2, 0)),
    dict(border_mode="valid", subsample=(2, 3)),
    dict(border_mode="full", subsample=(2, 2)),
    dict(border_mode="half", filter_dilation=(2, 1)),
    dict(border_mode="valid", filter_dilation=(2, 2), subsample=(1, 2)),
    dict(border_mode=(1, 2), filter_flip=False),
    dict(border_mode="full", filter_flip=False, filter_dilation=(1, 2)),
]


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("case", CONV_CASES, ids=lambda c: "-".join(f"{k}={v}" for k, v in c.items()))
def test_conv2d_matches_the_direct_reference(case, mode):
    x, w = T.tensor4("x"), T.tensor4("w")
    f = theano.function([x, w], T.nnet.conv2d(x, w, **case), mode=mode)
    xv, wv = rng().standard_normal((2, 3, 9, 8)), rng(1).standard_normal((4, 3, 3, 2))
    np.testing.assert_allclose(f(xv, wv), reference_conv2d(xv, wv, **case), rtol=1e-10,
                               atol=1e-12)


def test_compiled_convolutions_of_run_time_sizes_call_blas_on_an_im2col_matrix():
    x, w = T.tensor4("x"), T.tensor4("w")
    f = theano.function([x, w], T.nnet.conv2d(x, w, border_mode="full", subsample=(2, 1)))
    assert "cblas_dgemm" in f.ir("loops")


@pytest.mark.parametrize("case", CONV_CASES, ids=lambda c: "-".join(f"{k}={v}" for k, v in c.items()))
def test_the_direct_loop_nest_matches_the_reference(case, monkeypatch):
    from lowering.passes.bufferize import conv as conv_lowering

    monkeypatch.setattr(conv_lowering, "use_gemm", lambda *args: False)
    x, w = T.tensor4("x"), T.tensor4("w")
    # A graph no other test compiles: the code compiled for it is the direct nest's.
    f = theano.function([x, w], T.nnet.conv2d(x, w, **case) + 0.25)
    assert "cblas" not in f.ir("loops")
    xv, wv = rng().standard_normal((2, 3, 9, 8)), rng(1).standard_normal((4, 3, 3, 2))
    np.testing.assert_allclose(f(xv, wv), reference_conv2d(xv, wv, **case) + 0.25, rtol=1e-10,
                               atol=1e-12)


@pytest.mark.parametrize("mode", MODES)
def test_float32_conv2d_with_static_shapes(mode):
    x = T.TensorType("float32", (False, True, False, False))("x")
    w = T.ftensor4("w")
    out = T.nnet.conv2d(x, w, input_shape=(None, 1, 12, 12), filter_shape=(5, 1, 5, 5))
    f = theano.function([x, w], out, mode=mode)
    xv = rng().standard_normal((3, 1, 12, 12)).astype("float32")
    wv = rng(1).standard_normal((5, 1, 5, 5)).astype("float32")
    got = f(xv, wv)
    assert got.dtype == np.float32
    np.testing.assert_allclose(got, reference_conv2d(xv, wv), rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("mode", MODES)
def test_the_older_conv_module_takes_image_shape_first(mode):
    x, w = T.tensor4("x"), T.tensor4("w")
    out = T.nnet.conv.conv2d(x, w, (2, 3, 9, 8), (4, 3, 3, 2), border_mode="full")
    f = theano.function([x, w], out, mode=mode)
    xv, wv = rng().standard_normal((2, 3, 9, 8)), rng(1).standard_normal((4, 3, 3, 2))
    np.testing.assert_allclose(f(xv, wv), reference_conv2d(xv, wv, "full"), rtol=1e-10)


def test_the_submodules_import_as_theano_programs_write_them():
    import lowering.tensor.nnet.conv as conv_module
    import lowering.tensor.signal.pool as pool_module
    assert conv_module.conv2d is T.nnet.conv.conv2d
    assert pool_module.pool_2d is T.signal.pool.pool_2d is pool.pool_2d


@settings(max_examples=25, deadline=None)
@given(batch=st.integers(1, 2), channels=st.integers(1, 3), outputs=st.integers(1, 3),
       rows=st.integers(1, 7), cols=st.integers(1, 7), krows=st.integers(1, 3),
       kcols=st.integers(1, 3), border=st.sampled_from(["valid", "full", "half", 1, (0, 2)]),
       stride=st.tuples(st.integers(1, 3), st.integers(1, 3)),
       dilation=st.tuples(st.integers(1, 2), st.integers(1, 2)), flip=st.booleans())
def test_conv2d_property(batch, channels, outputs, rows, cols, krows, kcols, border, stride,
                         dilation, flip):
    span = [dilation[0] * (krows - 1) + 1, dilation[1] * (kcols - 1) + 1]
    if border == "valid" and (span[0] > rows or span[1] > cols):
        return
    if border == (0, 2) and (span[0] > rows or span[1] > cols + 4):
        return
    if border == 1 and (span[0] > rows + 2 or span[1] > cols + 2):
        return
    if border == "half" and any(d * (k // 2) * 2 + s < sp for d, k, s, sp in
                                zip(dilation, (krows, kcols), (rows, cols), span)):
        return
    case = dict(border_mode=border, subsample=stride, filter_dilation=dilation, filter_flip=flip)
    x, w = T.tensor4("x"), T.tensor4("w")
    f = theano.function([x, w], T.nnet.conv2d(x, w, **case))
    xv = rng(rows).standard_normal((batch, channels, rows, cols))
    wv = rng(cols).standard_normal((outputs, channels, krows, kcols))
    np.testing.assert_allclose(f(xv, wv), reference_conv2d(xv, wv, **case), rtol=1e-10,
                               atol=1e-12)


# ---------------------------------------------------------------------------------------------
# Pooling values


POOL_CASES = [
    dict(ws=(2, 2), ignore_border=True),
    dict(ws=(2, 2), ignore_border=False),
    dict(ws=(3, 2), ignore_border=False),
    dict(ws=(3, 3), stride=(1, 2), ignore_border=True),
    dict(ws=(3, 3), stride=(2, 1), ignore_border=False),
    dict(ws=(3, 2), stride=(2, 2), pad=(1, 1), ignore_border=True),
    dict(ws=(2, 3), stride=(1, 1), pad=(1, 2), ignore_border=True),
]


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("pool_mode", ["max", "sum", "average_inc_pad", "average_exc_pad"])
@pytest.mark.parametrize("case", POOL_CASES, ids=lambda c: "-".join(f"{k}={v}" for k, v in c.items()))
def test_pool_2d_matches_the_direct_reference(case, pool_mode, mode):
    x = T.tensor4("x")
    f = theano.function([x], pool.pool_2d(x, mode=pool_mode, **case), mode=mode)
    xv = rng().standard_normal((2, 3, 7, 8))
    np.testing.assert_allclose(f(xv), reference_pool(xv, mode=pool_mode, **case), rtol=1e-12)


@pytest.mark.parametrize("mode", MODES)
def test_pool_2d_of_a_matrix_and_of_integers(mode):
    x = T.imatrix("x")
    f = theano.function([x], pool.pool_2d(x, ws=(2, 3), ignore_border=False), mode=mode)
    xv = rng().integers(-100, 100, (5, 7)).astype("int32")
    got = f(xv)
    assert got.dtype == np.int32
    np.testing.assert_array_equal(got, reference_pool(xv, (2, 3), False))


@settings(max_examples=25, deadline=None)
@given(rows=st.integers(1, 7), cols=st.integers(1, 7), ws=st.tuples(st.integers(1, 3),
       st.integers(1, 3)), stride=st.tuples(st.integers(1, 3), st.integers(1, 3)),
       ignore_border=st.booleans(), pool_mode=st.sampled_from(
           ["max", "sum", "average_inc_pad", "average_exc_pad"]), padded=st.booleans())
def test_pool_2d_property(rows, cols, ws, stride, ignore_border, pool_mode, padded):
    pad = (ws[0] - 1, ws[1] - 1) if padded and ignore_border else (0, 0)
    if ignore_border and (ws[0] > rows + 2 * pad[0] or ws[1] > cols + 2 * pad[1]):
        return
    x = T.tensor3("x")
    f = theano.function([x], pool.pool_2d(x, ws=ws, stride=stride, pad=pad, mode=pool_mode,
                                          ignore_border=ignore_border))
    xv = rng(rows * cols).standard_normal((2, rows, cols))
    np.testing.assert_allclose(f(xv), reference_pool(xv, ws, ignore_border, stride, pad,
                                                     pool_mode), rtol=1e-12)


def test_the_deprecated_names_ds_st_padding_still_work():
    x = T.matrix("x")
    with pytest.warns(DeprecationWarning):
        out = pool.pool_2d(x, ds=(2, 2), st=(1, 1), padding=(1, 1), ignore_border=True,
                           mode="sum")
    xv = rng().standard_normal((4, 5))
    np.testing.assert_allclose(theano.function([x], out)(xv),
                               reference_pool(xv, (2, 2), True, (1, 1), (1, 1), "sum"))


def test_a_missing_ignore_border_warns_and_means_false():
    x = T.matrix("x")
    with pytest.warns(UserWarning, match="ignore_border"):
        out = pool.pool_2d(x, ws=(2, 2))
    assert theano.function([x], out)(np.ones((3, 3))).shape == (2, 2)


# ---------------------------------------------------------------------------------------------
# Gradients against finite differences


def check_grads(cost_of, values, mode, rtol=1e-6, atol=1e-8):
    variables = [T.tensor4(f"v{k}") for k in range(len(values))]
    cost = cost_of(*variables)
    grads = theano.function(variables, T.grad(cost, variables), mode=mode)(*values)
    value_of = theano.function(variables, cost, mode="INTERP")
    for k, (got, value) in enumerate(zip(grads, values)):
        def f(data, k=k):
            args = list(values)
            args[k] = data
            return float(value_of(*args))
        np.testing.assert_allclose(got, numeric_grad(f, value), rtol=rtol, atol=atol)


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("case", [
    dict(border_mode="valid"), dict(border_mode="full", subsample=(2, 1)),
    dict(border_mode="half", filter_dilation=(2, 1)), dict(border_mode=(1, 2), filter_flip=False),
    dict(border_mode="valid", subsample=(2, 3), filter_dilation=(1, 2)),
], ids=str)
def test_conv2d_gradients_match_finite_differences(case, mode):
    xv = rng().standard_normal((2, 2, 6, 7))
    wv = rng(1).standard_normal((3, 2, 3, 2))
    weights = rng(2).standard_normal(reference_conv2d(xv, wv, **case).shape)
    check_grads(lambda x, w: (T.nnet.conv2d(x, w, **case) * weights).sum(), [xv, wv], mode)


@pytest.mark.parametrize("case", [
    dict(border_mode="full", subsample=(2, 1)), dict(border_mode=(1, 2), filter_flip=False),
    dict(border_mode="half", subsample=(2, 3), filter_dilation=(1, 2)),
], ids=str)
def test_the_direct_loop_nests_of_the_gradients_match_finite_differences(case, monkeypatch):
    from lowering.passes.bufferize import conv as conv_lowering

    monkeypatch.setattr(conv_lowering, "use_gemm", lambda *args: False)
    xv = rng().standard_normal((2, 2, 6, 7))
    wv = rng(1).standard_normal((3, 2, 3, 2))
    weights = rng(3).standard_normal(reference_conv2d(xv, wv, **case).shape)
    check_grads(lambda x, w: (T.nnet.conv2d(x, w, **case) * weights).sum() * 0.5, [xv, wv],
                "FAST_RUN")


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("pool_mode", ["max", "sum", "average_inc_pad", "average_exc_pad"])
@pytest.mark.parametrize("case", [
    dict(ws=(2, 2), ignore_border=True), dict(ws=(3, 2), ignore_border=False),
    dict(ws=(3, 3), stride=(1, 2), ignore_border=False),
    dict(ws=(3, 2), stride=(2, 1), pad=(1, 1), ignore_border=True),
], ids=str)
def test_pool_2d_gradients_match_finite_differences(case, pool_mode, mode):
    xv = rng().standard_normal((1, 2, 6, 7))  # distinct values: no ties at a maximum
    weights = rng(2).standard_normal(reference_pool(xv, mode=pool_mode, **case).shape)
    check_grads(lambda x: (pool.pool_2d(x, mode=pool_mode, **case) * weights).sum(), [xv], mode)


@pytest.mark.parametrize("mode", MODES)
def test_max_pooling_gives_every_tied_maximum_the_gradient(mode):
    x = T.matrix("x")
    g = T.grad(pool.pool_2d(x, ws=(2, 2), ignore_border=True).sum(), x)
    got = theano.function([x], g, mode=mode)(np.array([[1.0, 1.0], [0.0, 1.0]]))
    np.testing.assert_array_equal(got, [[1.0, 1.0], [0.0, 1.0]])


# ---------------------------------------------------------------------------------------------
# Arguments that do not fit: errors at build time naming the argument and the user's line


def test_channel_mismatch_names_the_shapes_and_the_line():
    x, w = T.tensor4("x"), T.tensor4("w")
    with pytest.raises(GraphBuildError, match=r"test_conv_pool\.py:\d+: .*filter_shape\[1\]"):
        T.nnet.conv2d(x, w, input_shape=(None, 3, 8, 8), filter_shape=(4, 2, 3, 3))


def test_channel_mismatch_of_static_types_is_caught_by_the_op():
    x = T.TensorType("float64", (False, True, False, False))("x")
    w = T.TensorType("float64", (False, False, False, False))("w")
    # With filters typed with 1 channel on both sides the graph builds; 1 vs 2 does not.
    with pytest.raises(GraphBuildError, match=r"filter_shape\[1\].*input_shape\[1\]"):
        T.nnet.conv2d(x, w, filter_shape=(4, 2, 3, 3))


def test_channel_mismatch_at_run_time_names_the_op_and_line():
    x, w = T.tensor4("x"), T.tensor4("w")
    f = theano.function([x, w], T.nnet.conv2d(x, w))
    with pytest.raises(Exception, match=r"tensor.conv2d at .*test_conv_pool\.py.*channels"):
        f(np.zeros((1, 2, 5, 5)), np.zeros((1, 3, 3, 3)))


def test_filters_larger_than_the_input_are_an_error_naming_border_mode():
    x, w = T.tensor4("x"), T.tensor4("w")
    with pytest.raises(GraphBuildError, match=r"test_conv_pool\.py:\d+: .*do not fit.*'valid'"):
        T.nnet.conv2d(x, w, input_shape=(1, 1, 4, 4), filter_shape=(1, 1, 5, 5))
    assert T.nnet.conv2d(x, w, input_shape=(1, 1, 4, 4), filter_shape=(1, 1, 5, 5),
                         border_mode="full").ndim == 4


@pytest.mark.parametrize("args, match", [
    (dict(border_mode="same"), "border_mode"),
    (dict(subsample=(0, 1)), "subsample"),
    (dict(subsample=(1, 2, 3)), "subsample"),
    (dict(filter_dilation=(1, 0)), "filter_dilation"),
    (dict(num_groups=2), "num_groups"),
    (dict(unshared=True), "unshared"),
])
def test_bad_conv2d_arguments_are_named(args, match):
    with pytest.raises(GraphBuildError, match=match):
        T.nnet.conv2d(T.tensor4("x"), T.tensor4("w"), **args)


def test_the_older_conv2d_takes_only_valid_and_full():
    with pytest.raises(GraphBuildError, match="border_mode"):
        T.nnet.conv.conv2d(T.tensor4("x"), T.tensor4("w"), border_mode="half")


def test_a_window_larger_than_the_input_with_ignore_border_names_ws_and_the_line():
    x = T.constant(np.zeros((2, 3, 4, 4)))
    with pytest.raises(GraphBuildError, match=r"test_conv_pool\.py:\d+: .*ws=\(5, 2\)"):
        pool.pool_2d(x, ws=(5, 2), ignore_border=True)
    assert pool.pool_2d(x, ws=(5, 2), ignore_border=False).eval().shape == (2, 3, 1, 2)


def test_a_window_larger_than_the_input_at_run_time_names_the_op():
    x = T.tensor4("x")
    f = theano.function([x], pool.pool_2d(x, ws=(3, 3), ignore_border=True))
    with pytest.raises(Exception, match=r"tensor.pool2d at .*test_conv_pool\.py.*larger"):
        f(np.zeros((1, 1, 2, 5)))


@pytest.mark.parametrize("args, match", [
    (dict(ws=(2, 2), ignore_border=True, mode="mean"), "mode"),
    (dict(ws=(2, 2), ignore_border=False, pad=(1, 1)), "ignore_border"),
    (dict(ws=(2, 2), ignore_border=True, pad=(2, 0)), "pad"),
    (dict(ws=(0, 2), ignore_border=True), "ws"),
    (dict(ws=(2, 2), stride=(2,), ignore_border=True), "stride"),
    (dict(ignore_border=True), "ws"),
])
def test_bad_pool_2d_arguments_are_named(args, match):
    with pytest.raises(GraphBuildError, match=match):
        pool.pool_2d(T.tensor4("x"), **args)


# ---------------------------------------------------------------------------------------------
# The simulated GPU: the loop nests become kernels


def test_conv_pool_and_their_gradients_run_as_simulated_gpu_kernels():
    from lowering.config import config

    with config.change_flags({"gpuarray.simulate": True}, device="cuda", floatX="float32"):
        x, w = T.ftensor4("x"), T.ftensor4("w")
        y = T.nnet.conv2d(x, w, border_mode="half", subsample=(2, 1))
        p = pool.pool_2d(y, ws=(2, 2), ignore_border=False, mode="average_exc_pad")
        gp = T.ftensor4("gp")  # a known output gradient: no reduction kernel in the way
        grads = T.grad(None, [x, w], known_grads={p: gp})
        f = theano.function([x, w, gp], [p, *grads])
        reference = theano.function([x, w, gp], [p, *grads], mode="INTERP")
        # Small: the simulator runs a block's threads as Python threads where a kernel reduces
        # across them (the filter gradient, one block per filter element).
        xv = rng().standard_normal((2, 1, 5, 4)).astype("float32")
        wv = rng(1).standard_normal((1, 1, 2, 2)).astype("float32")
        pooled = reference_pool(reference_conv2d(xv, wv, "half", (2, 1)), (2, 2), False,
                                mode="average_exc_pad")
        gv = rng(2).standard_normal(pooled.shape).astype("float32")
        for got, want in zip(f(xv, wv, gv), reference(xv, wv, gv)):
            np.testing.assert_allclose(np.asarray(got), want, rtol=1e-4, atol=1e-4)
        gpu_ir = f.ir("gpu")
    # conv2d, pool2d, pool2d_grad and both conv gradients, each at least one launch
    assert gpu_ir.count("gpu.launch") >= 5
    np.testing.assert_allclose(reference(xv, wv, gv)[0], pooled, rtol=1e-4, atol=1e-4)
