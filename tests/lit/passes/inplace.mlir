// RUN: lowering-opt %s -p inplace | filecheck %s

// w - g, the new value of the shared variable read as argument 0, is computed into w's own
// buffer: no allocation, no result, and w's type is contiguous (the caller passes it so).
// CHECK-LABEL: func.func @update
// CHECK-SAME:  (%w: !loops.buffer<?xf32>, %g: !loops.buffer<?xf32, strides=[?], offset=?>)
// CHECK-SAME:  attributes {lowering.updated_in_place = {{\[\[}}0 : i64, 0 : i64]]}
// CHECK-NOT:   loops.alloc
// CHECK:       loops.store %d, %w[%i]
// CHECK:       func.return{{$}}
func.func @update(%w: !loops.buffer<?xf32, strides=[?], offset=?>,
                  %g: !loops.buffer<?xf32, strides=[?], offset=?>) -> !loops.buffer<?xf32>
    attributes {lowering.shared_updates = [[0, 0]]} {
  %c0 = "scalar.constant"() {value = 0 : index} : () -> index
  %c1 = "scalar.constant"() {value = 1 : index} : () -> index
  %n = loops.dim %w, 0 : !loops.buffer<?xf32, strides=[?], offset=?>
  %m = loops.dim %g, 0 : !loops.buffer<?xf32, strides=[?], offset=?>
  %ok = "scalar.eq"(%n, %m) : (index, index) -> i1
  loops.assert %ok, "sizes differ" {error_code = 1 : i64}
  %new = loops.alloc(%n) : !loops.buffer<?xf32>
  loops.parallel (%i) = (%c0) to (%n) step (%c1) {
    %a = loops.load %w[%i] : !loops.buffer<?xf32, strides=[?], offset=?>
    %b = loops.load %g[%i] : !loops.buffer<?xf32, strides=[?], offset=?>
    %d = "scalar.sub"(%a, %b) : (f32, f32) -> f32
    loops.store %d, %new[%i] : !loops.buffer<?xf32>
    loops.yield
  }
  func.return %new : !loops.buffer<?xf32>
}

// An elementwise loop reading a dead temporary at the indices it writes writes into it.
// CHECK-LABEL: func.func @temporary
// CHECK:       %t = loops.alloc(%n)
// CHECK-NOT:   loops.alloc
// CHECK:       loops.load %t[%j]
// CHECK:       loops.store %s, %t[%j]
// CHECK:       func.return %t
func.func @temporary(%x: !loops.buffer<?xf32>) -> !loops.buffer<?xf32> {
  %c0 = "scalar.constant"() {value = 0 : index} : () -> index
  %c1 = "scalar.constant"() {value = 1 : index} : () -> index
  %n = loops.dim %x, 0 : !loops.buffer<?xf32>
  %t = loops.alloc(%n) : !loops.buffer<?xf32>
  loops.parallel (%i) = (%c0) to (%n) step (%c1) {
    %v = loops.load %x[%i] : !loops.buffer<?xf32>
    %e = "scalar.exp"(%v) : (f32) -> f32
    loops.store %e, %t[%i] : !loops.buffer<?xf32>
    loops.yield
  }
  %y = loops.alloc(%n) : !loops.buffer<?xf32>
  loops.parallel (%j) = (%c0) to (%n) step (%c1) {
    %u = loops.load %t[%j] : !loops.buffer<?xf32>
    %s = "scalar.sin"(%u) : (f32) -> f32
    loops.store %s, %y[%j] : !loops.buffer<?xf32>
    loops.yield
  }
  func.return %y : !loops.buffer<?xf32>
}

// At the tensor level the pass only allows the CPU pipeline to work in place.
// CHECK-LABEL: func.func @tensor_level
// CHECK-SAME:  attributes {lowering.allow_inplace = unit}
func.func @tensor_level(%x: tensor<?xf32>) -> tensor<?xf32> {
  %y = "tensor.exp"(%x) : (tensor<?xf32>) -> tensor<?xf32>
  func.return %y : tensor<?xf32>
}
