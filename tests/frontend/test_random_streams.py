"""Theano's random streams through ``import lowering as theano``: ``RandomStreams`` and
``MRG_RandomStreams``, their values on every executor, their distributions (tested with fixed
seeds), their state (seeding, default updates, ``no_default_updates``), the corruption of a
denoising autoencoder fused into one loop, and the errors for bad arguments."""
from __future__ import annotations

import inspect
import math
import os
import re

import numpy as np
import pytest

import lowering as theano
import lowering.tensor as T
from lowering.config import config
from lowering.frontend.build import apply
from lowering.dialects.tensor import RandomOp
from lowering.dialects.tensor.random import draws
from lowering.ir.types import UI32
from lowering.sandbox.rng_mrg import MRG_RandomStreams
from lowering.tensor.shared_randomstreams import RandomStreams

from .helpers import float64_by_default  # noqa: F401

HERE = os.path.basename(__file__)


def line_of(text: str) -> int:
    """The line of this file holding ``text`` (errors must name the user's line)."""
    with open(__file__) as fh:
        for number, line in enumerate(fh, start=1):
            if text in line and "line_of(" not in line:
                return number
    raise AssertionError(f"{text!r} is not in {HERE}")


def ks_statistic(sample: np.ndarray, cdf) -> float:
    """Kolmogorov-Smirnov's D of ``sample`` against the distribution function ``cdf``."""
    x = np.sort(np.asarray(sample, dtype=np.float64))
    n = len(x)
    f = cdf(x)
    return max((np.arange(1, n + 1) / n - f).max(), (f - np.arange(n) / n).max())


def normal_cdf(x):
    return 0.5 * (1 + np.vectorize(math.erf)(x / math.sqrt(2)))


# Kolmogorov's distribution: P(sqrt(n) D > 1.95) is 0.001.
KS_CRITICAL = 1.95


# -- the generator on every executor ------------------------------------------------------------


def raw_bits(n):
    """A function of (key, counter) giving ``n`` raw words: the generator itself."""
    key, counter = T.scalar("key", dtype="uint64"), T.scalar("counter", dtype="uint64")
    bits = apply(RandomOp, key.dimshuffle("x"), counter.dimshuffle("x"), n,
                 distribution="bits", element=UI32)
    return [key, counter], bits


@pytest.mark.parametrize("mode", ["FAST_RUN", "INTERP", "FAST_COMPILE"])
def test_raw_bits_are_the_interpreters_on_each_executor(mode):
    inputs, bits = raw_bits(1000)
    f = theano.function(inputs, bits, mode=mode)
    for key, counter in [(0, 0), (2 ** 64 - 1, 2 ** 32 - 7), (12345, 2 ** 63)]:
        got = f(np.uint64(key), np.uint64(counter))
        assert got.dtype == np.uint32
        np.testing.assert_array_equal(got, draws("bits", UI32, key, counter, (1000,)))


def test_raw_bits_on_the_simulated_gpu_are_the_interpreters():
    with config.change_flags({"gpuarray.simulate": True}, device="cuda", floatX="float32"):
        inputs, bits = raw_bits(300)
        f = theano.function(inputs, bits)
        got = np.asarray(f(np.uint64(77), np.uint64(5)))
    np.testing.assert_array_equal(got, draws("bits", UI32, 77, 5, (300,)))


def draws_of_every_kind(srng, x):
    return [srng.uniform((3, 4)), srng.uniform(size=(5,), low=-2, high=3, dtype="float32"),
            srng.normal((2, 3), 1.0, 2.0), srng.binomial(x.shape, 1, 0.3),
            srng.binomial((6,), 4, 0.5, dtype="float32"), srng.random_integers((7,), -3, 3),
            srng.choice((5,), 4), srng.permutation((2,), 5), srng.multinomial((3,), 5, [0.2, 0.8]),
            x * srng.binomial(x.shape, p=0.8, dtype="float64")]


