"""The CPU backend's IR stages: ``Function.ir("loops"|"llvm"|"asm")`` and
``lowering-opt --emit llvm|asm`` on tensor-level and loops-level input."""
import contextlib
import io

import numpy as np
import pytest

import lowering as theano
import lowering.tensor as T
from lowering.cli import main
from lowering.config import config
from lowering.ir.parser import parse_module
from lowering.ir.verifier import verify


@pytest.fixture(autouse=True, scope="module")
def private_cache(tmp_path_factory):
    with config.change_flags(cache_dir=str(tmp_path_factory.mktemp("cpu-cache"))):
        yield


@pytest.fixture(scope="module")
def f():
    x = T.fvector("x")
    return theano.function([x], T.exp(x) * 2, name="scaled_exp")


def test_loops_stage_is_the_bufferized_module(f):
    text = f.ir("loops")
    assert "func.func @scaled_exp(%x: !loops.buffer<?xf32, strides=[?], offset=?>)" in text
    assert "loops.alloc" in text and "tensor." not in text
    verify(parse_module(text))  # real IR: parses and verifies
    assert "loc(" in f.ir("loops", locations=True)


def test_llvm_stage_is_optimized_llvm_ir_with_the_entry_point(f):
    text = f.ir("llvm")
    assert "define" in text and "@scaled_exp_entry(" in text
    assert "target triple" in text
    assert "<8 x float>" in text or "<16 x float>" in text  # the loop is vectorized


def test_asm_stage_is_host_assembly(f):
    text = f.ir("asm")
    assert "scaled_exp_entry:" in text
    assert any(op in text for op in ("vmulps", "vfmadd", "vaddps"))


def test_stages_of_an_interpreted_function_exist_too():
    x = T.dvector("x")
    g = theano.function([x], x + 1, mode="INTERP")
    assert "loops.parallel" in g.ir("loops") and "define" in g.ir("llvm")
    np.testing.assert_array_equal(g(np.zeros(2)), [1.0, 1.0])


TENSOR_INPUT = """
func.func @f(%x: tensor<?xf64>) -> tensor<?xf64> {
  %y = "tensor.sin"(%x) : (tensor<?xf64>) -> tensor<?xf64>
  func.return %y : tensor<?xf64>
}
"""


def _run(argv, stdin_text: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    import sys
    saved = sys.stdin
    sys.stdin = io.StringIO(stdin_text)
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            status = main(argv)
    finally:
        sys.stdin = saved
    return status, out.getvalue(), err.getvalue()


@pytest.mark.parametrize("emit, expected", [("llvm", "define i32 @f_entry("),
                                            ("asm", "f_entry:")])
def test_lowering_opt_emits_llvm_and_asm_from_tensor_level_input(emit, expected):
    status, out, err = _run(["-", "--emit", emit], TENSOR_INPUT)
    assert status == 0, err
    assert expected in out


def test_lowering_opt_emits_llvm_from_loops_level_input():
    status, loops_text, err = _run(["-", "-p", "bufferize"], TENSOR_INPUT)
    assert status == 0 and "loops.parallel" in loops_text, err
    status, out, err = _run(["-", "--emit", "llvm"], loops_text)
    assert status == 0, err
    assert "define i32 @f_entry(" in out


def test_lowering_opt_reports_an_op_the_backend_cannot_lower():
    text = """
func.func @g(%x: !loops.buffer<?xf64>) -> !loops.buffer<?xf64> {
  func.return %x : !loops.buffer<?xf64>
}
"""
    status, out, err = _run(["-", "--emit", "llvm"], text)
    assert status == 1 and out == ""
    assert "func.return" in err and "must be a buffer made by loops.alloc" in err
