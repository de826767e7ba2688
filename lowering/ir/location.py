"""Source locations carried by every operation.

A location names the user's code that created an op: ``Location("train.py", 12, 5)`` prints as
``loc("train.py":12:5)``. Rewrites that merge ops keep every original location in a ``FusedLoc``.
"""
from __future__ import annotations

import contextlib
import contextvars
import os
import sys
from dataclasses import dataclass


@dataclass(frozen=True)
class Location:
    """A file, line and column in the user's source.

    >>> str(Location("a.py", 3, 1))
    'loc("a.py":3:1)'
    """

    file: str
    line: int
    col: int = 0

    def __str__(self) -> str:
        return f'loc("{self.file}":{self.line}:{self.col})'

    def short(self) -> str:
        """``file:line:col`` without the ``loc(...)`` wrapper, for error messages."""
        return f"{self.file}:{self.line}:{self.col}"

    @property
    def locations(self) -> tuple["Location", ...]:
        return (self,)


@dataclass(frozen=True)
class FusedLoc:
    """Several locations kept together, e.g. for an op that fused several user expressions.

    >>> str(FusedLoc((Location("a.py", 1, 0), Location("a.py", 2, 0))))
    'loc(fused["a.py":1:0, "a.py":2:0])'
    """

    parts: tuple[Location, ...]

    def __str__(self) -> str:
        inner = ", ".join(f'"{p.file}":{p.line}:{p.col}' for p in self.parts)
        return f"loc(fused[{inner}])"

    def short(self) -> str:
        return ", ".join(p.short() for p in self.parts)

    @property
    def locations(self) -> tuple[Location, ...]:
        return self.parts


UNKNOWN = Location("<unknown>", 0, 0)


def fuse_locations(locs) -> Location | FusedLoc:
    """One location standing for all of ``locs`` (duplicates and unknowns dropped, order kept)."""
    seen: dict[Location, None] = {}  # a dict keeps order and makes the duplicate check O(1)
    for loc in locs:
        for part in loc.locations:
            if part != UNKNOWN:
                seen.setdefault(part)
    if not seen:
        return UNKNOWN
    if len(seen) == 1:
        return next(iter(seen))
    return FusedLoc(tuple(seen))


_PACKAGE_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


# Set while a rewrite runs: ops created without a location take the rewritten op's location
# rather than the line of whatever code outside the package happened to start the pass.
_DEFAULT_LOCATION: contextvars.ContextVar = contextvars.ContextVar("default_location", default=None)


@contextlib.contextmanager
def default_location(loc: "Location | FusedLoc"):
    """Within the ``with`` block, ops created without a location get ``loc``.

    >>> with default_location(Location("a.py", 7, 1)):
    ...     str(caller_location())
    'loc("a.py":7:1)'
    """
    token = _DEFAULT_LOCATION.set(loc)
    try:
        yield loc
    finally:
        _DEFAULT_LOCATION.reset(token)


def caller_location() -> Location:
    """The location of the innermost stack frame outside the ``lowering`` package.

    This is how front-end ops learn the user's line: the first frame that is not ours. Inside
    ``default_location(loc)`` it is ``loc``.
    """
    override = _DEFAULT_LOCATION.get()
    if override is not None:
        return override
    frame = sys._getframe(1)
    while frame is not None:
        filename = frame.f_code.co_filename
        if not os.path.abspath(filename).startswith(_PACKAGE_DIR + os.sep):
            return Location(filename, frame.f_lineno, _column(frame))
        frame = frame.f_back
    return UNKNOWN


def _column(frame) -> int:
    """1-based column of the instruction a frame is executing (0 when Python does not know)."""
    try:
        for index, pos in enumerate(frame.f_code.co_positions()):
            if index == frame.f_lasti // 2:
                return (pos[2] + 1) if pos[2] is not None else 0
    except (AttributeError, ValueError):
        pass
    return 0
