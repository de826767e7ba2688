"""Printing graphs as Theano does: ``debugprint`` (one line per variable), ``pp`` (an infix
expression) and ``pydotprint`` (a Graphviz picture, ``lowering.printing_dot``).

``debugprint`` writes each variable of a graph with an identifier, indented under the variable
that uses it; a variable met again prints only its identifier. For a compiled function it prints
the final graph, each node followed by its position in ``f.maker.fgraph.toposort()``::

    Elemwise{exp,no_inplace} [id A] ''   0
     |x [id B]

>>> import lowering.tensor as T
>>> x = T.vector("x")
>>> debugprint(T.exp(x))
Elemwise{exp,no_inplace} [id A] ''   
 |x [id B]
>>> pp(T.exp(x) * x)
'(exp(x) * x)'

Nodes print as the front end presents IR ops (Theano's op classes, ``lowering.frontend.theano_ops``)
and variables as Theano prints them (``x``, ``<TensorType(float32, vector)>``).
"""
from __future__ import annotations

import io
import sys

import lowering.frontend  # noqa: F401  (installs the Theano presentation of graphs)
from lowering.compile.fgraph import Apply, FunctionGraph, GraphVariable, GraphView
from lowering.compile.function import Function
from lowering.compile.io import graph_value
from lowering.frontend.print_op import Print  # noqa: F401
from lowering.frontend.types import TensorType
from lowering.printing_dot import GraphvizNotFoundError, graph_to_dot, pydotprint  # noqa: F401
from lowering.printing_graph import results_to_print

__all__ = ["debugprint", "pp", "pprint", "char_from_number", "pydotprint", "graph_to_dot",
           "destroy_map", "view_map", "Print"]


# ---------------------------------------------------------------------------------------------
# debugprint


def char_from_number(number: int) -> str:
    """Theano's identifiers: ``number`` in base 26 with digits ``A``-``Z``.

    >>> [char_from_number(n) for n in (0, 1, 25, 26, 27)]
    ['A', 'B', 'Z', 'BA', 'BB']
    """
    if number == 0:
        return "A"
    text = ""
    while number:
        number, digit = divmod(number, 26)
        text = chr(ord("A") + digit) + text
    return text


def debugprint(obj, depth: int = -1, print_type: bool = False, file=None, ids: str = "CHAR",
               stop_on_name: bool = False, print_destroy_map: bool = False,
               print_view_map: bool = False):
    """Print the graph of ``obj`` (a variable, a list of variables, a compiled Function, a
    FunctionGraph or an Apply node) in Theano's format.

    ``depth`` limits how deep lines go (-1: no limit); ``print_type`` adds each variable's type;
    ``ids`` is ``"CHAR"`` (``[id A]``), ``"int"`` (``[id 0]``), ``"id"`` (Python ids) or ``""``;
    ``stop_on_name`` does not print below named variables. ``file`` is a file-like object (the
    default is standard output; it is returned), or ``"str"`` to get the text back.

    Nodes whose results the compiled code writes into an operand show it in the op's text
    (``Elemwise{add}[(0, 0)]``, ``CGemv{inplace}``); ``print_destroy_map`` also prints Theano's
    ``d={result: [operand]}`` after the name, and ``print_view_map`` ``v={0: [0]}`` for results
    that are views of an operand (dimshuffle, basic indexing, reshape).

    >>> import lowering.tensor as T
    >>> m = T.dmatrix("m")
    >>> debugprint(m.T, print_view_map=True)
    InplaceDimShuffle{1,0} [id A] ''  v={0: [0]} 
     |m [id B]
    """
    results, order = results_to_print(obj)
    out = io.StringIO() if file == "str" else (sys.stdout if file is None else file)
    done: dict = {}
    maps = (print_destroy_map, print_view_map)
    for r in results:
        _print_variable(r, depth, done, print_type, out, order, ids, stop_on_name, maps)
    if file == "str":
        return out.getvalue()
    if file is None:
        out.flush()
        return None
    return file


