"""Constraints on buffer-typed fields of ops (see ``lowering.ir.constraints``).

>>> from lowering.ir.types import F32
>>> str(BufferOf(F32, space=("device", "shared"), contiguous=True))
'a contiguous buffer of f32 in space "device" or "shared"'
>>> BufferOf(space="shared").check(BufferType((4,), F32), {})
False
"""
from __future__ import annotations

from typing import Any

from lowering.ir.constraints import AnyOf, AnyScalar, AnyType, Constraint, ConstraintVar, Is, ShapedOf

from .types import BufferType


class BufferOf(ShapedOf):
    """A buffer whose element type, rank and shape fit, in one of the memory spaces ``space``
    (any when None; a ``ConstraintVar`` says "the same space as another buffer");
    ``contiguous``: row-major without gaps; ``fresh``: contiguous with offset
    0 (what an allocation makes); ``static``: no run-time dimension."""

    def __init__(self, element: Any = AnyType, rank: Any = None, shape: Any = None,
                 space: str | tuple[str, ...] | Constraint | None = None, contiguous: bool = False,
                 fresh: bool = False, static: bool = False):
        super().__init__(BufferType, "buffer", element, rank, shape)
        self.space = (Is(space) if isinstance(space, str) else AnyOf(*space)
                      if isinstance(space, tuple) else space)
        self.contiguous = contiguous or fresh
        self.fresh = fresh
        self.static = static

    def check(self, x, env):
        return (super().check(x, env)
                and (self.space is None or self.space.check(x.memory_space, env))
                and (not self.contiguous or x.is_contiguous)
                and (not self.fresh or x.offset == 0)
                and (not self.static or not x.dynamic_dims))

    def describe(self, env):
        article, text = super().describe(env).split(" ", 1)
        prefix = ["static"] * self.static + ["contiguous"] * self.contiguous
        if prefix:
            text = " ".join(prefix) + " " + text
            article = "a"
        if self.fresh:
            text += " with offset 0"
        if self.space is not None and (not isinstance(self.space, ConstraintVar)
                                       or self.space in env):
            text += " in space " + " or ".join(f'"{s}"' for s in
                                               self.space.describe(env).split(" or "))
        return f"{article} {text}"


AnyBuffer = BufferOf()
# The element type shared by a buffer and the scalars read from or written into it
# (``BufferOf(ELEMENT)`` on the buffer, ``ELEMENT`` on the scalar).
ELEMENT = ConstraintVar("element", AnyScalar)