def test_compiled_values_are_the_interpreters_call_after_call():
    x = T.dmatrix("x")
    data = np.arange(12.0).reshape(3, 4)
    results = {}
    for mode in ("FAST_RUN", "INTERP"):
        srng = RandomStreams(seed=42)
        f = theano.function([x], draws_of_every_kind(srng, x), mode=mode)
        results[mode] = [f(data), f(data)]
    for compiled, interpreted in zip(results["FAST_RUN"], results["INTERP"]):
        for got, want in zip(compiled, interpreted):
            assert got.dtype == want.dtype and got.shape == want.shape
            np.testing.assert_allclose(got, want, rtol=1e-12)   # normal: log and cos round
    assert not np.array_equal(results["FAST_RUN"][0][0], results["FAST_RUN"][1][0])


def test_the_simulated_gpu_draws_the_cpus_values():
    with config.change_flags({"gpuarray.simulate": True}, device="cuda", floatX="float32"):
        x = T.fmatrix("x")
        srng = RandomStreams(seed=3)
        gpu = theano.function([x], [x * srng.binomial(x.shape, p=0.6, dtype="float32"),
                                    srng.uniform((100,)), srng.normal((50,))])
        on_gpu = [np.asarray(v) for v in gpu(np.ones((8, 9), np.float32))]
    with config.change_flags(floatX="float32"):
        x = T.fmatrix("x")
        srng = RandomStreams(seed=3)
        cpu = theano.function([x], [x * srng.binomial(x.shape, p=0.6, dtype="float32"),
                                    srng.uniform((100,)), srng.normal((50,))])
        on_cpu = cpu(np.ones((8, 9), np.float32))
    np.testing.assert_array_equal(on_gpu[0], on_cpu[0])
    np.testing.assert_array_equal(on_gpu[1], on_cpu[1])
    np.testing.assert_allclose(on_gpu[2], on_cpu[2], rtol=1e-5)


# -- distributions ------------------------------------------------------------------------------


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_uniform_passes_a_ks_test(dtype):
    srng = RandomStreams(seed=1)
    sample = theano.function([], srng.uniform((20000,), 2.0, 5.0, dtype=dtype))()
    assert sample.dtype == dtype and sample.min() >= 2.0 and sample.max() < 5.0
    d = ks_statistic(sample, lambda v: (v - 2.0) / 3.0)
    assert math.sqrt(len(sample)) * d < KS_CRITICAL


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_normal_passes_a_ks_test(dtype):
    srng = RandomStreams(seed=2)
    sample = theano.function([], srng.normal((20000,), avg=1.0, std=3.0, dtype=dtype))()
    assert sample.dtype == dtype
    d = ks_statistic((sample - 1.0) / 3.0, normal_cdf)
    assert math.sqrt(len(sample)) * d < KS_CRITICAL


def test_a_ks_test_rejects_a_shifted_sample():
    srng = RandomStreams(seed=2)
    sample = theano.function([], srng.uniform((20000,)))() * 0.98
    assert math.sqrt(len(sample)) * ks_statistic(sample, lambda v: v) > KS_CRITICAL


@pytest.mark.parametrize("n, p", [(1, 0.3), (1, 0.8), (6, 0.25)])
def test_binomial_mean_and_variance(n, p):
    srng = RandomStreams(seed=5)
    sample = theano.function([], srng.binomial((50000,), n, p))()
    assert sample.dtype == np.int64 and set(np.unique(sample)) <= set(range(n + 1))
    mean, var = n * p, n * p * (1 - p)
    assert abs(sample.mean() - mean) < 5 * math.sqrt(var / sample.size)
    assert abs(sample.var() / var - 1) < 0.05


def test_binomial_with_a_float_dtype_is_a_mask_of_that_type():
    srng = RandomStreams(seed=6)
    mask = theano.function([], srng.binomial(size=(1000,), p=0.9, dtype="float32"))()
    assert mask.dtype == np.float32 and set(np.unique(mask)) == {0.0, 1.0}


