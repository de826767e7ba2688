// RUN: lowering-opt %s -p canonicalize | filecheck %s
// RUN: lowering-opt %s -p 'canonicalize{max-iterations=1}' | filecheck %s
// RUN: lowering-opt %s -p canonicalize --print-locations | filecheck %s --check-prefix=LOC

// Constants fold through a chain; the folded constant keeps the location of the op it replaced.
// CHECK-LABEL: func.func @fold
func.func @fold(%x: f32) -> f32 {
  // CHECK-NEXT: %three = scalar.constant 3.000000e+00 : f32
  // CHECK-NEXT: %r = scalar.mul %x, %three
  // CHECK-NEXT: func.return %r
  // LOC: %three = scalar.constant 3.000000e+00 : f32 loc("{{.*}}canonicalize.mlir":[[# @LINE + 3]]:12)
  %one = "scalar.constant"() {value = 1.0 : f32} : () -> f32
  %two = "scalar.constant"() {value = 2.0 : f32} : () -> f32
  %three = "scalar.add"(%one, %two) : (f32, f32) -> f32
  %r = "scalar.mul"(%x, %three) : (f32, f32) -> f32
  func.return %r : f32
}

// Dead pure ops go, in chains; ops with results in use stay.
// CHECK-LABEL: func.func @dead
func.func @dead(%x: f32) -> f32 {
  // CHECK-NEXT: func.return %x
  %e = "scalar.exp"(%x) : (f32) -> f32
  %l = "scalar.log"(%e) : (f32) -> f32
  func.return %x : f32
}

// Integer folding and comparison folding.
// CHECK-LABEL: func.func @integers
func.func @integers() -> i1 {
  // CHECK-NEXT: %c = scalar.constant true
  // CHECK-NEXT: func.return %c
  %a = "scalar.constant"() {value = 6 : i32} : () -> i32
  %b = "scalar.constant"() {value = 7 : i32} : () -> i32
  %p = "scalar.mul"(%a, %b) : (i32, i32) -> i32
  %q = "scalar.constant"() {value = 42 : i32} : () -> i32
  %c = "scalar.eq"(%p, %q) : (i32, i32) -> i1
  func.return %c : i1
}
