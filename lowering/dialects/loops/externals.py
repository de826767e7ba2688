"""External symbols that ``loops.call`` may call, with their signatures and reference semantics.

Signature convention (what a backend passes at the C ABI level):

- an ``index`` argument is a 64-bit signed integer (a backend binding a library with 32-bit
  integers converts it); enumerations such as CBLAS's order and transpose flags are ``index`` too;
- a float or integer argument is passed as its C type;
- a buffer argument is passed as one pointer: the address of its element ``[0, ..., 0]`` (the
  allocation's start plus ``offset`` elements). Sizes, leading dimensions and increments are not
  implied: the caller passes them explicitly as ``index`` arguments, as BLAS expects;
- results are scalars (at most one, as in C).

Each registered symbol has a Python implementation for the reference interpreter, which gets
buffers as NumPy views and rebuilds what the callee would address from the view's first element
and the explicit sizes, checking that it stays inside the view.

>>> sorted(EXTERNAL_FUNCTIONS)[:3]
['cblas_ddot', 'cblas_dgemm', 'cblas_dgemv']
>>> print(EXTERNAL_FUNCTIONS["cblas_sdot"].signature())
cblas_sdot(index, buffer<f32>, index, buffer<f32>, index) -> f32
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

import numpy as np
from numpy.lib.stride_tricks import as_strided

from lowering.ir.types import F32, F64, INDEX, ScalarType, Type

from .types import BufferType


@dataclass(frozen=True)
class BufferParam:
    """A buffer parameter: any shape and layout, this element type, this memory space.

    ``on_device``: device buffers are accepted too. The BLAS symbols say so: a BLAS operation
    on device buffers is emitted by ``bufferize`` for ops placed on a GPU, and the gpu passes
    replace the call by kernels before code generation.
    """

    element: ScalarType
    memory_space: str = "host"
    on_device: bool = False

    def accepts(self, t: Type) -> bool:
        return (isinstance(t, BufferType) and t.element == self.element
                and (t.memory_space == self.memory_space
                     or (self.on_device and t.memory_space == "device")))

    def __str__(self) -> str:
        space = "" if self.memory_space == "host" else f", space={self.memory_space!r}"
        return f"buffer<{self.element}{space}>"


Param = ScalarType | BufferParam


def param_accepts(param: Param, t: Type) -> bool:
    """Whether an argument of type ``t`` may be passed for ``param``."""
    return param.accepts(t) if isinstance(param, BufferParam) else t == param


@dataclass(frozen=True)
class ExternalFunction:
    """A callable symbol: its parameters, result types and reference implementation."""

    name: str
    params: tuple[Param, ...]
    results: tuple[ScalarType, ...]
    implementation: Callable

    def signature(self) -> str:
        ins = ", ".join(map(str, self.params))
        outs = ", ".join(map(str, self.results))
        return f"{self.name}({ins}) -> {outs or '()'}"


EXTERNAL_FUNCTIONS: dict[str, ExternalFunction] = {}


def register_external(name: str, params, results=()):
    """Decorator registering the reference implementation of external symbol ``name``.

    The implementation takes the run-time arguments (NumPy views for buffers, NumPy scalars
    otherwise) and returns a tuple with one value per result.
    """
    def register(fn: Callable) -> Callable:
        if name in EXTERNAL_FUNCTIONS:
            raise ValueError(f"external symbol {name} is registered twice")
        EXTERNAL_FUNCTIONS[name] = ExternalFunction(name, tuple(params), tuple(results), fn)
        return fn
    return register


# ---------------------------------------------------------------------------------------------
# Rebuilding what a pointer plus sizes addresses


def _extent(start: int, shape, byte_strides, itemsize: int) -> tuple[int, int]:
    """The lowest address and one past the highest byte of the elements of a strided array."""
    reach = [(n - 1) * s for n, s in zip(shape, byte_strides)]
    return (start + sum(r for r in reach if r < 0),
            start + sum(r for r in reach if r > 0) + itemsize)


def _addressed(view: np.ndarray, shape, strides, what: str) -> np.ndarray:
    """The elements at ``view``'s first element plus ``strides`` (in elements), checked to lie in
    the memory of ``view``."""
    if any(n == 0 for n in shape):
        return np.empty(shape, view.dtype)
    if view.size == 0:
        raise ValueError(f"{what}: the buffer is empty")
    size = view.itemsize
    start = view.__array_interface__["data"][0]
    byte_strides = [s * size for s in strides]
    lowest, highest = _extent(start, shape, byte_strides, size)
    low, high = _extent(start, view.shape, view.strides, size)
    if lowest < low or highest > high:
        raise ValueError(f"{what}: the call addresses elements outside the buffer passed "
                         f"(shape {view.shape}, strides {tuple(s // size for s in view.strides)})")
    return as_strided(view, shape=tuple(shape), strides=tuple(byte_strides))


def _vector(view: np.ndarray, n: int, inc: int, what: str) -> np.ndarray:
    if inc == 0:
        raise ValueError(f"{what}: increment must not be 0")
    # BLAS walks a vector with a negative increment from its far end.
    vec = _addressed(view, (n,), (abs(inc),), what)
    return vec if inc > 0 else vec[::-1]


CBLAS_ROW_MAJOR, CBLAS_COL_MAJOR = 101, 102
CBLAS_NO_TRANS, CBLAS_TRANS = 111, 112


def _matrix(view, rows: int, cols: int, ld: int, order: int, what: str) -> np.ndarray:
    """The ``rows x cols`` matrix stored at ``view`` with leading dimension ``ld``."""
    if order == CBLAS_ROW_MAJOR:
        if ld < max(1, cols):
            raise ValueError(f"{what}: leading dimension {ld} < {cols} columns")
        return _addressed(view, (rows, cols), (ld, 1), what)
    if order == CBLAS_COL_MAJOR:
        if ld < max(1, rows):
            raise ValueError(f"{what}: leading dimension {ld} < {rows} rows")
        return _addressed(view, (rows, cols), (1, ld), what)
    raise ValueError(f"unknown CBLAS order {order} (101 row major, 102 column major)")


def _op(view, rows, cols, ld, order, trans, what) -> np.ndarray:
    """``op(X)`` of shape ``rows x cols``: X itself, or X stored as ``cols x rows`` transposed."""
    if trans == CBLAS_NO_TRANS:
        return _matrix(view, rows, cols, ld, order, what)
    if trans == CBLAS_TRANS:
        return _matrix(view, cols, rows, ld, order, what).T
    raise ValueError(f"{what}: unknown CBLAS transpose flag {trans} (111 no, 112 yes)")


def _scale_add(out: np.ndarray, product: np.ndarray, alpha, beta) -> None:
    # BLAS does not read the output when beta is 0, so whatever it held (even NaN) is ignored.
    result = alpha * product if beta == 0 else alpha * product + beta * out
    out[...] = result.astype(out.dtype, copy=False)


def _gemm(order, transa, transb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc):
    order, transa, transb, m, n, k, lda, ldb, ldc = map(
        int, (order, transa, transb, m, n, k, lda, ldb, ldc))
    op_a = _op(a, m, k, lda, order, transa, "A")
    op_b = _op(b, k, n, ldb, order, transb, "B")
    out = _matrix(c, m, n, ldc, order, "C")
    _scale_add(out, np.matmul(op_a, op_b), alpha, beta)
    return ()


def _gemv(order, trans, m, n, alpha, a, lda, x, incx, beta, y, incy):
    order, trans, m, n, lda, incx, incy = map(int, (order, trans, m, n, lda, incx, incy))
    matrix = _matrix(a, m, n, lda, order, "A")
    if trans == CBLAS_TRANS:
        matrix = matrix.T
    elif trans != CBLAS_NO_TRANS:
        raise ValueError(f"A: unknown CBLAS transpose flag {trans} (111 no, 112 yes)")
    vx = _vector(x, matrix.shape[1], incx, "x")
    vy = _vector(y, matrix.shape[0], incy, "y")
    _scale_add(vy, matrix @ vx, alpha, beta)
    return ()


def _dot(n, x, incx, y, incy):
    n, incx, incy = int(n), int(incx), int(incy)
    vx, vy = _vector(x, n, incx, "x"), _vector(y, n, incy, "y")
    return (x.dtype.type(np.dot(vx, vy)),)


for _prefix, _t in (("s", F32), ("d", F64)):
    _buf = BufferParam(_t, on_device=True)
    register_external(f"cblas_{_prefix}gemm",
                      [INDEX, INDEX, INDEX, INDEX, INDEX, INDEX, _t, _buf, INDEX, _buf, INDEX, _t,
                       _buf, INDEX])(_gemm)
    register_external(f"cblas_{_prefix}gemv",
                      [INDEX, INDEX, INDEX, INDEX, _t, _buf, INDEX, _buf, INDEX, _t, _buf,
                       INDEX])(_gemv)
    register_external(f"cblas_{_prefix}dot", [INDEX, _buf, INDEX, _buf, INDEX], [_t])(_dot)
