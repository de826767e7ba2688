#!/usr/bin/env python3
"""Extracts Theano 1.0's public names, module by module, from a Theano source tree.

Run once against a checkout of Theano 1.0 (``git checkout rel-1.0.5``)::

    python tools/extract_theano_api.py /path/to/Theano > tools/theano_api.txt

Nothing is imported: each module of ``MODULES`` is read with ``ast``. Its names are its
``__all__`` when it has one, else every public (no leading underscore) name it defines at module
level (functions, classes, assignments, in ``if``/``try`` blocks too) or imports from Theano
(``from theano.x import y``, relative imports, star imports of Theano modules followed). Names
imported from other packages (NumPy, six, ...) are not Theano's API and are left out.
The output has one ``module name`` pair a line, sorted; ``tools/gen_compat_list.py`` reads it.
"""
from __future__ import annotations

import ast
import pathlib
import sys

# Theano 1.0's public modules that programs and libraries import.
MODULES = (
    "theano", "theano.compile", "theano.compile.function", "theano.compile.function_module",
    "theano.compile.io", "theano.compile.mode", "theano.compile.sharedvalue", "theano.gof",
    "theano.gof.graph", "theano.gradient", "theano.ifelse", "theano.printing", "theano.scalar",
    "theano.scan_module", "theano.scan_module.scan_utils", "theano.sandbox.rng_mrg",
    "theano.gpuarray", "theano.gpuarray.dnn", "theano.sparse", "theano.tensor",
    "theano.tensor.basic", "theano.tensor.elemwise", "theano.tensor.extra_ops",
    "theano.tensor.nnet", "theano.tensor.nnet.nnet", "theano.tensor.nnet.conv",
    "theano.tensor.nnet.sigm", "theano.tensor.nnet.abstract_conv", "theano.tensor.nnet.bn",
    "theano.tensor.signal.pool", "theano.tensor.shared_randomstreams", "theano.tensor.xlogx",
    "theano.tensor.nlinalg", "theano.tensor.slinalg", "theano.tensor.sort",
    "theano.tensor.var", "theano.tensor.type", "theano.tensor.sharedvar",
)


def module_file(root: pathlib.Path, module: str) -> pathlib.Path | None:
    base = root.joinpath(*module.split("."))
    for path in (base / "__init__.py", base.with_suffix(".py")):
        if path.exists():
            return path
    return None


def _top_statements(body):
    """Module-level statements, looking into ``if`` and ``try`` blocks."""
    for node in body:
        if isinstance(node, ast.If):
            yield from _top_statements(node.body)
            yield from _top_statements(node.orelse)
        elif isinstance(node, ast.Try):
            for part in (node.body, node.orelse, node.finalbody):
                yield from _top_statements(part)
            for handler in node.handlers:
                yield from _top_statements(handler.body)
        else:
            yield node


def _resolve(module: str, is_package: bool, node: ast.ImportFrom) -> str:
    if not node.level:
        return node.module or ""
    parts = module.split(".")
    base = parts if is_package else parts[:-1]
    base = base[:len(base) - node.level + 1]
    return ".".join(base + ([node.module] if node.module else []))


def public_names(root: pathlib.Path, module: str, seen: frozenset = frozenset()) -> set[str]:
    """The public names of ``module`` (see the module docstring)."""
    path = module_file(root, module)
    if path is None or module in seen:
        return set()
    tree = ast.parse(path.read_text(encoding="utf-8", errors="replace"))
    names: set[str] = set()
    declared = None
    for node in _top_statements(tree.body):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(node.name)
        elif isinstance(node, (ast.Assign, ast.AnnAssign, ast.AugAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            for target in targets:
                for leaf in ast.walk(target):
                    if isinstance(leaf, ast.Name):
                        if leaf.id == "__all__" and isinstance(node, ast.Assign):
                            try:
                                declared = set(ast.literal_eval(node.value))
                            except ValueError:
                                pass
                        names.add(leaf.id)
        elif isinstance(node, ast.ImportFrom):
            source = _resolve(module, path.name == "__init__.py", node)
            if source.split(".")[0] != "theano":
                continue
            for alias in node.names:
                if alias.name == "*":
                    names |= public_names(root, source, seen | {module})
                else:
                    names.add(alias.asname or alias.name)
    if declared is not None:
        return declared
    return {n for n in names if not n.startswith("_")}


def main(argv: list[str]) -> int:
    if len(argv) != 2:
        print(__doc__, file=sys.stderr)
        return 2
    root = pathlib.Path(argv[1])
    for module in MODULES:
        if module_file(root, module) is None:
            print(f"missing module {module}", file=sys.stderr)
            return 1
        for name in sorted(public_names(root, module)):
            print(module, name)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
