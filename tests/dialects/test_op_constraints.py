"""The verifier messages that the declared constraints and traits of real ops give: each names
the op, the field and the offending type (or where the op is)."""
import pytest

from lowering.dialects.loops.constraints import AnyBuffer, BufferOf
from lowering.dialects.loops.types import BufferType
from lowering.ir.constraints import ConstraintVar
from lowering.ir.core import VerifyError
from lowering.ir.parser import parse_module
from lowering.ir.types import F32, F64
from lowering.ir.verifier import verify


def function(args: str, body: str) -> str:
    return f'''func.func @f({args}) {{
{body}
  func.return
}}'''


def check_fails(text: str, message: str) -> None:
    with pytest.raises(VerifyError, match=f"^{message}$"):
        verify(parse_module(text))


@pytest.mark.parametrize("args, body, message", [
    ("%x: f32, %y: tensor<2xf32>",
     '  %d = "tensor.dot"(%x, %y) : (f32, tensor<2xf32>) -> tensor<f32>',
     "tensor.dot: the lhs must be a tensor, got f32"),
    ("%x: tensor<2xf32>",
     '  %s = "tensor.shape_i"(%x) {axis = 0} : (tensor<2xf32>) -> tensor<i32>',
     "tensor.shape_i: the result must be tensor<i64>, got tensor<i32>"),
    ("%c: f32, %x: f32",
     '  %s = "scalar.select"(%c, %x, %x) : (f32, f32, f32) -> f32',
     "scalar.select: the cond must be i1, got f32"),
    ("%c: i1, %x: f32, %y: f64",
     '  %s = "scalar.select"(%c, %x, %y) : (i1, f32, f64) -> f32',
     "scalar.select: the on_false must be f32, got f64"),
    ('%a: !loops.buffer<?xf32>, %b: !loops.buffer<?xf32, space="device">',
     '  "loops.copy"(%a, %b) : (!loops.buffer<?xf32>, !loops.buffer<?xf32, space="device">) '
     '-> ()',
     r'loops.copy: the target must be a rank-1 buffer of f32 in space "host", '
     r'got !loops.buffer<\?xf32, space="device">'),
    ("%a: !loops.buffer<?xf32>, %i: index",
     '  %v = "loops.load"(%a, %i) : (!loops.buffer<?xf32>, index) -> f64',
     "loops.load: the result must be f32, got f64"),
    ("%n: i64",
     '  %b = "loops.alloc"(%n) : (i64) -> !loops.buffer<?xf32>',
     "loops.alloc: sizes #0 must be index, got i64"),
    ("",
     '  "gpu.barrier"() : () -> ()',
     "gpu.barrier is only valid inside a gpu.func or a gpu.launch, found in func.func"),
    ("%ok: i1",
     '  "loops.assert"(%ok) {message = "m", error_code = 1, kind = "fatal"} : (i1) -> ()',
     "loops.assert: attribute 'kind' must be one of value, index, got 'fatal'"),
])
def test_declared_constraints_reject(args, body, message):
    check_fails(function(args, body), message)


def test_yield_outside_a_loop_names_its_parents():
    check_fails(function("", "  loops.yield"),
                "loops.yield must be directly inside loops.for or loops.parallel or loops.if, "
                "found in func.func")


def test_buffer_constraints():
    contiguous = BufferType((None, 4), F32)
    strided = BufferType((None, 4), F32, strides=(8, 1))
    shared = BufferType((2,), F32, offset=2, memory_space="shared")
    env = {}
    assert AnyBuffer.check(strided, env) and not AnyBuffer.check(F32, env)
    assert BufferOf(contiguous=True).check(contiguous, env)
    assert not BufferOf(contiguous=True).check(strided, env)
    assert BufferOf(space="shared").check(shared, env)
    assert not BufferOf(space="shared", fresh=True).check(shared, env)
    assert not BufferOf(static=True).check(contiguous, env)
    space = ConstraintVar("space")
    assert BufferOf(space=space).check(contiguous, env)
    assert not BufferOf(space=space).check(shared, env)
    assert str(BufferOf(F64, rank=2, static=True, fresh=True, space="device")) == \
        'a static contiguous rank-2 buffer of f64 with offset 0 in space "device"'
    assert BufferOf(space=space).describe(env) == 'a buffer in space "host"'