def test_binomial_takes_p_as_an_array_broadcast_over_the_size():
    srng = RandomStreams(seed=7)
    p = T.dvector("p")
    sample = theano.function([p], srng.binomial((20000, 3), p=p))(np.array([0.0, 0.5, 1.0]))
    np.testing.assert_array_equal(sample[:, 0], 0)
    np.testing.assert_array_equal(sample[:, 2], 1)
    assert abs(sample[:, 1].mean() - 0.5) < 0.02


def test_random_integers_cover_their_closed_range():
    srng = RandomStreams(seed=8)
    sample = theano.function([], srng.random_integers((10000,), -2, 4, dtype="int32"))()
    assert sample.dtype == np.int32
    assert set(np.unique(sample)) == set(range(-2, 5))
    counts = np.bincount(sample + 2)
    assert counts.min() > 0.8 * 10000 / 7


def test_permutations_are_permutations():
    srng = RandomStreams(seed=9)
    perms = theano.function([], srng.permutation((50,), 12))()
    assert perms.shape == (50, 12)
    for row in perms:
        assert sorted(row) == list(range(12))
    assert len({tuple(r) for r in perms}) > 45
    single = theano.function([], srng.permutation(n=7))()
    assert sorted(single) == list(range(7))


def test_multinomial_rows_sum_to_n_and_follow_pvals():
    srng = RandomStreams(seed=10)
    counts = theano.function([], srng.multinomial((4000,), 10, [0.1, 0.3, 0.6]))()
    assert counts.shape == (4000, 3)
    np.testing.assert_array_equal(counts.sum(axis=1), 10)
    np.testing.assert_allclose(counts.mean(axis=0) / 10, [0.1, 0.3, 0.6], atol=0.01)


def test_multinomial_takes_one_distribution_per_row():
    srng = MRG_RandomStreams(seed=11)
    pvals = T.dmatrix("pvals")
    f = theano.function([pvals], srng.multinomial(pvals=pvals, n=3))
    counts = f(np.array([[1.0, 0.0, 0.0], [0.0, 0.0, 1.0], [0.5, 0.5, 0.0]]))
    np.testing.assert_array_equal(counts[:2], [[3, 0, 0], [0, 0, 3]])
    assert counts[2].sum() == 3 and counts[2, 2] == 0


def test_choice_with_and_without_replacement():
    srng = RandomStreams(seed=12)
    values = theano.function([], srng.choice((20000,), [10, 20, 30], p=[0.5, 0.0, 0.5]))()
    assert set(np.unique(values)) == {10, 30} and abs((values == 10).mean() - 0.5) < 0.02
    drawn = theano.function([], srng.choice((6,), 6, replace=False))()
    assert sorted(drawn) == list(range(6))
    few = theano.function([], srng.choice((3,), 10, replace=False))
    for _ in range(5):
        picked = few()
        assert len(set(picked)) == 3 and picked.min() >= 0 and picked.max() < 10


def test_mrg_choice_without_replacement_never_picks_an_impossible_index():
    srng = MRG_RandomStreams(seed=13)
    p = np.array([[0.5, 0.0, 0.25, 0.25], [0.0, 0.9, 0.1, 0.0]])
    picked = theano.function([], srng.choice(size=2, p=p, replace=False))()
    assert picked.shape == (2, 2)
    assert set(picked[0]) <= {0, 2, 3} and len(set(picked[0])) == 2
    assert sorted(picked[1]) == [1, 2]


# -- Theano's signatures --------------------------------------------------------------------------


def test_the_positional_argument_orders_are_theanos():
    names = {"uniform": ["size", "low", "high", "ndim", "dtype"],
             "normal": ["size", "avg", "std", "ndim", "dtype"],
             "binomial": ["size", "n", "p", "ndim", "dtype"],
             "random_integers": ["size", "low", "high", "ndim", "dtype"],
             "choice": ["size", "a", "replace", "p", "ndim", "dtype"],
             "permutation": ["size", "n", "ndim", "dtype"],
             "multinomial": ["size", "n", "pvals", "ndim", "dtype"]}
    for cls in (RandomStreams, MRG_RandomStreams):
        for method, expected in names.items():
            params = list(inspect.signature(getattr(cls, method)).parameters)[1:]
            if cls is MRG_RandomStreams and method in ("random_integers", "permutation"):
                continue
            assert params[:len(expected)] == expected, (cls.__name__, method, params)
    assert inspect.signature(MRG_RandomStreams.uniform).parameters["size"].default \
        is inspect.Parameter.empty