def destroy_map(node) -> dict[int, list[int]]:
    """Theano's ``destroy_map`` of a node: ``{result: [operand]}`` for each result the compiled
    code writes into an operand's memory."""
    pattern = getattr(node.op, "inplace_pattern", None) or {}
    return {result: [operand] for result, operand in sorted(pattern.items())}


def view_map(node) -> dict[int, list[int]]:
    """Theano's ``view_map`` of a node: ``{0: [0]}`` when its result is a view of its first
    operand (as ``bufferize`` makes dimshuffles, basic indexing and reshapes)."""
    from lowering.compile.profile.memory import VIEW_OPS
    ir_op = getattr(node, "ir_op", None)
    return {0: [0]} if ir_op is not None and ir_op.name in VIEW_OPS else {}


def _print_variable(root: GraphVariable, depth, done, print_type, out, order, ids, stop_on_name,
                    maps=(False, False)):
    """Theano's recursive debugprint, with an explicit stack (graphs may be very deep)."""
    order_index = {node: i for i, node in enumerate(order)}

    def id_of(key) -> str:
        if key in done:
            return done[key]
        if ids == "CHAR":
            text = f"[id {char_from_number(len(done))}]"
        elif ids == "int":
            text = f"[id {len(done)}]"
        elif ids == "id":
            text = f"[id {id(key)}]"
        else:
            text = ""
        done[key] = text
        return text

    stack = [(root, "", "", depth)]
    while stack:
        r, prefix, prefix_child, level = stack.pop()
        if level == 0:
            continue
        type_str = f" <{_theano_type(r)}>" if print_type else ""
        node = r.owner
        if node is None:
            out.write(f"{prefix}{r} {id_of(r)}{type_str}\n")
            continue
        already = node in done
        idx = "" if len(node.outputs) == 1 else f".{node.outputs.index(r)}"
        position = str(order_index[node]) if order and node in order_index else ""
        destroyed = destroy_map(node) if maps[0] else {}
        viewed = view_map(node) if maps[1] else {}
        d = f"d={destroyed}" if destroyed else ""
        v = f"v={viewed}" if viewed else ""
        out.write(f"{prefix}{node.op}{idx} {id_of(node)}{type_str} '{r.name or ''}' {d} {v} "
                  f"{position}\n")
        if already or (stop_on_name and r.name is not None):
            continue
        children = []
        for i, child in enumerate(node.inputs):
            last = i == len(node.inputs) - 1
            children.append((child, prefix_child + " |",
                             prefix_child + ("  " if last else " |"), level - 1))
        stack.extend(reversed(children))


def _theano_type(r: GraphVariable) -> str:
    try:
        return str(TensorType.from_ir(r.type))
    except TypeError:
        return str(r.type)


# ---------------------------------------------------------------------------------------------
# pp: an infix pretty printer

# Infix operators (Theano's OperatorPrinter); every application is parenthesized, as in Theano.
_OPERATORS = {
    "tensor.add": "+", "tensor.sub": "-", "tensor.mul": "*", "tensor.div": "/",
    "tensor.floordiv": "//", "tensor.mod": "%", "tensor.pow": "**", "tensor.neg": "-",
    "tensor.lt": "<", "tensor.gt": ">", "tensor.le": "<=", "tensor.ge": ">=",
    "tensor.eq": "==", "tensor.ne": "!=", "tensor.and": "&", "tensor.or": "|",
    "tensor.xor": "^", "tensor.not": "~", "tensor.dot": "\\dot",
}
# Ops printed as ``name(args)`` under Theano's name for them.
_FUNCTION_NAMES = {"tensor.reciprocal": "inv", "tensor.select": "switch"}


