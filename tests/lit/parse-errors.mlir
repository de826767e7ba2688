// RUN: not lowering-opt %s 2>&1 | filecheck %s
// RUN: not lowering-opt %s --split-input-file 2>&1 | filecheck %s --check-prefix=SPLIT

// A malformed type: the message names file, line and column, then the line and a caret.
// CHECK:      parse-errors.mlir:[[# @LINE + 3]]:22: error: {{.*}}
// CHECK-NEXT: func.func @f(%x: f32 -> f32 {
// CHECK-NEXT:                      ^
func.func @f(%x: f32 -> f32 {
  func.return %x : f32
}

// -----

// SPLIT: parse-errors.mlir:[[# @LINE + 1]]:8: error: unknown op 'scalar.nope'; did you mean
  %0 = "scalar.nope"() : () -> f32
