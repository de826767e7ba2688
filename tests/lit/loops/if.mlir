// RUN: lowering-opt %s | filecheck %s
// RUN: lowering-opt %s | lowering-opt | filecheck %s
// RUN: lowering-opt %s --generic | lowering-opt | filecheck %s

// loops.if prints in its pretty form (results after "->", none without results) and reads
// back unchanged from the pretty and the generic forms.

// CHECK-LABEL: func.func @select
// CHECK:       %r = loops.if %c -> f32 {
// CHECK-NEXT:    %s = scalar.add %a, %b : f32
// CHECK-NEXT:    loops.yield %s : f32
// CHECK-NEXT:  } else {
// CHECK-NEXT:    loops.yield %b : f32
// CHECK-NEXT:  }
func.func @select(%c: i1, %a: f32, %b: f32) -> f32 {
  %r = loops.if %c -> f32 {
    %s = scalar.add %a, %b : f32
    loops.yield %s : f32
  } else {
    loops.yield %b : f32
  }
  func.return %r : f32
}

// CHECK-LABEL: func.func @two_results
// CHECK:       %p, %q = loops.if %c -> (!loops.buffer<?xf32>, index) {
// CHECK:       } else {
// CHECK-LABEL: func.func @no_results
// CHECK:       loops.if %c {
// CHECK-NEXT:    loops.store %v, %x[] : !loops.buffer<f32>
// CHECK-NEXT:    loops.yield
// CHECK-NEXT:  } else {
// CHECK-NEXT:    loops.yield
// CHECK-NEXT:  }
func.func @two_results(%c: i1, %n: index) -> (!loops.buffer<?xf32>, index) {
  %p, %q = loops.if %c -> (!loops.buffer<?xf32>, index) {
    %t = loops.alloc(%n) : !loops.buffer<?xf32>
    loops.yield %t, %n : !loops.buffer<?xf32>, index
  } else {
    %u = loops.alloc(%n) : !loops.buffer<?xf32>
    loops.yield %u, %n : !loops.buffer<?xf32>, index
  }
  func.return %p, %q : !loops.buffer<?xf32>, index
}
func.func @no_results(%c: i1, %x: !loops.buffer<f32>, %v: f32) {
  loops.if %c {
    loops.store %v, %x[] : !loops.buffer<f32>
    loops.yield
  } else {
    loops.yield
  }
  func.return
}
