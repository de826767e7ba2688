"""lit configuration: ``lowering-opt`` tests checked with ``filecheck``, as in MLIR and xDSL.

Run with ``lit tests/lit -v`` (or through pytest: tests/test_lit.py). ``lowering-opt`` and
``filecheck`` are found next to the Python running lit, then on PATH.
"""
import os
import shutil
import sys
import tempfile

import lit.formats

config.name = "lowering-opt"
config.test_format = lit.formats.ShTest(execute_external=False)
config.suffixes = [".mlir"]
config.excludes = ["Inputs"]
config.test_source_root = os.path.dirname(__file__)
# Temporary files (%t) go outside the source tree.
config.test_exec_root = os.path.join(tempfile.gettempdir(), f"lowering-lit-{os.getuid()}")

bin_dir = os.path.dirname(sys.executable)
config.environment["PATH"] = os.pathsep.join([bin_dir, os.environ.get("PATH", "")])
# The Python path and cache directory of the caller, so a checkout tests its own code.
for name in ("PYTHONPATH", "LOWERING_CACHE_DIR"):
    if name in os.environ:
        config.environment[name] = os.environ[name]
for tool in ("lowering-opt", "filecheck"):
    if shutil.which(tool, path=config.environment["PATH"]) is None:
        lit_config.fatal(f"'{tool}' is not installed next to {sys.executable} nor on PATH; "
                         f"install the project with its test extras (pip install -e '.[test]')")
