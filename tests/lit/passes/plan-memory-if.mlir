// RUN: lowering-opt %s -p "plan-memory{reuse=false}" | filecheck %s

// Each result of a loops.if for which both branches yield an allocation of their own owns its
// memory: it is freed after its last use (the returned one is not), and the allocations inside
// the branches are not freed there. A temporary of a branch is freed in the branch.
// CHECK-LABEL: func.func @results
// CHECK:       %p, %q = loops.if %c
// CHECK:         %t = loops.alloc(%n)
// CHECK:         %u = loops.alloc(%n)
// CHECK:         %tmp = loops.alloc(%n)
// CHECK-NEXT:    loops.copy %x, %tmp
// CHECK-NEXT:    loops.copy %tmp, %t
// CHECK-NEXT:    loops.dealloc %tmp
// CHECK-NEXT:    loops.copy %x, %u
// CHECK-NEXT:    loops.yield %t, %u
// CHECK:       } else {
// CHECK-NOT:     loops.dealloc
// CHECK:         loops.yield %v, %w
// CHECK-NEXT:  }
// CHECK-NEXT:  %r = loops.alloc(%n)
// CHECK-NEXT:  loops.copy %p, %r
// CHECK-NEXT:  loops.dealloc %p
// CHECK-NEXT:  func.return %r, %q
func.func @results(%c: i1, %x: !loops.buffer<?xf32>) -> (!loops.buffer<?xf32>, !loops.buffer<?xf32>) {
  %c0 = "scalar.constant"() {value = 0 : index} : () -> index
  %n = loops.dim %x, 0 : !loops.buffer<?xf32>
  %p, %q = loops.if %c -> (!loops.buffer<?xf32>, !loops.buffer<?xf32>) {
    %t = loops.alloc(%n) : !loops.buffer<?xf32>
    %u = loops.alloc(%n) : !loops.buffer<?xf32>
    %tmp = loops.alloc(%n) : !loops.buffer<?xf32>
    loops.copy %x, %tmp : !loops.buffer<?xf32>, !loops.buffer<?xf32>
    loops.copy %tmp, %t : !loops.buffer<?xf32>, !loops.buffer<?xf32>
    loops.copy %x, %u : !loops.buffer<?xf32>, !loops.buffer<?xf32>
    loops.yield %t, %u : !loops.buffer<?xf32>, !loops.buffer<?xf32>
  } else {
    %v = loops.alloc(%n) : !loops.buffer<?xf32>
    %w = loops.alloc(%n) : !loops.buffer<?xf32>
    loops.copy %x, %v : !loops.buffer<?xf32>, !loops.buffer<?xf32>
    loops.copy %x, %w : !loops.buffer<?xf32>, !loops.buffer<?xf32>
    loops.yield %v, %w : !loops.buffer<?xf32>, !loops.buffer<?xf32>
  }
  %r = loops.alloc(%n) : !loops.buffer<?xf32>
  loops.copy %p, %r : !loops.buffer<?xf32>, !loops.buffer<?xf32>
  func.return %r, %q : !loops.buffer<?xf32>, !loops.buffer<?xf32>
}
