// RUN: not lowering-opt %s --split-input-file -p cse 2>/dev/null | filecheck %s
// RUN: not lowering-opt %s --split-input-file -p cse --print-locations 2>&1 | filecheck %s --check-prefix=LINES

// Each chunk is a module of its own; the outputs are joined with '// -----'.

// CHECK-LABEL: func.func @first
// CHECK: scalar.add
// CHECK-NOT: scalar.add
// CHECK: func.return
func.func @first(%x: f32) -> f32 {
  %a = "scalar.add"(%x, %x) : (f32, f32) -> f32
  %b = "scalar.add"(%x, %x) : (f32, f32) -> f32
  %c = "scalar.mul"(%a, %b) : (f32, f32) -> f32
  func.return %c : f32
}

// -----

// CHECK: // -----
// CHECK-LABEL: func.func @second
// The same symbol in another chunk is no redefinition.
func.func @first(%x: f32) -> f32 {
  func.return %x : f32
}
func.func @second(%x: f32) -> f32 {
  func.return %x : f32
}

// -----

// An error in one chunk does not stop the others; its line is the line in the whole file.
// LINES: split-input-file.mlir:[[# @LINE + 1]]:41: error: use of undefined value '%nope'
  func.func @bad() -> f32 { func.return %nope : f32 }

// -----

// CHECK: // -----
// CHECK-LABEL: func.func @last
// LINES: func.return %x : f32 loc("{{.*}}split-input-file.mlir":[[# @LINE + 2]]:3)
func.func @last(%x: f32) -> f32 {
  func.return %x : f32
}
