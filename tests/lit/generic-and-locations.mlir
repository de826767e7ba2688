// RUN: lowering-opt %s --generic | filecheck %s --check-prefix=GENERIC
// RUN: lowering-opt %s --print-locations | filecheck %s --check-prefix=LOC
// RUN: lowering-opt %s --generic --print-locations | lowering-opt --print-locations | filecheck %s --check-prefix=LOC

// GENERIC:      "builtin.module"() ({
// GENERIC-NEXT:   "func.func"() ({
// GENERIC-NEXT:   ^bb0(%x: f32):
// GENERIC-NEXT:     %e = "scalar.exp"(%x) : (f32) -> f32
// GENERIC-NEXT:     "func.return"(%e) : (f32) -> ()

// Locations are the positions in the input, and survive printing and parsing.
// LOC: %e = scalar.exp %x : f32 loc("{{.*}}generic-and-locations.mlir":[[# @LINE + 3]]:8)

func.func @f(%x: f32) -> f32 {
  %e = "scalar.exp"(%x) : (f32) -> f32
  func.return %e : f32
}
