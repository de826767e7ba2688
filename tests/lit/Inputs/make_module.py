"""IR built by Python, for lowering-opt's ``file.py:name`` input (see ../python-input.mlir)."""
from lowering.ir.parser import parse_module

TEXT = """
func.func @twice(%x: f32) -> f32 {
  %a = "scalar.add"(%x, %x) : (f32, f32) -> f32
  %b = "scalar.add"(%x, %x) : (f32, f32) -> f32
  %c = "scalar.mul"(%a, %b) : (f32, f32) -> f32
  func.return %c : f32
}
"""


class Compiled:
    """Stands in for a compiled function, which gives its IR through ``ir_module()``."""

    def ir_module(self, stage="tensor"):
        return parse_module(TEXT, "make_module.py")


compiled = Compiled()
module = parse_module(TEXT)
not_ir = 42

if __name__ == "__main__":
    raise SystemExit("lowering-opt must not run this file as __main__")
