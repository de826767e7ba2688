"""ptxas: finding it, assembling PTX, and its errors naming the failing PTX line."""
from __future__ import annotations

import pytest

from lowering.llvm.gpu import ptxas
from lowering.llvm.gpu.ptxas import PtxasError, assemble_ptx, find_ptxas, ptxas_available

needs_ptxas = pytest.mark.skipif(not ptxas_available(), reason="ptxas (CUDA toolkit) not found")

HEADER = ".version 7.8\n.target sm_90\n.address_size 64\n"
GOOD = HEADER + ".visible .entry nothing()\n{\n\tret;\n}\n"


@needs_ptxas
def test_assemble_gives_a_cubin():
    cubin = assemble_ptx(GOOD, "sm_90")
    assert cubin[:4] == b"\x7fELF"


@needs_ptxas
def test_errors_name_the_ptx_line():
    bad = GOOD.replace("\tret;", "\tmov.u32 %r1, %tid.x;\n\tret;")  # %r1 is not declared
    with pytest.raises(PtxasError) as info:
        assemble_ptx(bad, "sm_90")
    assert info.value.line == 6 and info.value.source_line == "mov.u32 %r1, %tid.x;"
    assert "PTX line 6: mov.u32 %r1, %tid.x;" in str(info.value)
    assert "%r1" in str(info.value)


@needs_ptxas
def test_unknown_architecture_is_reported():
    with pytest.raises(PtxasError, match="sm_1"):
        assemble_ptx(GOOD, "sm_1")


def test_found_through_cuda_home(tmp_path, monkeypatch):
    executable = tmp_path / "bin" / "ptxas"
    executable.parent.mkdir()
    executable.write_text("#!/bin/sh\nexit 0\n")
    executable.chmod(0o755)
    monkeypatch.setenv("PATH", "")
    monkeypatch.setenv("CUDA_HOME", str(tmp_path))
    monkeypatch.setattr(ptxas, "_DEFAULT_CUDA_BIN", str(tmp_path / "nowhere"))
    assert find_ptxas() == str(executable)


def test_missing_ptxas_says_how_to_get_it(tmp_path, monkeypatch):
    monkeypatch.setenv("PATH", "")
    monkeypatch.delenv("CUDA_HOME", raising=False)
    monkeypatch.delenv("CUDA_PATH", raising=False)
    monkeypatch.setattr(ptxas, "_DEFAULT_CUDA_BIN", str(tmp_path))
    assert find_ptxas() is None and not ptxas_available()
    with pytest.raises(PtxasError, match="CUDA_HOME"):
        assemble_ptx(GOOD, "sm_90")
