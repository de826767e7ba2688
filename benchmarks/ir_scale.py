"""How the IR core scales: build, print, parse and verify a module of 10,000 tensor ops, and the
reference interpreter's time for one step of seed 002's logistic regression.

The module is one ``func.func`` whose body is a DAG of elementwise ops on ``tensor<?xf32>``
values: each op uses the previous result and, for binary ops, one earlier value, so use-lists are
long and names many. Each op has its own ``file:line`` location, as the front end's ops do.

Run alone: ``python benchmarks/ir_scale.py [--ops N] [--steps N]`` prints the figures as a
Markdown table (``benchmarks/run.py`` includes them in ``docs/performance.md``).

>>> module = build_module(20)
>>> sum(1 for _ in module.walk()) - 3  # all but module, func and return
20
>>> [f.name for f in measure_ir(20, repeats=1)][:2]
['build', 'print (pretty form)']
"""
from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from dataclasses import dataclass

import numpy as np

if __package__ in (None, ""):  # run as a script: make the ``benchmarks`` package importable
    sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

# Unary and binary elementwise ops, cycled through in this order.
_OPS = ("add", "mul", "exp", "sub", "tanh", "div", "neg", "maximum")


@dataclass
class Figure:
    """One figure: a name, its best time in seconds, and what it covers."""

    name: str
    seconds: float
    note: str = ""


def build_module(num_ops: int):
    """A ``builtin.module`` with one function of ``num_ops`` elementwise tensor ops."""
    import lowering.dialects  # noqa: F401  (registers the ops)
    from lowering.dialects.builtin import FuncOp, ModuleOp, ReturnOp
    from lowering.dialects.tensor import ELEMENTWISE_OPS
    from lowering.ir.location import Location
    from lowering.ir.types import F32, TensorType

    t = TensorType((None,), F32)
    func = FuncOp.build("chain", [t, t], [t], location=Location("model.py", 1, 1))
    block = func.body.block
    values = list(func.args)
    for i in range(num_ops):
        cls = ELEMENTWISE_OPS[_OPS[i % len(_OPS)]]
        operands = [values[-1]]
        if len(cls._operand_fields) == 2:
            operands.append(values[(i * 7919) % len(values)])  # a far earlier value: a DAG
        op = cls.build(*operands, location=Location("model.py", i + 2, 5))
        block.append(op)
        values.append(op.result)
    block.append(ReturnOp.create([values[-1]], location=Location("model.py", num_ops + 2, 5)))
    return ModuleOp.build([func], location=Location("model.py", 1, 1))


def _best(action, repeats: int):
    """The fastest of ``repeats`` runs of ``action()`` and the last run's result."""
    best, out = float("inf"), None
    for _ in range(repeats):
        start = time.perf_counter()
        out = action()
        best = min(best, time.perf_counter() - start)
    return best, out


def measure_ir(num_ops: int = 10_000, repeats: int = 3) -> list[Figure]:
    """Build, print (both forms), parse (both forms) and verify a ``num_ops``-op module; each
    printed text must parse back and print identically (else the figure says so)."""
    from lowering.ir.parser import parse_module
    from lowering.ir.printer import print_op
    from lowering.ir.verifier import verify

    figures = []
    build_s, module = _best(lambda: build_module(num_ops), repeats)
    figures.append(Figure("build", build_s, f"{num_ops:,} ops created and appended"))
    for form, generic in (("pretty", False), ("generic", True)):
        print_s, text = _best(lambda: print_op(module, generic=generic), repeats)
        figures.append(Figure(f"print ({form} form)", print_s,
                              f"{len(text) / 1e6:.2f} MB of text"))
        parse_s, parsed = _best(lambda: parse_module(text), repeats)
        same = print_op(parsed, generic=generic) == text
        figures.append(Figure(f"parse ({form} form)", parse_s,
                              "prints back identically" if same else
                              "MISMATCH: the parsed module prints differently"))
    verify_s, _ = _best(lambda: verify(module), repeats)
    figures.append(Figure("verify", verify_s, "structure, each op's rules, dominance"))
    return figures


def measure_interpreter_step(steps: int = 20, n: int = 400, features: int = 784) -> Figure:
    """The median time of one ``train(x, y)`` step of the seed's logistic regression with
    ``mode="INTERP"`` (the first call excluded)."""
    from benchmarks.workloads.libs import lowering_modules
    from benchmarks.workloads.logreg import build_seed_program, seed_data
    theano, _ = lowering_modules()
    (x, y), w0 = seed_data(n, features)
    program = build_seed_program(theano, theano.tensor, w0)
    train = theano.function(program["inputs"], program["outputs"], updates=program["updates"],
                            mode="INTERP", name="train")
    times = []
    # INTERP runs the graph as written, without stabilization: in float32 the cross-entropy
    # overflows on this data and NumPy warns; the work per step is the same.
    with np.errstate(all="ignore"):
        train(x, y)
        for _ in range(steps):
            start = time.perf_counter()
            train(x, y)
            times.append(time.perf_counter() - start)
    return Figure("interpreter: one logistic-regression step", statistics.median(times),
                  f"mode=INTERP, N={n}, {features} features, float32; median of {steps} steps "
                  f"(fastest {min(times) * 1e3:.2f} ms)")


def measure(params: dict) -> list[Figure]:
    """Every figure of this module for ``params`` (``ops``, ``repeats``, ``steps``)."""
    return (measure_ir(params["ops"], params["repeats"])
            + [measure_interpreter_step(params["steps"])])


PARAMS = {"ops": 10_000, "repeats": 3, "steps": 50}
QUICK = {"repeats": 1, "steps": 10}


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--ops", type=int, default=PARAMS["ops"])
    parser.add_argument("--steps", type=int, default=PARAMS["steps"])
    parser.add_argument("--repeats", type=int, default=PARAMS["repeats"])
    args = parser.parse_args(argv)
    from benchmarks.report import figures_table
    print(figures_table(measure({"ops": args.ops, "repeats": args.repeats,
                                 "steps": args.steps})))


if __name__ == "__main__":
    main()