def pp(variable) -> str:
    """``variable``'s graph as one infix expression, like Theano's ``theano.printing.pp``.

    Arithmetic and comparisons print as parenthesized operators, elementwise functions as
    ``exp(x)``, dot products as ``(x \\dot w)``, transposes as ``x.T``; other ops as their Theano
    name applied to their inputs.
    """
    if isinstance(variable, (Function, FunctionGraph)):
        raise TypeError("pp prints one variable's expression; use debugprint for a function")
    var = variable if isinstance(variable, GraphVariable) else GraphView().variable(
        graph_value(variable, "pp()"))
    return _pp(var)


pprint = pp


def _pp(var: GraphVariable) -> str:
    memo: dict[GraphVariable, str] = {}
    stack = [(var, False)]
    while stack:  # post-order, so deep graphs need no recursion
        r, ready = stack.pop()
        if r in memo:
            continue
        node = r.owner
        if node is None:
            memo[r] = str(r)
            continue
        if not ready:
            stack.append((r, True))
            stack.extend((i, False) for i in reversed(node.inputs) if i not in memo)
            continue
        memo[r] = _pp_node(r, node, [memo[i] for i in node.inputs])
    return memo[var]


def _pp_node(r: GraphVariable, node: Apply, args: list[str]) -> str:
    name = node.ir_op.name
    if name in _OPERATORS and len(args) in (1, 2):
        symbol = _OPERATORS[name]
        return f"({symbol}{args[0]})" if len(args) == 1 else f"({args[0]} {symbol} {args[1]})"
    if name == "tensor.dimshuffle":
        return _pp_dimshuffle(tuple(node.ir_op.attributes["pattern"].value), node, args[0])
    if name == "tensor.abs":
        return f"|{args[0]}|"
    if name in ("tensor.subtensor", "tensor.advanced_subtensor"):
        return _pp_subtensor(node.ir_op, args)
    if name in _FUNCTION_NAMES:
        return f"{_FUNCTION_NAMES[name]}({', '.join(args)})"
    if _is_elementwise_function(node):
        return f"{name.split('.', 1)[1]}({', '.join(args)})"
    suffix = "" if len(node.outputs) == 1 else f".{node.outputs.index(r)}"
    return f"{node.op}{suffix}({', '.join(args)})"


def _pp_dimshuffle(pattern: tuple, node: Apply, arg: str) -> str:
    """Theano's DimShufflePrinter: leading new axes are not shown, the identity shows the input,
    a full reversal prints ``x.T``."""
    while pattern and pattern[0] == -1:
        pattern = pattern[1:]
    rank = node.inputs[0].type.rank
    if list(pattern) == list(range(rank)):
        return arg
    if list(pattern) == list(reversed(range(rank))):
        return f"{arg}.T"
    shown = ", ".join("x" if p == -1 else str(p) for p in pattern)
    return f"DimShuffle{{{shown}}}({arg})"


def _pp_subtensor(op, args: list[str]) -> str:
    """Theano's SubtensorPrinter: ``x[1:3]``, ``x[i, ::2]``; index arrays print as their
    expressions (``p[arange(n), y]``)."""
    from lowering.dialects.tensor.indexing import DYN, Index, Slice
    dynamic = iter(args[1:])

    def part(p) -> str:
        return next(dynamic) if p is DYN else ("" if p is None else str(p))

    texts = []
    for entry in op.entries:
        if isinstance(entry, Index):
            texts.append(part(entry.value))
        elif isinstance(entry, Slice):
            start, stop, step = (part(p) for p in entry.parts)
            start = "" if start == "0" else start
            texts.append(f"{start}:{stop}" + ("" if entry.parts[2] is None else f":{step}"))
        else:  # an index array
            texts.append(next(dynamic))
    return f"{args[0]}[{', '.join(texts)}]"


def _is_elementwise_function(node: Apply) -> bool:
    from lowering.dialects.tensor.elementwise import ELEMENTWISE_OPS
    short = node.ir_op.name.split(".", 1)[1]
    return node.ir_op.name.startswith("tensor.") and short in ELEMENTWISE_OPS \
        and short != "cast"
