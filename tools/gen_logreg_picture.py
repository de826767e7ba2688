#!/usr/bin/env python3
"""Draws the compiled training step of the seed's logistic regression (``examples/logreg.py``)
with ``printing.pydotprint``: ``docs/images/logreg_train.dot`` (the Graphviz text) and, when
Graphviz's ``dot`` is installed, ``docs/images/logreg_train.svg`` (the picture
``docs/compatibility.md`` shows).

Run from the project's root: ``python tools/gen_logreg_picture.py`` (``--check`` exits 1 if the
DOT text is stale; the test suite runs that check).
"""
from __future__ import annotations

import importlib.util
import pathlib
import shutil
import sys

ROOT = pathlib.Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

IMAGES = ROOT / "docs" / "images"
DOT_FILE = IMAGES / "logreg_train.dot"
SVG_FILE = IMAGES / "logreg_train.svg"


def training_step():
    """The ``train`` function of ``examples/logreg.py`` (compiled as the example compiles it)."""
    spec = importlib.util.spec_from_file_location("logreg_example", ROOT / "examples" / "logreg.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.train


def dot_text() -> str:
    from lowering.printing import graph_to_dot
    return graph_to_dot(training_step()) + "\n"


def main(argv: list[str]) -> int:
    text = dot_text()
    if "--check" in argv:
        if not DOT_FILE.exists() or DOT_FILE.read_text() != text:
            print(f"{DOT_FILE.relative_to(ROOT)} is stale: run python tools/gen_logreg_picture.py")
            return 1
        return 0
    IMAGES.mkdir(parents=True, exist_ok=True)
    DOT_FILE.write_text(text)
    if shutil.which("dot") is None:
        print("Graphviz's dot is not installed: wrote the DOT text only")
        return 0
    from lowering.printing import pydotprint
    pydotprint(training_step(), str(SVG_FILE), format="svg", print_output_file=False)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
