#!/usr/bin/env python3
"""Checks that lowering's imports point down the layers and close no circle.

Run from the project's root: ``python tools/check_layers.py`` prints one line per problem and
exits with 1 when there is one; ``tests/test_layers.py`` runs it on the package.

What counts as an import: every ``import`` and ``from ... import`` statement of a module, at
module level and inside functions alike (a function-local import delays loading, but the module
still depends on the other one), relative ones resolved. ``from pkg import name`` is an import
of the module ``pkg.name`` when there is one, else of ``pkg``. Importing ``a.b.c`` loads the
packages ``a`` and ``a.b`` too; those implicit imports of parent packages are not counted.

- **Layers.** ``LAYERS`` lists them from the bottom; a module belongs to the layer of the
  longest prefix that names it (a package, a module, or the package and everything below).
  A module may import its own layer and the layers below, never one above.
- **Circles.** Modules that import each other, directly or through others, are reported,
  whether the imports run when the module loads or inside functions. ``KNOWN_CIRCLES`` lists
  the circles that remain, each a group of modules allowed to import each other; a circle
  that leaves its group is reported, and so is a group whose circle is gone (take it out).
"""
from __future__ import annotations

import ast
import collections
import pathlib
import sys

ROOT = pathlib.Path(__file__).resolve().parent.parent
PACKAGE = "lowering"

# The layers, bottom first: (name, prefixes). A prefix names a module or a package with
# everything below it; the longest prefix that matches a module decides its layer.
LAYERS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("unsupported", ("lowering.unsupported",)),     # errors for missing Theano names
    ("config", ("lowering.config",)),
    ("ir", ("lowering.ir",)),
    ("dialects", ("lowering.dialects",)),
    ("passes", ("lowering.passes",)),
    ("llvm", ("lowering.llvm",)),                    # jit.py: serves every target
    ("llvm/vecmath", ("lowering.llvm.vecmath",)),
    ("llvm/cpu", ("lowering.llvm.cpu",)),
    ("llvm/gpu", ("lowering.llvm.gpu",)),            # kernel bodies reuse the CPU's op rules
    ("compile base", ("lowering.compile.cache", "lowering.compile.fgraph",
                      "lowering.compile.graph_to_module", "lowering.compile.interpreter_executor",
                      "lowering.compile.io", "lowering.compile.pass_check",
                      "lowering.compile.pipeline", "lowering.compile.shared_storage",
                      "lowering.compile.values", "lowering.compile.wide_reference")),
    ("compile/profile", ("lowering.compile.profile",)),
    ("compile/cpu", ("lowering.compile.cpu",)),
    ("compile/gpu", ("lowering.compile.gpu",)),      # builds on the CPU's loops-level pipeline
    ("compile", ("lowering.compile",)),              # function(), Function, the profiled one
    ("frontend", ("lowering.frontend",)),
    ("top", ("lowering",                            # tensor, printing, cli, misc, sandbox
             "lowering.compile.function_module")),  # theano.compile's path for front-end names
)

# Circles that remain: groups of modules that may import each other, and why.
KNOWN_CIRCLES: tuple[tuple[tuple[str, ...], str], ...] = (
    (("lowering.dialects.tensor.elementwise", "lowering.dialects.tensor.gradutil",
      "lowering.dialects.tensor.indexing", "lowering.dialects.tensor.reduction",
      "lowering.dialects.tensor.shape_ops"),
     "gradient rules build ops of the other modules of the dialect"),
    (("lowering.frontend.build", "lowering.frontend.constructors",
      "lowering.frontend.custom_op", "lowering.frontend.elemwise", "lowering.frontend.indexing",
      "lowering.frontend.linalg", "lowering.frontend.reductions", "lowering.frontend.shapes",
      "lowering.frontend.theano_ops", "lowering.frontend.transfer", "lowering.frontend.types",
      "lowering.frontend.variable", "lowering.frontend.complex_numbers",
      "lowering.frontend.checked", "lowering.frontend.tensordot"),
     "a TensorVariable's operators and methods call the constructors, which make variables"),
    (("lowering.tensor", "lowering.tensor.basic"),
     "theano.tensor.basic offers the names the package gathers before importing it"),
)


def modules(root: pathlib.Path) -> dict[str, pathlib.Path]:
    """Every module of the package under ``root``: dotted name -> file."""
    found = {}
    for path in sorted((root / PACKAGE).rglob("*.py")):
        parts = list(path.relative_to(root).with_suffix("").parts)
        if "__pycache__" in parts:
            continue
        if parts[-1] == "__init__":
            parts.pop()
        found[".".join(parts)] = path
    return found


