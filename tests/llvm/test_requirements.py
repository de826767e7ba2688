"""``import lowering`` refuses an llvmlite outside the supported range, and a host the CPU back
end does not target, with an error naming what it found and what it needs; ``pyproject.toml``
declares the same range."""
import pathlib
import re
import subprocess
import sys
import textwrap

import llvmlite
import pytest

from lowering.llvm.requirements import LLVMLITE_RANGE, UnsupportedLLVMError, check_llvmlite, release

ROOT = pathlib.Path(__file__).resolve().parents[2]


def import_lowering_with(patch: str) -> subprocess.CompletedProcess:
    """``import lowering`` in a new interpreter after ``patch`` has faked part of llvmlite."""
    code = textwrap.dedent(patch) + "\nimport lowering\n"
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          cwd=ROOT, timeout=120)


@pytest.mark.parametrize("version", ["0.46.0", "0.42.1", "0.51.0", "1.0.0"])
def test_import_fails_on_an_llvmlite_outside_the_range(version):
    result = import_lowering_with(f"import llvmlite; llvmlite.__version__ = {version!r}")
    assert result.returncode != 0
    last = result.stderr.strip().splitlines()[-1]
    assert last.startswith("lowering.llvm.requirements.UnsupportedLLVMError")
    assert f"llvmlite {version} is installed" in last and LLVMLITE_RANGE in last


def test_import_fails_on_a_host_the_back_end_does_not_target():
    result = import_lowering_with("""
        import llvmlite.binding as llvm
        llvm.get_process_triple = lambda: "aarch64-unknown-linux-gnu"
    """)
    assert result.returncode != 0
    assert "this host is aarch64-unknown-linux-gnu" in result.stderr
    assert "x86_64" in result.stderr


def test_the_installed_llvmlite_is_accepted():
    check_llvmlite()
    result = import_lowering_with("")
    assert result.returncode == 0, result.stderr


@pytest.mark.parametrize("version", ["0.47.0", "0.47.1", "0.50.0", "0.50.0rc1"])
def test_the_ends_of_the_range_are_accepted(version):
    check_llvmlite(version, "x86_64-pc-linux-gnu")


def test_an_unreadable_version_is_refused():
    with pytest.raises(UnsupportedLLVMError, match="cannot read the llvmlite version 'dev'"):
        release("dev")


def test_pyproject_declares_the_checked_range():
    text = (ROOT / "pyproject.toml").read_text()
    assert re.search(rf'"llvmlite{re.escape(LLVMLITE_RANGE)}"', text)
    assert release(llvmlite.__version__) >= (0, 47)


def test_ptx_from_the_installed_llvmlite():
    # Every supported llvmlite generates PTX (the kernels call NVPTX intrinsics by names LLVM 20
    # and LLVM 22 both know), so lowering-opt prints the logistic regression's kernels and
    # ptxas accepts them wherever it is installed (the lowest-llvmlite CI lane runs this too).
    code = textwrap.dedent("""
        import sys
        from lowering.cli import main
        sys.exit(main(["examples/logreg.py:train", "-p", "canonicalize,fuse", "--target", "cuda",
                       "--emit", "ptx"]))
    """)
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                            cwd=ROOT, timeout=300)
    assert result.returncode == 0, result.stderr
    assert ".visible .entry" in result.stdout and "ld.global" in result.stdout
