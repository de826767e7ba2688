"""docs/control-flow.md shows the IR one ifelse has now, at the tensor and loops stages."""
import pathlib
import re

import lowering as theano
import lowering.tensor as T
from lowering.ifelse import ifelse

DOC = pathlib.Path(__file__).resolve().parent.parent / "docs" / "control-flow.md"


def documented(stage: str) -> str:
    match = re.search(rf"<!-- ifelse:{stage} -->\n```mlir\n(.*?)\n```", DOC.read_text(), re.S)
    assert match, f"docs/control-flow.md has no {stage} block"
    return match.group(1)


def test_the_documented_ir_is_what_function_builds():
    a, b = T.dscalars("a", "b")
    x, y = T.dvectors("x", "y")
    z = ifelse(T.lt(a, b), T.exp(x).sum(), y.mean())
    f = theano.function([a, b, x, y], z)
    assert documented("tensor") == f.ir("tensor")
    assert documented("loops") == f.ir("loops")