def test_the_modules_are_where_theano_programs_import_them():
    import lowering.sandbox.rng_mrg as rng_mrg
    import lowering.tensor.shared_randomstreams as shared_randomstreams
    assert T.shared_randomstreams.RandomStreams is shared_randomstreams.RandomStreams
    assert theano.sandbox.rng_mrg.MRG_RandomStreams is rng_mrg.MRG_RandomStreams


def test_the_size_may_be_a_symbolic_shape_or_symbolic_scalars():
    srng = RandomStreams(seed=14)
    x = T.dmatrix("x")
    n = T.iscalar("n")
    f = theano.function([x, n], [srng.uniform(x.shape), srng.normal((n, x.shape[1])),
                                 srng.uniform(size=(x.shape[0],), ndim=1)])
    a, b, c = f(np.zeros((3, 5)), 4)
    assert a.shape == (3, 5) and b.shape == (4, 5) and c.shape == (3,)


# -- state: seeds and updates -----------------------------------------------------------------


def test_seed_makes_the_same_values_again():
    srng = RandomStreams(seed=15)
    u, z = srng.uniform((4,)), srng.normal((3,))
    f = theano.function([], [u, z])
    first, second = f(), f()
    srng.seed(15)
    np.testing.assert_array_equal(f()[0], first[0])
    np.testing.assert_array_equal(f()[1], second[1])
    srng.seed(16)
    assert not np.array_equal(f()[0], first[0])
    other = RandomStreams(seed=15)
    np.testing.assert_array_equal(theano.function([], other.uniform((4,)))(), first[0])


def test_one_variable_is_seeded_and_restored_through_its_rng_value_as_in_the_tutorial():
    from lowering.tensor.shared_randomstreams import RandomStateSharedVariable
    srng = RandomStreams(seed=234)
    u = srng.uniform((2, 2))
    f = theano.function([], u)
    assert isinstance(u.rng, RandomStateSharedVariable)
    rng_val = u.rng.get_value(borrow=True)
    rng_val.seed(89234)                          # in place: the stored state itself
    u.rng.set_value(rng_val, borrow=True)
    seeded = f()
    np.testing.assert_array_equal(RandomStreams(seed=0)[u], [89234, 4])
    saved = u.rng.get_value().get_state()
    v1 = f()
    rng = u.rng.get_value(borrow=True)
    rng.set_state(saved)
    u.rng.set_value(rng, borrow=True)
    np.testing.assert_array_equal(f(), v1)      # back where it was before v1
    assert not np.array_equal(v1, seeded)
    # The same seed gives a variable the same draws, whichever stream made it.
    w = RandomStreams(seed=5).uniform((2, 2))
    w.rng.get_value(borrow=True).seed(89234)
    np.testing.assert_array_equal(theano.function([], w)(), seeded)
    with pytest.raises(ValueError, match="set_state needs a state of this generator"):
        rng.set_state(np.zeros(3))
    with pytest.raises(ValueError, match=r"a seed must be an integer in \[0, 2\*\*64\)"):
        rng.seed(-1)


def test_each_variable_has_its_own_shared_state_advanced_by_its_draws():
    srng = RandomStreams(seed=17)
    u = srng.uniform((2, 3))
    v = srng.uniform((2, 3))
    assert isinstance(u.rng, theano.SharedVariable) and u.rng is not v.rng
    assert u.rng.default_update is u.update[1]
    key, counter = u.rng.get_value()
    f = theano.function([], u)
    f()
    f()
    assert list(u.rng.get_value()) == [key, counter + 12]
    assert v.rng.get_value()[1] == 0       # another variable's state is untouched
    assert srng.updates() == srng.state_updates and len(srng.updates()) == 2