def imports(name: str, path: pathlib.Path, known: dict) -> dict[str, int]:
    """The package's modules ``name`` imports, each with the line of its first import."""
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found: dict[str, int] = {}

    def add(target: str, line: int) -> None:
        while target and target not in known:  # ``a.b.attr``: the module is ``a.b``
            target = target.rpartition(".")[0]
        if target and target != name and target.split(".")[0] == PACKAGE:
            found.setdefault(target, line)

    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            for alias in node.names:
                add(alias.name, node.lineno)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[:len(package.split(".")) - node.level + 1]
                source = ".".join(base + ([node.module] if node.module else []))
            else:
                source = node.module or ""
            for alias in node.names:
                child = f"{source}.{alias.name}"
                add(child if child in known else source, node.lineno)
    return found


def layer_of(name: str, layers=LAYERS) -> tuple[int, str]:
    """(position from the bottom, layer name) of a module.

    >>> layer_of("lowering.llvm.cpu.context")
    (7, 'llvm/cpu')
    >>> layer_of("lowering.compile.function")
    (13, 'compile')
    """
    best = None
    for position, (layer, prefixes) in enumerate(layers):
        for prefix in prefixes:
            if (name == prefix or name.startswith(prefix + ".")) and \
                    (best is None or len(prefix) > best[0]):
                best = (len(prefix), position, layer)
    if best is None:
        raise ValueError(f"{name} is in no layer: add it to LAYERS")
    return best[1], best[2]


def circles(graph: dict[str, dict[str, int]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan, iteratively)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found = []
    for start in sorted(graph):
        if start in index:
            continue
        work = [(start, iter(sorted(graph[start])))]
        index[start] = low[start] = len(index)
        stack.append(start)
        on_stack.add(start)
        while work:
            node, targets = work[-1]
            for target in targets:
                if target not in index:
                    index[target] = low[target] = len(index)
                    stack.append(target)
                    on_stack.add(target)
                    work.append((target, iter(sorted(graph.get(target, ())))))
                    break
                if target in on_stack:
                    low[node] = min(low[node], index[target])
            else:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[node])
                if low[node] == index[node]:
                    component = []
                    while True:
                        member = stack.pop()
                        on_stack.discard(member)
                        component.append(member)
                        if member == node:
                            break
                    if len(component) > 1:
                        found.append(sorted(component))
    return sorted(found)


def problems(root: pathlib.Path, layers=LAYERS, known_circles=KNOWN_CIRCLES) -> list[str]:
    """Every upward import and every circle outside ``known_circles``, one line each."""
    known = modules(root)
    if not known:
        return [f"no modules of {PACKAGE} under {root}"]
    graph = {name: imports(name, path, known) for name, path in known.items()}
    found = []
    for name, targets in sorted(graph.items()):
        here, layer = layer_of(name, layers)
        for target, line in sorted(targets.items()):
            there, target_layer = layer_of(target, layers)
            if there > here:
                found.append(f"{known[name].relative_to(root)}:{line}: {name} ({layer}) imports "
                             f"{target} ({target_layer}), a layer above it")
    groups = [set(group) for group, _ in known_circles]
    seen_groups = set()
    for component in circles(graph):
        seen_groups.update(k for k, g in enumerate(groups) if g & set(component))
        if not any(set(component) <= g for g in groups):
            around = _cycle(component, graph)
            others = sorted(set(component) - set(around))
            found.append(f"import circle: {' -> '.join(around)}"
                         + (f" (with {', '.join(others)})" if others else ""))
    for k, (group, _) in enumerate(known_circles):
        if k not in seen_groups:
            found.append(f"KNOWN_CIRCLES lists {', '.join(group)}, which no longer import each "
                         f"other in a circle: take the group out")
    return found


def _cycle(component: list[str], graph: dict[str, dict[str, int]]) -> list[str]:
    """A shortest way around the circle from the first module of ``component`` back to it."""
    members, start = set(component), component[0]
    parent: dict[str, str | None] = {start: None}
    queue = collections.deque([start])
    while queue:
        node = queue.popleft()
        for target in sorted(graph[node]):
            if target == start:
                path = [node]
                while parent[path[-1]] is not None:
                    path.append(parent[path[-1]])
                return path[::-1] + [start]
            if target in members and target not in parent:
                parent[target] = node
                queue.append(target)
    raise ValueError(f"{component} is not a circle")


def main() -> int:
    found = problems(ROOT)
    for line in found:
        print(line)
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main())
