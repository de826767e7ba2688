"""How large one allocation may be, shared by the interpreters and the backends.

Sizes are signed 64-bit integers at run time. A shape whose byte count does not fit in one
(``MAX_ALLOCATION_BYTES``, the largest multiple of 64 below 2**63, so that rounding a size up to
the 64-byte alignment cannot wrap around) is refused with a ``ValueError``, as NumPy refuses an
array whose ``size * itemsize`` exceeds ``intp``; a shape that fits but that the system cannot
give is a ``MemoryError``. Every backend checks the products it computes against this limit
before it allocates, so that a size never wraps around to a small buffer.

>>> allocation_bytes((3, 4), 8)
96
>>> allocation_bytes((2 ** 61 + 1, 8), 8) is None
True
>>> check_allocation("tensor.alloc", (2 ** 40, 2 ** 40), 8)
Traceback (most recent call last):
    ...
ValueError: tensor.alloc: an array of shape (1099511627776, 1099511627776) with 8-byte elements is too big (9671406556917033397649408 bytes; at most 9223372036854775744 fit in one allocation)
"""
from __future__ import annotations

import math

INT64_MAX = 2 ** 63 - 1
INT64_MIN = -(2 ** 63)
MAX_ALLOCATION_BYTES = INT64_MAX - 63


def allocation_bytes(shape, itemsize: int) -> int | None:
    """The bytes of an array of ``shape`` (non-negative ints), or None where they exceed
    ``MAX_ALLOCATION_BYTES``. A zero dimension does not excuse the others, as in NumPy:
    ``(2**62, 2**62, 0)`` is too big (the product of the non-zero sizes is what must fit).

    >>> allocation_bytes((0, 5), 4), allocation_bytes((2 ** 62, 2 ** 62, 0), 1)
    (0, None)
    """
    nonzero = math.prod(max(int(d), 1) for d in shape) * itemsize
    if nonzero > MAX_ALLOCATION_BYTES:
        return None
    return math.prod(int(d) for d in shape) * itemsize


def check_allocation(what: str, shape, itemsize: int) -> int:
    """The bytes of an array of ``shape``; a ``ValueError`` naming ``what`` where a size is
    negative or the bytes do not fit in one allocation."""
    shape = tuple(int(d) for d in shape)
    if any(d < 0 for d in shape):
        raise ValueError(f"{what}: negative size in the shape {shape}")
    nbytes = allocation_bytes(shape, itemsize)
    if nbytes is None:
        raise ValueError(f"{what}: an array of shape {shape} with {itemsize}-byte elements is too "
                         f"big ({math.prod(max(d, 1) for d in shape) * itemsize} bytes; at "
                         f"most {MAX_ALLOCATION_BYTES} fit in one allocation)")
    return nbytes
