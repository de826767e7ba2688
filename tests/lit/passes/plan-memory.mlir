// RUN: lowering-opt %s -p plan-memory | filecheck %s
// RUN: lowering-opt %s -p "plan-memory{reuse=false}" | filecheck %s --check-prefix=NOREUSE

// A temporary is freed after the last op that uses it (a loop counts as a whole); the
// returned buffer is not. The result has the size of %t, which is dead by the time the result
// is written: the result takes its memory (the loop writing %u while it reads %t is the
// inplace pass's business).
// CHECK-LABEL: func.func @chain
// CHECK:       %t = loops.alloc(%n)
// CHECK:       %u = loops.alloc(%n)
// CHECK:       loops.parallel
// CHECK:         loops.load %t
// CHECK:         loops.store {{.*}}, %u
// CHECK-NOT:   loops.alloc
// CHECK:       loops.copy %u, %t
// CHECK-NEXT:  loops.dealloc %u
// CHECK-NEXT:  func.return %t
// NOREUSE-LABEL: func.func @chain
// NOREUSE:       loops.parallel
// NOREUSE:       loops.dealloc %t
// NOREUSE:       loops.copy %u, %y
// NOREUSE-NEXT:  loops.dealloc %u
// NOREUSE-NEXT:  func.return %y
func.func @chain(%x: !loops.buffer<?xf32>) -> !loops.buffer<?xf32> {
  %c0 = "scalar.constant"() {value = 0 : index} : () -> index
  %c1 = "scalar.constant"() {value = 1 : index} : () -> index
  %n = loops.dim %x, 0 : !loops.buffer<?xf32>
  %t = loops.alloc(%n) : !loops.buffer<?xf32>
  loops.copy %x, %t : !loops.buffer<?xf32>, !loops.buffer<?xf32>
  %u = loops.alloc(%n) : !loops.buffer<?xf32>
  loops.parallel (%i) = (%c0) to (%n) step (%c1) {
    %v = loops.load %t[%i] : !loops.buffer<?xf32>
    %e = "scalar.exp"(%v) : (f32) -> f32
    loops.store %e, %u[%i] : !loops.buffer<?xf32>
    loops.yield
  }
  %y = loops.alloc(%n) : !loops.buffer<?xf32>
  loops.copy %u, %y : !loops.buffer<?xf32>, !loops.buffer<?xf32>
  func.return %y : !loops.buffer<?xf32>
}

// A buffer lives while a view of it is read.
// CHECK-LABEL: func.func @view
// CHECK:       %r = loops.transpose_view %t
// CHECK:       loops.copy %r, %y
// CHECK-NEXT:  loops.dealloc %t
func.func @view(%x: !loops.buffer<?xf32>) -> !loops.buffer<1x?xf32> {
  %n = loops.dim %x, 0 : !loops.buffer<?xf32>
  %t = loops.alloc(%n) : !loops.buffer<?xf32>
  loops.copy %x, %t : !loops.buffer<?xf32>, !loops.buffer<?xf32>
  %r = loops.transpose_view %t [x, 0] : !loops.buffer<?xf32> -> !loops.buffer<1x?xf32>
  %y = loops.alloc(%n) : !loops.buffer<1x?xf32>
  loops.copy %r, %y : !loops.buffer<1x?xf32>, !loops.buffer<1x?xf32>
  func.return %y : !loops.buffer<1x?xf32>
}