def test_no_default_updates_keeps_the_state_and_repeats_the_values():
    srng = RandomStreams(seed=18)
    u = srng.uniform((5,))
    frozen = theano.function([], u, no_default_updates=True)
    before = u.rng.get_value().copy()
    np.testing.assert_array_equal(frozen(), frozen())
    np.testing.assert_array_equal(u.rng.get_value(), before)
    moving = theano.function([], u)
    assert not np.array_equal(moving(), moving())


def test_explicit_updates_from_updates_list_replace_the_default_ones():
    srng = RandomStreams(seed=19)
    u = srng.uniform((3,))
    f = theano.function([], u, updates=srng.updates(), no_default_updates=True)
    assert not np.array_equal(f(), f())


def test_the_state_update_is_in_place_in_the_compiled_code():
    srng = RandomStreams(seed=20)
    f = theano.function([], srng.uniform((8,)))
    assert "lowering.updated_in_place" in f.ir("loops")


# -- fusion ---------------------------------------------------------------------------------------


def test_a_dropout_mask_is_one_loop_with_no_mask_in_memory():
    srng = RandomStreams(seed=21)
    x = T.fmatrix("x")
    f = theano.function([x], x * srng.binomial(size=x.shape, p=0.8, dtype="float32"))
    loops_ir = f.ir("loops")
    allocations = re.findall(r"loops\.alloc\([^)]*\) : !loops\.buffer<\?x\?x\w+>", loops_ir)
    assert len(allocations) == 1                        # the result, and no mask
    assert loops_ir.count("loops.parallel") == 1 and "scalar.xor" in loops_ir
    optimized = f.ir("optimized")
    assert "tensor.random" not in optimized and "scalar.linear_index" in optimized
    data = np.full((30, 40), 2.0, np.float32)
    out = f(data)
    assert set(np.unique(out)) <= {0.0, 2.0} and abs((out == 2).mean() - 0.8) < 0.05


def test_fused_draws_equal_the_unfused_ones():
    srng = RandomStreams(seed=22)
    x = T.dmatrix("x")
    y = T.exp(x) * srng.normal(x.shape) + srng.uniform(x.shape)
    data = np.random.default_rng(0).normal(size=(7, 9))
    fused = theano.function([x], y)
    plain = theano.function([x], y, mode="FAST_COMPILE")
    srng.seed(22)
    a = fused(data)
    srng.seed(22)
    np.testing.assert_allclose(a, plain(data), rtol=1e-12)
    assert "tensor.fused" in fused.ir("optimized")


def test_a_sum_of_draws_fuses_into_the_reduction():
    srng = RandomStreams(seed=23)
    x = T.dmatrix("x")
    total = (x * srng.uniform(x.shape)).sum(axis=0)
    f = theano.function([x], total)
    g = theano.function([x], total, mode="INTERP")
    srng.seed(23)
    a = f(np.ones((40, 3)))
    srng.seed(23)
    np.testing.assert_allclose(a, g(np.ones((40, 3))), rtol=1e-12)
    optimized = f.ir("optimized")
    assert "tensor.random" not in optimized and 'kind = "sum"' in optimized


# -- a denoising autoencoder's corruption --------------------------------------------------------


