"""The package's imports point down the layers and close no circle (``tools/check_layers.py``),
and the check finds an upward import or a circle planted in a copy of the package."""
import doctest
import importlib.util
import pathlib
import re
import shutil

import pytest

ROOT = pathlib.Path(__file__).resolve().parent.parent
_spec = importlib.util.spec_from_file_location("check_layers", ROOT / "tools" / "check_layers.py")
check_layers = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(check_layers)


def test_imports_point_down_and_close_no_circle():
    assert check_layers.problems(ROOT) == []


def test_the_checks_examples():
    assert doctest.testmod(check_layers).failed == 0


@pytest.fixture
def tree(tmp_path):
    """A copy of the package's sources to plant imports in."""
    shutil.copytree(ROOT / "lowering", tmp_path / "lowering",
                    ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
    return tmp_path


def plant(tree, relative: str, code: str) -> int:
    """Append ``code`` to a module of the copy; the line it starts on."""
    path = tree / relative
    text = path.read_text()
    path.write_text(text + "\n\n" + code)
    return text.count("\n") + 3


def test_an_upward_import_inside_a_function_is_named(tree):
    line = plant(tree, "lowering/llvm/vecmath/emit.py", "def planted():\n    from ..cpu import context\n")
    assert check_layers.problems(tree) == [
        f"lowering/llvm/vecmath/emit.py:{line + 1}: lowering.llvm.vecmath.emit (llvm/vecmath) "
        f"imports lowering.llvm.cpu.context (llvm/cpu), a layer above it"]


def test_an_upward_import_across_folders_is_named(tree):
    line = plant(tree, "lowering/ir/types.py", "import lowering.compile.cpu.call_protocol\n")
    assert check_layers.problems(tree) == [
        f"lowering/ir/types.py:{line}: lowering.ir.types (ir) imports "
        f"lowering.compile.cpu.call_protocol (compile/cpu), a layer above it"]


def test_a_circle_is_named(tree):
    plant(tree, "lowering/passes/cse.py", "from lowering.passes import dce\n")
    plant(tree, "lowering/passes/dce.py", "def planted():\n    from . import cse\n")
    assert check_layers.problems(tree) == [
        "import circle: lowering.passes.cse -> lowering.passes.dce -> lowering.passes.cse"]


def test_a_circle_leaving_its_known_group_is_named(tree):
    # The tensor dialect's gradient modules are a known circle; elementwise imports typing.
    plant(tree, "lowering/dialects/tensor/typing.py",
          "def planted():\n    from .gradutil import unbroadcast\n")
    assert check_layers.problems(tree) == [
        "import circle: lowering.dialects.tensor.elementwise -> lowering.dialects.tensor.gradutil "
        "-> lowering.dialects.tensor.elementwise (with lowering.dialects.tensor.indexing, "
        "lowering.dialects.tensor.reduction, lowering.dialects.tensor.shape_ops, "
        "lowering.dialects.tensor.typing)"]


def test_a_known_circle_that_is_gone_must_be_taken_out(tree):
    known = check_layers.KNOWN_CIRCLES + ((("lowering.passes.cse", "lowering.passes.dce"), ""),)
    assert check_layers.problems(tree, known_circles=known) == [
        "KNOWN_CIRCLES lists lowering.passes.cse, lowering.passes.dce, which no longer import "
        "each other in a circle: take the group out"]


def test_every_folder_of_the_package_has_a_row_in_the_layers_table():
    doc = (ROOT / "docs" / "architecture.md").read_text()
    section = doc[doc.index("\n## Layers"):doc.index("\n## ", doc.index("\n## Layers") + 1)]
    rows = {folder for cell in re.findall(r"^\| ([^|]+) \|", section, re.M)
            for folder in re.findall(r"`(lowering/[\w/]+/)`", cell)}
    folders = {f"{p.parent.relative_to(ROOT).as_posix()}/"
               for p in (ROOT / "lowering").rglob("__init__.py")} - {"lowering/"}
    # a folder is covered by its own row or an enclosing folder's, or split into rows below it
    missing = {f for f in folders
               if not any(f.startswith(row) or row.startswith(f) for row in rows)}
    assert not missing, f"docs/architecture.md's Layers table has no row for {sorted(missing)}"
