"""``pydotprint``: a graph as Graphviz DOT, rendered to SVG, PNG or PDF by Graphviz's ``dot``.

The drawing follows Theano's ``pydotprint``:

- **Apply nodes** are boxes labelled with Theano's op text (``Elemwise{Composite{...}}``,
  ``CGemv{inplace}``, ``Elemwise{add}[(0, 0)]`` for a result written into operand 0), filled by
  op class: ``Elemwise`` pink, ``Subtensor`` purple, ``Alloc`` orange, ``Shape`` brown,
  ``GpuFromHost``/``HostFromGpu`` red;
- **variables** are ellipses labelled with their name (and type) or a constant's text: inputs
  green, shared variables yellow-green, constants light green, outputs light blue, unused
  results grey;
- **edges** go from each input variable to the node that reads it and from a node to its
  outputs, labelled with the value's type (and the operand's position when there are several);
  an edge into an operand that the node overwrites (in place) is red, one into an operand the
  node's result is a view of is blue;
- ``compact=True`` (the default) draws intermediate unnamed variables as edges between nodes.

``graph_to_dot(obj)`` gives the DOT text; ``pydotprint(obj, outfile, format)`` writes it, or,
for any other format than ``"dot"``, has ``dot`` render it (Graphviz must be installed).

>>> import lowering.tensor as T
>>> x = T.dvector("x")
>>> print(graph_to_dot(T.exp(x)))
digraph G {
  graph [bgcolor="#FFFFFF"];
  "apply0" [label="Elemwise{exp,no_inplace}", shape=box, style=filled, fillcolor="#FFAABB"];
  "var0" [label="x TensorType(float64, vector)", shape=ellipse, style=filled, fillcolor="green"];
  "var0" -> "apply0" [label="TensorType(float64, vector)"];
  "var1" [label="TensorType(float64, vector)", shape=ellipse, style=filled, fillcolor="lightblue"];
  "apply0" -> "var1" [label="TensorType(float64, vector)"];
}
"""
from __future__ import annotations

import os
import shutil
import subprocess

from lowering.compile.profile.memory import VIEW_OPS
from lowering.printing_graph import results_to_print

__all__ = ["pydotprint", "graph_to_dot", "GraphvizNotFoundError", "DEFAULT_COLORS"]

# Fill colors of Apply nodes by op class name (Theano's colorCodes), and of variables.
DEFAULT_COLORS = {"GpuFromHost": "red", "HostFromGpu": "red", "Shape": "brown",
                  "Shape_i": "brown", "Elemwise": "#FFAABB", "GpuElemwise": "#FFAABB",
                  "FusedReduce": "#FFAABB", "GpuFusedReduce": "#FFAABB",
                  "Subtensor": "#FFAAFF", "Alloc": "#FFAA22", "Output": "lightblue",
                  "Input": "green", "Shared": "YellowGreen", "Constant": "SpringGreen",
                  "Unused": "grey"}

_RENDERED = ("svg", "png", "pdf", "jpg", "jpeg", "gif", "ps", "eps", "plain", "json")


class GraphvizNotFoundError(RuntimeError):
    """Rendering was asked for, and Graphviz's ``dot`` program is not installed."""


def _quote(text: str) -> str:
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n") + '"'


def _attributes(attrs: dict) -> str:
    parts = []
    for key, value in attrs.items():
        if key in ("shape", "style"):
            parts.append(f"{key}={value}")
        else:
            parts.append(f"{key}={_quote(str(value))}")
    return ", ".join(parts)


