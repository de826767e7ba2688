"""Theano's random streams (``RandomStreams`` and ``MRG_RandomStreams``) on one counter-based
generator.

Each call (``uniform``, ``normal``, ...) gets a state of its own: a shared ``uint64`` vector
``[key, counter]`` with a ``default_update`` that advances the counter by the number of draws the
call makes, so every function reading the variable moves the stream on (unless built with
``no_default_updates``). The values are ``tensor.random`` ops, each element a pure function of
(key, counter, position), that fuse with the elementwise code using them; the distributions
Theano offers are built from uniform and normal draws with elementwise ops and reductions.

>>> import lowering as theano
>>> srng = RandomStreams(seed=234)
>>> u = srng.uniform((2, 2))
>>> f = theano.function([], u)
>>> a, b = f(), f()
>>> bool((a != b).all()), bool(((0 <= a) & (a < 1)).all())
(True, True)
>>> srng.seed(234)
>>> bool((f() == a).all())
True
"""
from __future__ import annotations

import numpy as np

from lowering.config import config
from lowering.dialects.tensor import CheckOp, RandomOp
from lowering.ir.location import caller_location
from lowering.ir.types import scalar_type_of

from .build import apply
from .constructors import as_tensor_variable, constant
from .elemwise import abs_, cast, cos, eq, floor, ge, gt, log, lt, sqrt, switch
from .errors import GraphBuildError, GraphTypeError
from .indexing import inc_subtensor
from .reductions import prod
from .shapes import _sizes, arange, dimshuffle
from .random_state import fresh_state, initial_state
from .variable import TensorVariable


# ---------------------------------------------------------------------------------------------
# Arguments


def _float_dtype(*params) -> str:
    """The float dtype draws for ``params`` are made in: floatX, or wider if a variable is."""
    dtypes = [config.floatX] + [p.dtype for p in params if isinstance(p, TensorVariable)]
    dtype = str(np.result_type(*dtypes))
    return dtype if dtype in ("float32", "float64") else "float64"


def _static_values(param):
    """The values of a parameter known while building (a number, a constant), or None."""
    if isinstance(param, TensorVariable):
        data = getattr(param, "data", None)
        return None if data is None else np.asarray(data)
    if isinstance(param, (list, tuple)) and any(isinstance(p, TensorVariable) for p in param):
        return None
    return np.asarray(param)


def check_range(name: str, param, low=None, high=None):
    """``param``, checked to lie in ``[low, high]``: a known value outside is an error at build
    time naming ``name`` and the user's line; a symbolic one is checked when the function runs
    (``tensor.check``), before any state is updated.

    >>> check_range("p", 0.5, 0, 1)
    0.5
    """
    bounds = f"[{low}, {high}]" if high is not None else f">= {low}"
    message = f"random: {name} must be in {bounds}"
    values = _static_values(param)
    if values is None:
        param = as_tensor_variable(param)
        inside = (param >= low) if high is None else (param >= low) & (param <= high)
        ok = eq(cast(~inside, "int64").sum(), 0)
        return apply(CheckOp, param, ok, message, named=[param])
    if values.dtype.kind not in "iuf":
        return param
    if (low is not None and (values < low).any()) or (high is not None and (values > high).any()):
        raise GraphBuildError(f"{message}, got {values.tolist()}", caller_location())
    return param


def _size_list(size, ndim, params) -> list:
    """The sizes of a draw: ``size`` as given (ints, integer scalars or a shape vector), or the
    shape of the parameter of highest rank when ``size`` is None."""
    if size is None:
        tensors = [as_tensor_variable(p) for p in params if p is not None]
        widest = max(tensors, key=lambda t: t.ndim, default=None)
        sizes = [] if widest is None or widest.ndim == 0 else _sizes(widest.shape)
    else:
        if isinstance(size, (list, tuple)):
            for d, s in enumerate(size):
                if isinstance(s, (int, np.integer)) and not isinstance(s, bool) and s < 0:
                    raise GraphBuildError(f"random: size has a negative dimension ({s} in "
                                          f"dimension {d} of {tuple(size)})", caller_location())
        try:
            sizes = _sizes(size)
        except GraphBuildError as exc:
            raise GraphBuildError(f"random: size: {exc.message.split(': ', 1)[-1]}",
                                  caller_location()) from None
    if ndim is not None and ndim != len(sizes):
        raise GraphBuildError(f"random: ndim={ndim} differs from the {len(sizes)} dimensions of "
                              f"size", caller_location())
    return sizes


# ---------------------------------------------------------------------------------------------
# The streams


