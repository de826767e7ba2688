// Expectations that do not hold: checked by ../verify-diagnostics.mlir.
func.func @nothing_wrong(%x: f32) -> f32 {
  // expected-error @+1 {{this message does not appear}}
  %c = "scalar.mul"(%x, %x) : (f32, f32) -> f32
  func.return %c : f32
}

// -----

func.func @unexpected(%x: f32) -> f64 {
  %c = "scalar.mul"(%x, %x) : (f32, f32) -> f64
  func.return %c : f64
}
