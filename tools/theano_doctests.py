"""Run Theano 1.0's tutorial and ``library/tensor/basic`` documentation as doctests, with every
``import theano`` importing ``lowering``.

    python -m pip install sphinx six      # six: the pickling tutorial imports it
    python tools/theano_doctests.py /path/to/Theano/doc [--keep DIR]

Sphinx's doctest builder runs the ``>>>`` examples and the ``testcode``/``testoutput`` blocks of
``doc/tutorial/*.txt`` and ``doc/library/tensor/basic.txt`` in a scratch project whose
``conf.py`` makes ``theano.X`` the module ``lowering.X``, and prints the number of examples, the
failures per document and the summary. NumPy prints arrays as NumPy 1.13 did
(``legacy='1.13'``), as the documentation shows them.
"""
from __future__ import annotations

import argparse
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

CONF = '''
import importlib, importlib.abc, importlib.util, sys


class TheanoIsLowering(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """theano.X is the module lowering.X itself."""

    def find_spec(self, name, path=None, target=None):
        if name == "theano" or name.startswith("theano."):
            return importlib.util.spec_from_loader(name, self)

    def create_module(self, spec):
        return importlib.import_module("lowering" + spec.name[len("theano"):])

    def exec_module(self, module):
        pass


sys.meta_path.insert(0, TheanoIsLowering())
extensions = ["sphinx.ext.doctest"]
doctest_global_setup = "import numpy; numpy.set_printoptions(legacy='1.13')"
source_suffix = {".txt": "restructuredtext"}
master_doc = "tutorial/index"
'''

DOCUMENTS = ["tutorial", "library/tensor/basic.txt"]


def build_project(theano_doc: Path, where: Path) -> Path:
    """The scratch Sphinx project: the documents and the conf.py above."""
    source = where / "source"
    for item in DOCUMENTS:
        origin = theano_doc / item
        target = source / item
        target.parent.mkdir(parents=True, exist_ok=True)
        if origin.is_dir():
            shutil.copytree(origin, target)
        else:
            shutil.copy(origin, target)
    (source / "conf.py").write_text(CONF)
    return source


def run(theano_doc: Path, where: Path) -> str:
    """Sphinx's doctest report (``output.txt``) for the documents."""
    source = build_project(theano_doc, where)
    out = where / "out"
    # In the scratch folder: the pickling tutorial writes files where it runs.
    subprocess.run([sys.executable, "-m", "sphinx", "-b", "doctest", "-q", "-E", str(source),
                    str(out)], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False,
                   cwd=where)
    return (out / "output.txt").read_text()


def summary(report: str) -> str:
    """The failures per document and Sphinx's totals."""
    lines, document = [], None
    for line in report.splitlines():
        if line.startswith("Document: "):
            document = line[len("Document: "):]
        found = re.match(r"\*\*\*Test Failed\*\*\* (\d+) failures", line)
        if found:
            lines.append(f"{document}: {found.group(1)} failed")
    totals = report[report.index("Doctest summary"):] if "Doctest summary" in report else report
    return "\n".join(lines + [totals.strip()])


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("theano_doc", type=Path, help="Theano's doc/ folder")
    parser.add_argument("--keep", type=Path, help="build here and keep the full report")
    args = parser.parse_args(argv)
    if args.keep:
        args.keep.mkdir(parents=True, exist_ok=True)
        report = run(args.theano_doc, args.keep)
    else:
        with tempfile.TemporaryDirectory() as where:
            report = run(args.theano_doc, Path(where))
    print(summary(report))
    return 0


if __name__ == "__main__":
    sys.exit(main())
