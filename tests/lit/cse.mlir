// RUN: lowering-opt %s -p cse | filecheck %s

// Equal pure ops are merged; the survivor keeps the name of the first.
// CHECK-LABEL: func.func @duplicates
func.func @duplicates(%x: f32, %y: f32) -> f32 {
  // CHECK-NEXT: %a = scalar.add %x, %y
  // CHECK-NEXT: %c = scalar.mul %a, %a
  // CHECK-NEXT: func.return %c
  %a = "scalar.add"(%x, %y) : (f32, f32) -> f32
  %b = "scalar.add"(%x, %y) : (f32, f32) -> f32
  %c = "scalar.mul"(%a, %b) : (f32, f32) -> f32
  func.return %c : f32
}

// add is commutative: add(y, x) is add(x, y). sub is not.
// CHECK-LABEL: func.func @commutative
func.func @commutative(%x: f32, %y: f32) -> f32 {
  // CHECK-NEXT: %a = scalar.add %x, %y
  // CHECK-NEXT: %s = scalar.sub %x, %y
  // CHECK-NEXT: %t = scalar.sub %y, %x
  // CHECK-NEXT: %m = scalar.mul %a, %a
  // CHECK-NEXT: %n = scalar.mul %s, %t
  %a = "scalar.add"(%x, %y) : (f32, f32) -> f32
  %b = "scalar.add"(%y, %x) : (f32, f32) -> f32
  %s = "scalar.sub"(%x, %y) : (f32, f32) -> f32
  %t = "scalar.sub"(%y, %x) : (f32, f32) -> f32
  %m = "scalar.mul"(%a, %b) : (f32, f32) -> f32
  %n = "scalar.mul"(%s, %t) : (f32, f32) -> f32
  %r = "scalar.add"(%m, %n) : (f32, f32) -> f32
  func.return %r : f32
}

// Constants are equal only with equal values and types; functions never share ops.
// CHECK-LABEL: func.func @constants
func.func @constants() -> f32 {
  // CHECK-NEXT: %one = scalar.constant 1.000000e+00 : f32
  // CHECK-NEXT: %two = scalar.constant 2.000000e+00 : f32
  // CHECK-NEXT: %s = scalar.add %one, %one
  // CHECK-NEXT: %t = scalar.add %s, %two
  %one = "scalar.constant"() {value = 1.0 : f32} : () -> f32
  %uno = "scalar.constant"() {value = 1.0 : f32} : () -> f32
  %two = "scalar.constant"() {value = 2.0 : f32} : () -> f32
  %s = "scalar.add"(%one, %uno) : (f32, f32) -> f32
  %t = "scalar.add"(%s, %two) : (f32, f32) -> f32
  func.return %t : f32
}
// CHECK-LABEL: func.func @other
func.func @other() -> f32 {
  // CHECK-NEXT: %one = scalar.constant 1.000000e+00 : f32
  %one = "scalar.constant"() {value = 1.0 : f32} : () -> f32
  func.return %one : f32
}
