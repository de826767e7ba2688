// RUN: lowering-opt %s -p dce | filecheck %s

// CHECK-LABEL: func.func @f
func.func @f(%x: f32) -> f32 {
  // CHECK-NEXT: %keep = scalar.exp %x
  // CHECK-NEXT: func.return %keep
  %a = "scalar.add"(%x, %x) : (f32, f32) -> f32
  %b = "scalar.mul"(%a, %a) : (f32, f32) -> f32
  %keep = "scalar.exp"(%x) : (f32) -> f32
  %c = "scalar.constant"() {value = 1.0 : f32} : () -> f32
  func.return %keep : f32
}