class RandomStreams:
    """Theano's ``theano.tensor.shared_randomstreams.RandomStreams``: a factory of random
    variables, each with its own state (``variable.rng``, a shared variable updated by default).

    ``seed`` seeds the generator that gives each new variable its key; ``seed(s)`` re-seeds
    every variable made so far, as Theano does.
    """

    def __init__(self, seed=None):
        self.state_updates = []  # (state, its update) of every variable made
        self.default_instance_seed = seed
        self.gen_seedgen = np.random.RandomState(seed)

    def updates(self) -> list:
        """The ``(state, new state)`` pairs of every variable made (for ``updates=``)."""
        return list(self.state_updates)

    def seed(self, seed=None) -> None:
        """Re-seed every variable made so far (with the instance's seed by default)."""
        if seed is None:
            seed = self.default_instance_seed
        seedgen = np.random.RandomState(seed)
        for state, _ in self.state_updates:
            state.set_value(initial_state(seedgen.randint(2 ** 30)), borrow=True)

    def __getitem__(self, item):
        """The state value of the variable ``item`` was drawn with (or the state itself)."""
        state = getattr(item, "rng", item)
        return state.get_value(borrow=True)

    def __setitem__(self, item, value):
        getattr(item, "rng", item).set_value(np.asarray(value, dtype=np.uint64), borrow=True)

    # -- the one primitive: draws over a shape, with a fresh state --------------------------

    def _draw(self, distribution: str, dtype: str, sizes) -> TensorVariable:
        """``tensor.random`` draws of ``sizes`` from a new state registered with its update."""
        state = fresh_state(self.gen_seedgen.randint(2 ** 30))
        pattern = ["x"] * len(sizes)
        key, counter = dimshuffle(state[0], pattern), dimshuffle(state[1], pattern)
        values = apply(RandomOp, key, counter, *sizes, distribution=distribution,
                       element=scalar_type_of(np.dtype(dtype)), named=list(sizes))
        count = prod(as_tensor_variable(list(sizes) or [constant(1, dtype="int64")]))
        new_state = inc_subtensor(state[1], cast(count, "uint64"))
        state.default_update = new_state
        values.rng = state
        values.update = (state, new_state)
        self.state_updates.append((state, new_state))
        return values

    def _finish(self, out, rng) -> TensorVariable:
        out.rng, out.update = rng.rng, rng.update
        return out

    # -- Theano's distributions ---------------------------------------------------------------

    def uniform(self, size=None, low=0.0, high=1.0, ndim=None, dtype=None):
        """Uniform on ``[low, high)``."""
        dtype = dtype or _float_dtype(low, high)
        sizes = _size_list(size, ndim, [low, high])
        u = self._draw("uniform", _float_dtype(low, high, constant(0, dtype=dtype)), sizes)
        return self._finish(cast(low + (high - low) * u, dtype), u)

    def normal(self, size=None, avg=0.0, std=1.0, ndim=None, dtype=None):
        """Normal with mean ``avg`` and standard deviation ``std``."""
        dtype = dtype or _float_dtype(avg, std)
        std = check_range("std", std, 0)
        sizes = _size_list(size, ndim, [avg, std])
        z = self._draw("normal", _float_dtype(avg, std, constant(0, dtype=dtype)), sizes)
        return self._finish(cast(avg + std * z, dtype), z)

    def binomial(self, size=None, n=1, p=0.5, ndim=None, dtype="int64", prob=None):
        """Binomial counts of ``n`` trials of probability ``p`` (``dtype`` may be a float type,
        as ``dtype=floatX`` masks are)."""
        p = check_range("p", prob if prob is not None else p, 0, 1)
        if not isinstance(n, (int, np.integer)):
            raise GraphTypeError(f"random: binomial's n must be an int, got {n!r}",
                                 caller_location())
        check_range("n", n, 0)
        sizes = _size_list(size, ndim, [p])
        u = self._draw("uniform", _float_dtype(p), sizes + ([int(n)] if n != 1 else []))
        hits = lt(u, dimshuffle(as_tensor_variable(p), _trailing(p, len(sizes), n != 1)))
        counts = hits.sum(axis=-1) if n != 1 else hits
        return self._finish(cast(counts, dtype), u)

    def random_integers(self, size=None, low=0, high=1, ndim=None, dtype="int64"):
        """Integers uniform on ``[low, high]`` (both ends included)."""
        low_v, high_v = _static_values(low), _static_values(high)
        if low_v is not None and high_v is not None and (low_v > high_v).any():
            raise GraphBuildError(f"random: random_integers needs low <= high, got low={low} "
                                  f"and high={high}", caller_location())
        sizes = _size_list(size, ndim, [low, high])
        u = self._draw("uniform", "float64", sizes)
        span = cast(high, "float64") - cast(low, "float64") + 1
        return self._finish(cast(low + floor(u * span), dtype), u)

    def choice(self, size=None, a=2, replace=True, p=None, ndim=None, dtype="int64"):
        """Draws from ``a`` (an int: ``range(a)``; or a vector), with probabilities ``p``."""
        if p is not None:
            p = check_range("p", p, 0, 1)
        count = a if isinstance(a, (int, np.integer)) else as_tensor_variable(a).shape[0]
        sizes = _size_list(size, ndim, [])
        if replace:
            u = self._draw("uniform", "float64", sizes)
            index = (_categorical(u, p) if p is not None
                     else floor(u * cast(count, "float64")))
        else:
            if len(sizes) != 1:
                raise GraphBuildError("random: choice without replacement takes a size of one "
                                      "dimension", caller_location())
            u = self._draw("uniform", "float64", [_int_size(count)])
            keys = u if p is None else -log(u) / as_tensor_variable(p)
            index = _smallest(keys, sizes[0])
        index = cast(index, "int64")
        out = index if isinstance(a, (int, np.integer)) else as_tensor_variable(a)[index]
        return self._finish(cast(out, dtype), u)

    def permutation(self, size=None, n=1, ndim=None, dtype="int64"):
        """Permutations of ``range(n)``, one per element of ``size``: shape ``size + (n,)``."""
        if not isinstance(n, TensorVariable):  # a symbolic n is a size: checked as one
            check_range("n", n, 0)
        sizes = _size_list(size, ndim, [])
        u = self._draw("uniform", "float64", sizes + [_int_size(n)])
        return self._finish(cast(_ranks(u), dtype), u)

    def shuffle_row_elements(self, input):
        """``input`` with the elements of each row (its last axis) in a random order, a new
        permutation per row."""
        input = as_tensor_variable(input)
        if input.ndim == 0:
            raise GraphBuildError("random: shuffle_row_elements needs an array of rank 1 or "
                                  "more, got a scalar", caller_location())
        rows = [input.shape[d] for d in range(input.ndim - 1)]
        perm = self.permutation(rows, input.shape[-1], ndim=input.ndim - 1)
        last = input.ndim - 1
        picked = eq(dimshuffle(perm, list(range(input.ndim)) + ["x"]), arange(input.shape[-1]))
        row = dimshuffle(input, list(range(last)) + ["x", last])   # [..., i, k] = input[..., k]
        return self._finish(switch(picked, row, 0).sum(axis=-1).astype(input.dtype), perm)

    def multinomial(self, size=None, n=1, pvals=(0.5, 0.5), ndim=None, dtype="int64"):
        """Counts of ``n`` draws among ``len(pvals)`` outcomes, shape ``size + (len(pvals),)``
        (``pvals`` a vector, or a matrix of one distribution per row)."""
        check_range("n", n, 0)
        pvals = as_tensor_variable(check_range("pvals", pvals, 0, 1))
        if size is None:
            sizes = [] if pvals.ndim == 1 else _sizes(pvals.shape)[:-1]
        else:
            sizes = _size_list(size, ndim, [])
        u = self._draw("uniform", _float_dtype(pvals), sizes + [_int_size(n)])
        outcomes = _categorical(u, dimshuffle(pvals, _per_draw(pvals, len(sizes))))
        k = arange(pvals.shape[-1])
        counts = eq(dimshuffle(outcomes, list(range(outcomes.ndim)) + ["x"]), k).sum(axis=-2)
        return self._finish(cast(counts, dtype), u)