def test_a_denoising_autoencoder_trains_with_corrupted_input_in_fast_run():
    floatX = config.floatX
    numpy_rng = np.random.RandomState(123)
    theano_rng = RandomStreams(numpy_rng.randint(2 ** 30))
    n_visible, n_hidden = 20, 8
    W = theano.shared(np.asarray(numpy_rng.uniform(-0.3, 0.3, (n_visible, n_hidden)), floatX),
                      name="W")
    b = theano.shared(np.zeros(n_hidden, floatX), name="b")
    b_prime = theano.shared(np.zeros(n_visible, floatX), name="b_prime")
    x = T.matrix("x")

    def get_corrupted_input(input, corruption_level):
        return theano_rng.binomial(size=input.shape, n=1, p=1 - corruption_level,
                                   dtype=theano.config.floatX) * input

    tilde_x = get_corrupted_input(x, 0.3)
    y = T.nnet.sigmoid(T.dot(tilde_x, W) + b)
    z = T.nnet.sigmoid(T.dot(y, W.T) + b_prime)
    cost = T.mean(-T.sum(x * T.log(z) + (1 - x) * T.log(1 - z), axis=1))
    params = [W, b, b_prime]
    updates = [(p, p - 0.1 * g) for p, g in zip(params, T.grad(cost, params))]
    train = theano.function([x], cost, updates=updates, mode="FAST_RUN")
    corrupt = theano.function([x], tilde_x)
    data = (numpy_rng.uniform(size=(50, n_visible)) > 0.5).astype(floatX)
    costs = [float(train(data)) for _ in range(60)]
    assert costs[-1] < costs[0]
    kept = corrupt(np.ones((200, n_visible), floatX))
    assert abs(kept.mean() - 0.7) < 0.03


# -- bad input ----------------------------------------------------------------------------------


def test_a_negative_size_is_an_error_naming_size_and_the_line():
    srng = RandomStreams(seed=24)
    with pytest.raises(ValueError, match=rf"{HERE}:{line_of('srng.uniform((3, -2))')}: "
                                         r"random: size has a negative dimension \(-2"):
        srng.uniform((3, -2))
    assert srng.updates() == []


@pytest.mark.parametrize("p", [1.5, -0.1, [0.2, 1.2]])
def test_p_outside_zero_one_is_an_error_naming_p_and_the_line(p):
    srng = RandomStreams(seed=25)
    with pytest.raises(ValueError, match=rf"{HERE}:{line_of('srng.binomial((4,), 1, p)')}: "
                                         r"random: p must be in \[0, 1\]"):
        srng.binomial((4,), 1, p)


def test_other_bad_arguments_name_themselves():
    srng = MRG_RandomStreams(seed=26)
    with pytest.raises(ValueError, match="random: pvals must be in"):
        srng.multinomial(pvals=[[0.5, 1.5]])
    with pytest.raises(ValueError, match="random: std must be in >= 0"):
        srng.normal((3,), 0.0, -1.0)
    with pytest.raises(ValueError, match=r"random: ndim=3 differs from the 2 dimensions of size"):
        srng.uniform((2, 2), ndim=3)
    with pytest.raises(ValueError, match="random: random_integers needs low <= high"):
        RandomStreams(1).random_integers((2,), 5, 1)
    with pytest.raises(ValueError, match="seed should not be 0"):
        MRG_RandomStreams(0)


def test_a_negative_symbolic_size_fails_the_call_naming_the_line_and_keeps_the_state():
    srng = RandomStreams(seed=27)
    n = T.lscalar("n")
    u = srng.uniform((n, 2))
    for mode in ("FAST_RUN", "INTERP"):
        f = theano.function([n], u, mode=mode)
        before = u.rng.get_value().copy()
        with pytest.raises(ValueError, match=rf"tensor.random.*{HERE}:"
                                             rf"{line_of('u = srng.uniform((n, 2))')}.*negative"):
            f(-3)
        np.testing.assert_array_equal(u.rng.get_value(), before)
        assert f(2).shape == (2, 2)


def test_an_rbm_samples_hidden_units_with_mrg_streams_given_their_means():
    theano_rng = MRG_RandomStreams(seed=1234)
    mean = T.matrix("mean")
    sample = theano_rng.binomial(size=mean.shape, n=1, p=mean, dtype=theano.config.floatX)
    f = theano.function([mean], sample)
    probabilities = np.tile(np.linspace(0.0, 1.0, 6), (4000, 1))
    drawn = f(probabilities)
    assert drawn.dtype == theano.config.floatX and drawn.shape == probabilities.shape
    np.testing.assert_allclose(drawn.mean(axis=0), np.linspace(0.0, 1.0, 6), atol=0.03)
    assert "tensor.random" not in f.ir("optimized")      # fused with the comparison


