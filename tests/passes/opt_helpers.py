"""Helpers for the graph-optimization tests: one-function modules from IR text, passes run on a
copy, and the interpreter's results before and after.

>>> module = module_from('''
... func.func @f(%x: tensor<?xf64>) -> tensor<?xf64> {
...   %n = "tensor.neg"(%x) : (tensor<?xf64>) -> tensor<?xf64>
...   %m = "tensor.neg"(%n) : (tensor<?xf64>) -> tensor<?xf64>
...   func.return %m : tensor<?xf64>
... }''')
>>> after = optimized(module, "canonicalize")
>>> op_names(module), op_names(after)
(['tensor.neg', 'tensor.neg'], [])
"""
from __future__ import annotations

import numpy as np

import lowering.dialects  # noqa: F401  (registers every op and interpreter rule)
import lowering.passes  # noqa: F401  (registers every pass)
from lowering.dialects.builtin.interpret import run_function
from lowering.ir.pass_manager import PassManager
from lowering.ir.parser import parse_module
from lowering.ir.printer import print_op
from lowering.ir.verifier import verify


def module_from(text: str):
    """A verified module parsed from IR text."""
    module = parse_module(text)
    verify(module)
    return module


def optimized(module, pipeline: str):
    """A copy of ``module`` after ``pipeline`` (verified after each pass), checked to print and
    parse back."""
    copy = module.clone()
    PassManager(pipeline).run(copy)
    text = print_op(copy)
    assert print_op(parse_module(text)) == text
    return copy


def op_names(module, function: int = 0) -> list[str]:
    """The names of the ops of a function's body, without constants and the return."""
    block = module.functions[function].body.block
    return [op.name for op in block.ops if op.name not in ("tensor.constant", "func.return")]


def ops_named(module, name: str, function: int = 0) -> list:
    return [op for op in module.functions[function].body.block.ops if op.name == name]


def run(module, *arrays) -> list:
    """The results of the module's first function on ``arrays``."""
    with np.errstate(all="ignore"):
        return [np.asarray(r) for r in run_function(module.functions[0], list(arrays))]


def assert_same_results(before, after, *arrays, rtol: float = 1e-12) -> list:
    """Both modules give the same results (NaN where the other has NaN); returns ``after``'s."""
    expected, got = run(before, *arrays), run(after, *arrays)
    assert len(expected) == len(got)
    for index, (e, g) in enumerate(zip(expected, got)):
        assert e.dtype == g.dtype and e.shape == g.shape, (index, e.dtype, g.dtype, e.shape,
                                                           g.shape)
        np.testing.assert_allclose(g, e, rtol=rtol, atol=rtol, equal_nan=True,
                                   err_msg=f"result #{index}")
    return got


def check_pass(text: str, pipeline: str, *arrays, rtol: float = 1e-12):
    """Parse ``text``, run ``pipeline`` on a copy, check the results agree on ``arrays``;
    returns the optimized module."""
    module = module_from(text)
    after = optimized(module, pipeline)
    assert_same_results(module, after, *arrays, rtol=rtol)
    return after


def unary_function(body: str, type_: str = "tensor<?xf64>", result: str | None = None) -> str:
    """IR text of ``func.func @f(%x: type) -> result`` with ``body`` defining ``%r``."""
    result = result or type_
    return (f"func.func @f(%x: {type_}) -> {result} {{\n{body}\n"
            f"  func.return %r : {result}\n}}")