class MRG_RandomStreams(RandomStreams):
    """Theano's ``theano.sandbox.rng_mrg.MRG_RandomStreams`` API on the same generator: the
    same methods with its signatures (``size`` first and required for ``uniform`` and
    ``normal``; ``nstreams`` accepted and unused: every element is its own stream)."""

    def __init__(self, seed=12345):
        if isinstance(seed, (int, np.integer)) and seed == 0:
            raise ValueError("seed should not be 0")
        super().__init__(seed)

    def uniform(self, size, low=0.0, high=1.0, ndim=None, dtype=None, nstreams=None):
        return super().uniform(size, low, high, ndim, dtype)

    def normal(self, size, avg=0.0, std=1.0, ndim=None, dtype=None, nstreams=None,
               truncate=False):
        """Normal draws; with ``truncate``, within two standard deviations of ``avg`` (as
        Theano: a draw beyond them keeps its Box-Muller angle and takes a radius below 2)."""
        if not truncate:
            return super().normal(size, avg, std, ndim, dtype)
        dtype = dtype or _float_dtype(avg, std)
        std = check_range("std", std, 0)
        sizes = _size_list(size, ndim, [avg, std])
        u = self._draw("uniform", _float_dtype(avg, std, constant(0, dtype=dtype)), sizes + [3])
        u1, u2, u3 = (u[tuple([slice(None)] * len(sizes) + [k])] for k in range(3))
        angle = cos(2 * np.pi * u2)
        z = sqrt(-2 * log(1 - u1)) * angle
        inside = np.exp(-2.0) + (1 - np.exp(-2.0)) * (1 - u3)     # in (e**-2, 1]
        z = switch(gt(abs_(z), 2), sqrt(-2 * log(inside)) * angle, z)
        return self._finish(cast(avg + std * z, dtype), u)

    def truncated_normal(self, size, avg=0.0, std=1.0, ndim=None, dtype=None, nstreams=None):
        """Normal draws truncated at two standard deviations, scaled so that their standard
        deviation is about ``std`` (Theano's constant: a unit normal truncated at +-2 has a
        standard deviation of 0.8796)."""
        return self.normal(size, avg, std / 0.87962566103423978, ndim, dtype, truncate=True)

    def binomial(self, size=None, n=1, p=0.5, ndim=None, dtype="int64", nstreams=None):
        return super().binomial(size, n, p, ndim, dtype)

    def multinomial(self, size=None, n=1, pvals=None, ndim=None, dtype="int64", nstreams=None):
        if pvals is None:
            raise TypeError("You have to specify pvals")
        return super().multinomial(size, n, pvals, ndim, dtype)

    def choice(self, size=1, a=None, replace=True, p=None, ndim=None, dtype="int64",
               nstreams=None):
        """Indices drawn without replacement from each row of the matrix ``p``: shape
        ``(rows, size)``."""
        if replace:
            raise NotImplementedError("MRG_RandomStreams.choice only works without replacement")
        if a is not None:
            raise TypeError("For now, a has to be None in MRG_RandomStreams.choice")
        if p is None:
            raise TypeError("For now, p has to be specified in MRG_RandomStreams.choice")
        p = as_tensor_variable(check_range("p", p, 0, 1))
        u = self._draw("uniform", _float_dtype(p), _sizes(p.shape))
        return self._finish(cast(_smallest(-log(u) / p, _int_size(size)), dtype), u)


