#!/usr/bin/env python3
"""Writes docs/ops.md, the reference of every op, from the op definitions themselves.

Run from the project's root: ``python tools/gen_op_reference.py`` (``--check`` exits 1 if the file
is stale; the test suite runs that check).
"""
from __future__ import annotations

import inspect
import pathlib
import sys

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent.parent))

import lowering.dialects  # noqa: E402,F401  (registers every op)
from lowering.ir.constraints import AnyType  # noqa: E402
from lowering.ir.core import OP_REGISTRY, Operation  # noqa: E402
from lowering.ir.interpreter import RULES  # noqa: E402

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
        ("canonicalization", _overrides(cls, "canonicalization_patterns")),
        ("grad rule", hasattr(cls, "grad")), ("interpreter rule", cls.name in RULES)) if ok]
    if has:
        lines.append("- has: " + ", ".join(has))
    lines.append(f"- defined in: `{cls.__module__}`")
    return "\n".join(lines) + "\n"


def render() -> str:
    by_dialect: dict[str, list] = {}
    for name in sorted(OP_REGISTRY):
        if name.split(".")[0].startswith("test"):  # ops that tests register
            continue
        by_dialect.setdefault(name.split(".")[0], []).append(OP_REGISTRY[name])
    out = ["# Op reference", "",
           "Generated from the op definitions by `python tools/gen_op_reference.py`; do not edit by hand.",
           ""]
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