def test_mrg_uniform_and_normal_take_size_first_and_ignore_nstreams():
    srng = MRG_RandomStreams()
    u = srng.uniform((3, 2), 1.0, 2.0, nstreams=12)
    z = srng.normal((1000,), 0.0, 1.0, None, "float32", 30)
    a, b = theano.function([], [u, z])()
    assert a.shape == (3, 2) and (1 <= a).all() and (a < 2).all()
    assert b.dtype == np.float32 and abs(b.mean()) < 0.1


@pytest.mark.parametrize("make", ["truncated_normal", "normal_truncate"])
def test_mrg_truncated_normal_stays_within_two_standard_deviations(make):
    srng = MRG_RandomStreams(seed=28)
    if make == "truncated_normal":
        z = srng.truncated_normal((40000,), avg=1.0, std=3.0)
        bound = 2 * 3.0 / 0.87962566103423978
    else:
        z = srng.normal((40000,), 1.0, 3.0, truncate=True)
        bound = 2 * 3.0
    sample = theano.function([], z)()
    assert np.abs(sample - 1.0).max() <= bound
    assert abs(sample.mean() - 1.0) < 0.05
    if make == "truncated_normal":
        assert abs(sample.std() / 3.0 - 1) < 0.05
    else:
        assert abs(sample.std() / 3.0 - 0.8909) < 0.02   # Theano's refilled truncation


def test_shuffle_row_elements_permutes_each_row_on_its_own():
    srng = RandomStreams(seed=29)
    x = T.dmatrix("x")
    shuffled = srng.shuffle_row_elements(x)
    f = theano.function([x], shuffled)
    data = np.arange(60.0).reshape(6, 10)
    out = f(data)
    for row, original in zip(out, data):
        assert sorted(row) == sorted(original)
    assert not np.array_equal(out, data) and len({tuple(np.argsort(r)) for r in out}) == 6
    assert isinstance(shuffled.rng, theano.SharedVariable)
    with pytest.raises(ValueError, match="shuffle_row_elements needs an array of rank 1"):
        srng.shuffle_row_elements(T.dscalar())


@pytest.mark.parametrize("mode", ["FAST_RUN", "INTERP"])
def test_a_symbolic_p_outside_zero_one_fails_the_call_and_keeps_the_state(mode):
    srng = RandomStreams(seed=30)
    x = T.dmatrix("x")
    p = T.dscalar("p")
    mask = srng.binomial(size=x.shape, p=p, dtype="float64")
    f = theano.function([x, p], x * mask, mode=mode)
    before = mask.rng.get_value().copy()
    with pytest.raises(ValueError, match=rf"tensor.check at .*{HERE}:"
                                         rf"{line_of('mask = srng.binomial(size=x.shape, p=p')}"
                                         r":\d+: random: p must be in \[0, 1\]"):
        f(np.ones((2, 3)), 1.5)
    np.testing.assert_array_equal(mask.rng.get_value(), before)
    assert set(np.unique(f(np.ones((2, 3)), 1.0))) == {1.0}
    assert mask.rng.get_value()[1] == before[1] + 6


def test_a_checked_p_still_fuses_with_the_mask():
    srng = MRG_RandomStreams(seed=31)
    mean = T.dmatrix("mean")
    f = theano.function([mean], srng.binomial(size=mean.shape, p=mean, dtype="float64"))
    optimized = f.ir("optimized")
    assert "tensor.check" in optimized and "tensor.random" not in optimized
    with pytest.raises(ValueError, match=r"random: p must be in \[0, 1\]"):
        f(np.array([[0.5, -0.25]]))
    with pytest.raises(ValueError, match=r"random: pvals must be in \[0, 1\]"):
        theano.function([mean], srng.multinomial(pvals=mean))(np.array([[2.0, -1.0]]))