# ---------------------------------------------------------------------------------------------
# Building blocks


def _int_size(n):
    return n if isinstance(n, TensorVariable) else int(n)


def _trailing(param, rank: int, extra: bool) -> list:
    """A dimshuffle pattern aligning ``param`` on the right of ``rank`` dims (plus one more)."""
    ndim = as_tensor_variable(param).ndim
    pattern = ["x"] * (rank - ndim) + list(range(ndim))
    return pattern + (["x"] if extra else [])


def _per_draw(pvals, batch_rank: int) -> list:
    """A dimshuffle pattern for ``pvals`` (distributions along the last axis, aligned on the
    right of ``batch_rank`` batch dims) against draws of shape ``batch + (n,)``: a broadcast dim
    for the draws goes before the outcomes."""
    batch = pvals.ndim - 1
    return ["x"] * (batch_rank - batch) + list(range(batch)) + ["x", batch]


def _categorical(u, p):
    """The outcome each uniform draw ``u`` picks among probabilities ``p`` (last axis, which
    broadcasts against ``u``): how many cumulative sums, but the last, are at most ``u``."""
    p = as_tensor_variable(p)
    k = p.shape[-1]
    upto = ge(dimshuffle(arange(k), ["x", 0]), dimshuffle(arange(k), [0, "x"]))  # [m, j]: m <= j
    cumulative = (dimshuffle(p, list(range(p.ndim)) + ["x"])
                  * cast(upto, p.dtype)).sum(axis=-2)   # cumulative[..., j] = sum_{m<=j} p_m
    inner = cumulative[tuple([slice(None)] * (cumulative.ndim - 1) + [slice(None, -1)])]
    below = ge(dimshuffle(u, list(range(u.ndim)) + ["x"]), inner)
    return below.sum(axis=-1)


def _ranks(keys):
    """The rank of each key along the last axis (ties broken by position): a permutation."""
    n = keys.shape[-1]
    rank = keys.ndim
    mine = dimshuffle(keys, list(range(rank)) + ["x"])
    other = dimshuffle(keys, list(range(rank - 1)) + ["x", rank - 1])
    position = arange(n)
    earlier = lt(dimshuffle(position, ["x", 0]), dimshuffle(position, [0, "x"]))
    smaller = lt(other, mine) | (eq(other, mine) & earlier)
    return smaller.sum(axis=-1)


def _smallest(keys, count):
    """The positions of the ``count`` smallest keys along the last axis, smallest first."""
    ranks = _ranks(keys)
    slots = arange(count)
    n = keys.shape[-1]
    picked = eq(dimshuffle(ranks, list(range(ranks.ndim)) + ["x"]), slots)
    positions = dimshuffle(arange(n), [0, "x"])
    return switch(picked, positions, 0).sum(axis=-2)
