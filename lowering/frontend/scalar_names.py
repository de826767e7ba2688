"""``theano.scalar`` names programs use: ``upcast``.

>>> upcast("int8", "float32"), upcast("int32", "float32"), upcast("int64")
('float32', 'float64', 'int64')
"""
from __future__ import annotations

import numpy as np

from lowering.config import config


def upcast(dtype, *dtypes) -> str:
    """The dtype NumPy gives to arithmetic on values of ``dtype`` and ``dtypes`` (Theano's
    ``scalar.upcast``). With ``config.cast_policy='numpy+floatX'`` and ``floatX`` float32 (or
    float16), a float64 result stays at ``floatX`` unless float64 (or float32) was asked for."""
    names = [config.floatX if d == "floatX" else np.dtype(d).name for d in (dtype, *dtypes)]
    result = np.result_type(*[np.dtype(n) for n in names]).name
    if config.cast_policy != "numpy+floatX":
        return result
    narrow = {"float32": ("float64",), "float16": ("float64", "float32")}.get(config.floatX)
    if narrow and result in ("float64", "float32") and not any(n in narrow for n in names):
        return config.floatX
    return result
