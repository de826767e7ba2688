"""Hypothesis strategies for dialect tests: dtypes, broadcastable shapes, arrays and their types."""
from __future__ import annotations

import math

import numpy as np
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from lowering.ir.types import TensorType, scalar_type_of

SPECIAL_FLOATS = [math.nan, math.inf, -math.inf, 0.0, -0.0, 0.5, -0.5, 1.5, 2.5, -2.5]


def elements(dtype, low: float = -8.0, high: float = 8.0, specials: bool = True):
    """Values of ``dtype``: floats in [low, high] (plus NaN, infinities, signed zeros and halves
    when ``specials``), integers over their whole range, or booleans."""
    dtype = np.dtype(dtype)
    if dtype.kind == "f":
        finite = st.floats(low, high, width=dtype.itemsize * 8, allow_nan=False,
                           allow_infinity=False)
        return st.one_of(finite, st.sampled_from(SPECIAL_FLOATS)) if specials else finite
    if dtype.kind in "iu":
        info = np.iinfo(dtype)
        return st.integers(int(info.min), int(info.max))
    return st.booleans()


@st.composite
def broadcast_shapes(draw, count: int, max_rank: int = 3, max_side: int = 3):
    """``count`` same-rank shapes that broadcast together (some dims are 1 in some operands;
    sizes may be 0)."""
    rank = draw(st.integers(0, max_rank))
    base = draw(st.lists(st.integers(0, max_side), min_size=rank, max_size=rank))
    shapes = []
    for _ in range(count):
        ones = draw(st.lists(st.booleans(), min_size=rank, max_size=rank))
        shapes.append(tuple(1 if one else size for one, size in zip(ones, base)))
    return shapes


@st.composite
def typed_array(draw, dtype, shape, elements_strategy=None):
    """An array of ``dtype`` and ``shape`` with a type for it: size-1 dims typed ``1``, the
    others ``?`` or static at random."""
    array = draw(hnp.arrays(np.dtype(dtype), shape,
                            elements=elements_strategy if elements_strategy is not None
                            else elements(dtype)))
    dims = tuple(1 if s == 1 else (s if draw(st.booleans()) else None) for s in shape)
    return array, TensorType(dims, scalar_type_of(dtype))
