#!/usr/bin/env python3
"""Writes docs/ops.md from the op definitions and the layers' rule tables: a support matrix
(which backend runs each op, which ops have a gradient and a pretty form), then the reference of
every op.

Run from the project's root: ``python tools/gen_op_reference.py`` (``--check`` exits 1 if the file
is stale; the test suite runs that check).
"""
from __future__ import annotations

import inspect
import pathlib
import sys

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent.parent))

import lowering.dialects  # noqa: E402,F401  (registers every op)
from lowering.compile.op_support import (BACKENDS, dialect_of, has_gradient,  # noqa: E402
                                         has_pretty_form, support)
from lowering.ir.constraints import AnyType  # noqa: E402
from lowering.ir.context import default_context  # noqa: E402
from lowering.ir.core import Operation  # noqa: E402

TARGET = pathlib.Path(__file__).resolve().parent.parent / "docs" / "ops.md"


def _fields(fields) -> str:
    """```name`` (constraint)`` for each field; ``…`` marks a variadic one."""
    return ", ".join(f"`{f.name}`" + ("…" if f.variadic else "")
                     + ("" if f.constraint is AnyType else f" ({f.constraint})")
                     for f in fields) or "none"


def _overrides(cls, name: str) -> bool:
    return any(name in vars(k) for k in cls.__mro__ if k is not Operation and issubclass(k, Operation))


def describe(cls) -> str:
    lines = [f"### `{cls.name}`", ""]
    doc = inspect.getdoc(cls) or ""
    if doc and doc != inspect.getdoc(Operation):
        lines += [doc.split("\n\n")[0].replace("\n", " "), ""]
    lines.append(f"- operands: {_fields(cls._operand_fields)}")
    lines.append(f"- results: {_fields(cls._result_fields)}")
    if cls._attr_fields:
        attrs = ", ".join(
            f"`{f.name}` ({f.constraint}{', optional' if f.optional else ''})"
            for f in cls._attr_fields)
        lines.append(f"- attributes: {attrs}")
    if cls._region_fields:
        lines.append("- regions: " + ", ".join(f"`{f.name}`" for f in cls._region_fields))
    if cls.traits:
        lines.append("- traits: " + ", ".join(map(str, sorted(cls.traits))))
    has = [what for what, ok in (
        ("verifier", _overrides(cls, "verify_")), ("folding", _overrides(cls, "fold")),
        ("canonicalization", _overrides(cls, "canonicalization_patterns"))) if ok]
    if has:
        lines.append("- has: " + ", ".join(has))
    lines.append(f"- defined in: `{cls.__module__}`")
    return "\n".join(lines) + "\n"


_CELLS = {"yes": "yes", "n/a": "—", "structure": "(structure)", "missing": "**missing**"}

MATRIX_INTRO = """\
Which backend runs each op, read from the layers' rule tables (`lowering.compile.op_support`).
Tensor ops run in the interpreter and reach the CPU and the GPU through bufferize; loops, scalar
and func ops reach the CPU through its lowering and the GPU inside kernels; gpu ops run on the
GPU in a kernel or in the host program. "no" gives the reason a layer declares; "—": the op's
dialect does not reach that backend; "(structure)": every layer walks the op itself (functions,
modules, terminators). Gradient (tensor and sparse ops): the op's own `grad`, which the front
end's `grad` uses; pretty form: the op prints in a readable form besides the generic one.
"""


def _cell(state) -> str:
    return f"no: {state.reason}" if state.state == "no" else _CELLS[state.state]


def support_matrix(classes) -> list[str]:
    """The rows of the support matrix of ``classes``, header first."""
    header = ["op", *(backend.name for backend in BACKENDS), "gradient", "pretty form"]
    rows = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    for cls in classes:
        gradient = ("—" if dialect_of(cls) not in ("tensor", "sparse")
                    else "yes" if has_gradient(cls) else "no")
        cells = [f"`{cls.name}`", *(_cell(support(cls, backend)) for backend in BACKENDS),
                 gradient, "yes" if has_pretty_form(cls) else "no"]
        rows.append("| " + " | ".join(cells) + " |")
    return rows


def render() -> str:
    ops = default_context().ops
    by_dialect: dict[str, list] = {}
    for name in sorted(ops):
        by_dialect.setdefault(name.split(".")[0], []).append(ops[name])
    out = ["# Op reference", "",
           "Generated from the op definitions by `python tools/gen_op_reference.py`; do not edit by hand.",
           "", "## Support matrix", "", MATRIX_INTRO]
    out += support_matrix([cls for classes in by_dialect.values() for cls in classes]) + [""]
    for dialect, classes in by_dialect.items():
        out += [f"## {dialect}", ""]
        out += [describe(cls) for cls in classes]
    return "\n".join(out)


def main(argv=None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    text = render()
    if "--check" in argv:
        if not TARGET.exists() or TARGET.read_text() != text:
            print(f"{TARGET} is stale: run python tools/gen_op_reference.py")
            return 1
        return 0
    TARGET.write_text(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
