"""Shared pieces of the loops ops' builders and verifiers.

Several ops take lists whose entries are either known at compile time (an int in an attribute) or
only at run time (an ``index`` operand), like MLIR's ``memref.subview``. ``split_mixed`` turns a
Python list of ints and Values into the two halves; ``DYNAMIC`` marks a run-time entry in the
static half (MLIR's ``ShapedType::kDynamic``, the most negative i64).

>>> split_mixed([0, 3])
([0, 3], [])
"""
from __future__ import annotations

import numpy as np

from lowering.ir.core import Operation, Value, VerifyError

DYNAMIC = -(2 ** 63)


def split_mixed(entries) -> tuple[list[int], list[Value]]:
    """Split ints and index Values into (static entries with DYNAMIC for Values, the Values)."""
    static: list[int] = []
    dynamic: list[Value] = []
    for entry in entries:
        if isinstance(entry, Value):
            static.append(DYNAMIC)
            dynamic.append(entry)
        elif isinstance(entry, (int, np.integer)) and not isinstance(entry, bool):
            static.append(int(entry))
        else:
            raise TypeError(f"expected an int or an index Value, got {entry!r}")
    return static, dynamic


def check_count(op: Operation, got: int, want: int, what: str) -> None:
    if got != want:
        raise VerifyError(f"{op.name}: expected {want} {what}, got {got}", op)


def check_result_type(op: Operation, got, want) -> None:
    if got != want:
        raise VerifyError(f"{op.name}: result type {got} should be {want}", op)
