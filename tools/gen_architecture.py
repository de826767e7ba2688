#!/usr/bin/env python3
"""Fills docs/architecture.md's example with the IR of one program at every stage.

Run from the project's root: ``python tools/gen_architecture.py``. The program is the heart of the
seeds' logistic regression: a prediction and its cross-entropy for a batch, with a weight update.
"""
from __future__ import annotations

import pathlib
import re
import sys

ROOT = pathlib.Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import numpy  # noqa: E402

import lowering as theano  # noqa: E402
import lowering.tensor as T  # noqa: E402

DOC = ROOT / "docs" / "architecture.md"
BEGIN, END = "<!-- example:begin -->", "<!-- example:end -->"
SOURCE = '''x = T.fmatrix("x")
y = T.fvector("y")
w = theano.shared(numpy.zeros(784, dtype="float32"), name="w")
p_1 = 1 / (1 + T.exp(-T.dot(x, w)))
xent = -y * T.log(p_1) - (1 - y) * T.log(1 - p_1)
cost = xent.mean()
step = theano.function([x, y], cost, updates=[(w, w - 0.1 * T.grad(cost, w))])'''

STAGES = [
    ("tensor", "As built by the front end: one tensor-dialect op per user-level operation, "
               "the gradient included."),
    ("optimized", "After canonicalize, cse, stabilize, specialize and fuse: the logarithms of "
                  "sigmoids became softplus, the weight update a gemv, the elementwise work "
                  "fused regions of scalar ops (with the reduction that consumes them)."),
    ("loops", "After bufferize and plan-memory: buffers, loop nests, run-time shape checks, "
              "BLAS calls, frees."),
    ("llvm", "After to-llvm and LLVM's O3 pipeline (the start of the function; the whole "
             "module also holds the entry point, the vector math functions and the thread "
             "runtime)."),
]


def stage_text(step, stage: str) -> str:
    text = step.ir(stage)
    if stage == "llvm":
        match = re.search(r"^define[^\n]*@function\(.*?^}", text, re.S | re.M)
        lines = (match.group(0) if match else text).splitlines()
        text = "\n".join(lines[:60] + (["  ..."] if len(lines) > 60 else []))
    return text


def render() -> str:
    namespace = {"theano": theano, "T": T, "numpy": numpy}
    exec(compile(SOURCE, "example.py", "exec"), namespace)
    step = namespace["step"]
    parts = [BEGIN, "", "```python", SOURCE, "```", ""]
    for stage, words in STAGES:
        parts += [f"### `{stage}`", "", words, "", "```mlir" if stage != "llvm" else "```llvm",
                  stage_text(step, stage), "```", ""]
    parts.append(END)
    return "\n".join(parts)


def main() -> int:
    doc = DOC.read_text()
    start, stop = doc.index(BEGIN), doc.index(END) + len(END)
    DOC.write_text(doc[:start] + render() + doc[stop:])
    return 0


if __name__ == "__main__":
    sys.exit(main())