def _shorten(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[:limit - 3] + "..."


def _type_text(var) -> str:
    from lowering.frontend.types import TensorType
    try:
        return str(TensorType.from_ir(var.type))
    except TypeError:
        return str(var.type)


def _collect(results, order) -> list:
    """Every Apply node above ``results``, in the order they compute (``order`` first, when a
    compiled function gives it; else inputs before users)."""
    if order:
        return list(order)
    found, seen = [], set()
    for root in results:
        stack = [(root.owner, False)] if root.owner is not None else []
        while stack:
            node, ready = stack.pop()
            if ready:
                if id(node) not in seen:
                    seen.add(id(node))
                    found.append(node)
                continue
            if id(node) in seen:
                continue
            stack.append((node, True))
            for var in reversed(node.inputs):
                if var.owner is not None and id(var.owner) not in seen:
                    stack.append((var.owner, False))
    return found


def _shared_inputs(obj) -> set[int]:
    """The variables of ``obj``'s graph that are shared variables: a compiled function reads
    them as its arguments after the explicit inputs; in a user's graph they are known as such."""
    from lowering.compile.function import Function
    if isinstance(obj, Function):
        inputs = obj.maker.fgraph.inputs
        return {id(v) for v in inputs[len(obj.maker.inputs):]}
    return set()


def _is_shared(var, shared: set[int]) -> bool:
    from lowering.compile.shared_storage import shared_container
    if id(var) in shared:
        return True
    value = getattr(var, "value", None)
    return value is not None and shared_container(value) is not None


def graph_to_dot(obj, compact: bool = True, with_ids: bool = False, high_contrast: bool = True,
                 colorCodes: dict | None = None, max_label_size: int = 70,  # noqa: N803
                 var_with_name_simple: bool = False) -> str:
    """The DOT text of the graph of ``obj``: a compiled Function (its final graph), a
    FunctionGraph, an Apply node, a variable or a list of variables. Options as ``pydotprint``."""
    colors = {**DEFAULT_COLORS, **(colorCodes or {})}
    results, order = results_to_print(obj)
    nodes = _collect(results, order)
    shared = _shared_inputs(obj)
    outputs = list(results)
    lines = ["digraph G {", '  graph [bgcolor="#FFFFFF"];']
    names: dict[int, str] = {}      # Apply node -> its DOT id
    var_names: dict[int, str] = {}  # variable -> its DOT id
    drawn: set[int] = set()

    users: dict[int, int] = {}
    for node in nodes:
        for var in node.inputs:
            users[id(var)] = users.get(id(var), 0) + 1

    def unused(var) -> bool:
        return users.get(id(var), 0) == 0

    def fill(color: str | None) -> dict:
        if color is None:
            return {}
        return {"style": "filled", "fillcolor": color} if high_contrast else {"color": color}

    def var_label(var) -> str:
        name = var.name
        if name:
            return name if var_with_name_simple else f"{name} {_type_text(var)}"
        if var.owner is None:
            text = str(var)
            return text if text.startswith("TensorConstant") else _type_text(var)
        return _type_text(var)

    def var_node(var) -> str:
        if id(var) not in var_names:
            var_names[id(var)] = f"var{len(var_names)}"
        name = var_names[id(var)]
        if id(var) not in drawn:
            drawn.add(id(var))
            if any(var is o for o in outputs):
                color = colors["Output"]
            elif var.owner is not None:
                color = colors["Unused"] if unused(var) else None
            elif str(var).startswith("TensorConstant"):
                color = colors["Constant"]
            else:
                color = colors["Shared"] if _is_shared(var, shared) else colors["Input"]
            attrs = {"label": _shorten(var_label(var), max_label_size), "shape": "ellipse",
                     **fill(color)}
            lines.append(f"  {_quote(name)} [{_attributes(attrs)}];")
        return name

    def edge(source: str, target: str, label: str, color: str | None = None) -> None:
        attrs = {"label": _shorten(label, max_label_size)}
        if color:
            attrs["color"] = color
        lines.append(f"  {_quote(source)} -> {_quote(target)} [{_attributes(attrs)}];")

    labels: dict[str, int] = {}
    for node in nodes:
        text = str(node.op)
        labels[text] = labels.get(text, 0) + 1
    for position, node in enumerate(nodes):
        apply_name = f"apply{position}"
        text = str(node.op)
        if with_ids or labels[text] > 1:
            text = f"{text} id={position}"
        op_class = type(node.op).__name__ if not isinstance(node.op, str) else \
            node.op.split("<")[0]
        attrs = {"label": _shorten(text, max_label_size), "shape": "box",
                 **fill(colors.get(op_class))}
        lines.append(f"  {_quote(apply_name)} [{_attributes(attrs)}];")
        names[id(node)] = apply_name
        destroyed = set(getattr(node.op, "inplace_pattern", {}).values())
        ir_op = getattr(node, "ir_op", None)
        viewed = {0} if ir_op is not None and ir_op.name in VIEW_OPS else set()
        several = len(node.inputs) > 1
        for k, var in enumerate(node.inputs):
            label = f"{k} {_type_text(var)}" if several else _type_text(var)
            color = "red" if k in destroyed else ("blue" if k in viewed else None)
            if var.owner is None or var.name or not compact or any(var is o for o in outputs):
                edge(var_node(var), apply_name, label, color)
            else:
                edge(names[id(var.owner)], apply_name, label, color)
        several = len(node.outputs) > 1
        for k, var in enumerate(node.outputs):
            label = f"{k} {_type_text(var)}" if several else _type_text(var)
            if any(var is o for o in outputs) or unused(var) or var.name or not compact:
                edge(apply_name, var_node(var), label)
    for var in outputs:  # outputs that are inputs or constants themselves
        if var.owner is None:
            var_node(var)
    lines.append("}")
    return "\n".join(lines)


def pydotprint(fct, outfile: str | None = None, compact: bool = True, format: str = "png",
               with_ids: bool = False, high_contrast: bool = True, cond_highlight=None,
               colorCodes: dict | None = None, max_label_size: int = 70,  # noqa: N803
               scan_graphs: bool = False, var_with_name_simple: bool = False,
               print_output_file: bool = True, return_image: bool = False):
    """Write the graph of ``fct`` (a compiled Function, a FunctionGraph, an Apply, a variable or
    a list of variables) as a picture, like Theano's ``theano.printing.pydotprint``.

    ``format="dot"`` writes the DOT text (no Graphviz needed); ``"svg"``, ``"png"``, ``"pdf"``
    ... have Graphviz's ``dot`` render it. ``outfile`` defaults to
    ``lowering.pydotprint.<device>.<format>`` in the current directory. ``return_image=True``
    returns the file's bytes instead of writing it. ``compact`` draws unnamed intermediate
    variables as edges; ``with_ids`` adds each node's position to its label; ``colorCodes``
    changes fill colors by op class name; ``max_label_size`` shortens long labels.
    ``cond_highlight`` and ``scan_graphs`` are accepted for Theano compatibility: there are no
    IfElse or Scan ops to highlight.
    """
    from lowering.config import config
    format = format.lower()
    text = graph_to_dot(fct, compact=compact, with_ids=with_ids, high_contrast=high_contrast,
                        colorCodes=colorCodes, max_label_size=max_label_size,
                        var_with_name_simple=var_with_name_simple) + "\n"
    if format in ("dot", "gv", "raw"):
        image = text.encode("utf-8")
    elif format in _RENDERED:
        image = render(text, format)
    else:
        raise ValueError(f"pydotprint: unknown format {format!r}; use 'dot' (DOT text) or one "
                         f"of {', '.join(_RENDERED)} (rendered by Graphviz)")
    if return_image:
        return image
    if outfile is None:
        outfile = os.path.abspath(f"lowering.pydotprint.{config.device}.{format}")
    with open(outfile, "wb") as out:
        out.write(image)
    if print_output_file:
        print("The output file is available at", outfile)
    return None


def render(dot_text: str, format: str) -> bytes:
    """``dot_text`` rendered by Graphviz's ``dot`` to ``format`` (``svg``, ``png``, ...).

    A missing ``dot`` raises ``GraphvizNotFoundError`` saying how to get it.
    """
    program = shutil.which("dot")
    if program is None:
        raise GraphvizNotFoundError(
            f"pydotprint(format={format!r}) needs Graphviz's 'dot' program to render the graph, "
            f"and it is not on PATH. Install Graphviz (Debian/Ubuntu: apt-get install graphviz; "
            f"macOS: brew install graphviz; conda: conda install graphviz), or pass "
            f"format='dot' to write the DOT text, which any Graphviz viewer opens")
    run = subprocess.run([program, f"-T{format}"], input=dot_text.encode("utf-8"),
                         capture_output=True, timeout=120)
    if run.returncode != 0:
        raise RuntimeError(f"Graphviz's dot failed to render the graph as {format}: "
                           f"{run.stderr.decode(errors='replace').strip()}")
    return run.stdout
