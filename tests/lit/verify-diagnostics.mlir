// RUN: lowering-opt %s --split-input-file --verify-diagnostics
// RUN: not lowering-opt %S/Inputs/wrong-expectations.mlir --split-input-file --verify-diagnostics 2>&1 | filecheck %s --check-prefix=WRONG

// A verifier error, expected on the next line.
func.func @result_type(%x: f32) -> f64 {
  // expected-error @+1 {{result type f64 should be f32}}
  %c = "scalar.mul"(%x, %x) : (f32, f32) -> f64
  func.return %c : f64
}

// -----

// A parse error, expected on its own line.
func.func @undefined(%x: f32) -> f32 {
  %c = "scalar.mul"(%x, %y) : (f32, f32) -> f32 // expected-error {{use of undefined value '%y'}}
  func.return %c : f32
}

// -----

// An error from the op before the comment.
func.func @returns(%x: f32) -> f32 {
  func.return %x, %x : f32, f32
  // expected-error @-1 {{func.return operand types differ from function_type results}}
}

// -----

// A chunk without errors needs no expectations.
func.func @fine(%x: f32) -> f32 {
  func.return %x : f32
}

// WRONG: wrong-expectations.mlir:3: error: expected error "this message does not appear" was not produced
// WRONG: wrong-expectations.mlir:11: error: unexpected error: {{.*}}result type f64 should be f32
