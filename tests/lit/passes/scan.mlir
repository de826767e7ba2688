// RUN: lowering-opt %s --split-input-file -p canonicalize,fuse | filecheck %s
// RUN: lowering-opt %s --split-input-file -p canonicalize,fuse,bufferize | filecheck %s --check-prefix=LOOPS

// Loop-invariant code moves before the scan; the body is fused like any graph; an output read
// only at its last step keeps one step.
// CHECK-LABEL: func.func @invariant_fused_last
// CHECK: %e = tensor.exp %b
// CHECK: tensor.scan %n, %xs, %h0, %e attributes {{.*}}last_only = [true]
// CHECK-NOT: tensor.exp
// CHECK: tensor.fused %x, %h, %e
// CHECK: scalar.add
// CHECK-NEXT: scalar.mul
// CHECK: tensor.scan_yield
// The loop allocates nothing per step: the history of the recurrence is a ring of two rows made
// before it, and the fused step writes row (t + 1) mod 2 directly, with no temporary or copy.
// LOOPS-LABEL: func.func @invariant_fused_last
// LOOPS: %[[TWO:.*]] = scalar.constant 2 : index
// LOOPS: %[[RING:.*]] = loops.alloc(%[[TWO]],
// LOOPS: loops.for %[[T:[a-z0-9]+]] =
// LOOPS-NOT: loops.alloc
// LOOPS: %[[NEXT:.*]] = scalar.add %[[T]],
// LOOPS-NEXT: %[[ROW:.*]] = scalar.mod %[[NEXT]], %[[TWO]] : index
// LOOPS-NOT: loops.alloc
// LOOPS: %[[DEST:.*]] = loops.subview %[[RING]][%[[ROW]], 0]
// LOOPS-NOT: loops.alloc
// LOOPS: loops.store {{.*}}, %[[DEST]][
// LOOPS-NOT: loops.alloc
// LOOPS: {{^      }}loops.yield
// LOOPS-NEXT: {{^    }}}
// LOOPS: func.return
func.func @invariant_fused_last(%n: tensor<i64>, %xs: tensor<?x?xf32>, %h0: tensor<1x?xf32>, %b: tensor<?xf32>) -> tensor<?xf32> {
  %r = tensor.scan %n, %xs, %h0, %b attributes {sequence_taps = [[0]], output_taps = [[-1]]} : (tensor<i64>, tensor<?x?xf32>, tensor<1x?xf32>, tensor<?xf32>) -> tensor<?x?xf32> {
  ^bb0(%x: tensor<?xf32>, %h: tensor<?xf32>, %bias: tensor<?xf32>):
    %e = tensor.exp %bias : tensor<?xf32>
    %s = tensor.add %x, %h : tensor<?xf32>
    %t = tensor.mul %s, %e : tensor<?xf32>
    tensor.scan_yield %t : tensor<?xf32>
  }
  %last = tensor.subtensor %r[] [["index", -1]] : (tensor<?x?xf32>) -> tensor<?xf32>
  func.return %last : tensor<?xf32>
}

// -----

// A product of a loop-invariant matrix and a sequence's row is one product over the whole
// sequence, before the loop; the body reads its rows, and no longer those of %xs.
// CHECK-LABEL: func.func @sequence_product
// CHECK: %[[T:.*]] = tensor.dimshuffle %u [1, 0]
// CHECK: %[[P:.*]] = tensor.dot %xs, %[[T]]
// CHECK: tensor.scan %n, %[[P]], %h0 attributes {sequence_taps = [[0 : i64]]
// CHECK-NOT: tensor.dot
// CHECK: tensor.scan_yield
func.func @sequence_product(%n: tensor<i64>, %xs: tensor<?x?xf32>, %h0: tensor<1x?xf32>, %u: tensor<?x?xf32>) -> tensor<?x?xf32> {
  %r = tensor.scan %n, %xs, %h0, %u attributes {sequence_taps = [[0]], output_taps = [[-1]]} : (tensor<i64>, tensor<?x?xf32>, tensor<1x?xf32>, tensor<?x?xf32>) -> tensor<?x?xf32> {
  ^bb0(%x: tensor<?xf32>, %h: tensor<?xf32>, %m: tensor<?x?xf32>):
    %p = tensor.dot %m, %x : (tensor<?x?xf32>, tensor<?xf32>) -> tensor<?xf32>
    %s = tensor.add %p, %h : tensor<?xf32>
    tensor.scan_yield %s : tensor<?xf32>
  }
  func.return %r : tensor<?x?xf32>
}

// -----

// A sum of per-step outer products (a weight's gradient) is one matrix product after the
// loop, which no longer carries it; maps of the sequences' rows run over whole sequences
// before the loop, which only passes their rows on.
// CHECK-LABEL: func.func @summed_outer_products
// CHECK: %[[A:.*]] = tensor.exp
// CHECK: %[[C:.*]] = tensor.neg
// CHECK: %[[R:.*]]:2 = tensor.scan %n, %[[A]], %[[C]] attributes {sequence_taps = [[0 : i64], [0 : i64]], output_taps = [[], []]}
// CHECK-NEXT: ^bb0(%[[ROW_A:.*]]: tensor<?xf32>, %[[ROW_C:.*]]: tensor<?xf32>):
// CHECK-NEXT: tensor.scan_yield %[[ROW_A]], %[[ROW_C]]
// CHECK: tensor.subtensor %g0[] [["index", 0]]
// CHECK: %[[AT:.*]] = tensor.dimshuffle %[[R]]#0 [1, 0]
// CHECK: %[[D:.*]] = tensor.dot %[[AT]], %[[R]]#1
// CHECK: %last = tensor.add {{.*}}, %[[D]]
// CHECK-NEXT: func.return %last
func.func @summed_outer_products(%n: tensor<i64>, %xs: tensor<?x?xf32>, %ys: tensor<?x?xf32>, %g0: tensor<1x?x?xf32>) -> tensor<?x?xf32> {
  %r = tensor.scan %n, %xs, %ys, %g0 attributes {sequence_taps = [[0], [0]], output_taps = [[-1]]} : (tensor<i64>, tensor<?x?xf32>, tensor<?x?xf32>, tensor<1x?x?xf32>) -> tensor<?x?x?xf32> {
  ^bb0(%x: tensor<?xf32>, %y: tensor<?xf32>, %acc: tensor<?x?xf32>):
    %a = tensor.exp %x : tensor<?xf32>
    %c = tensor.neg %y : tensor<?xf32>
    %col = tensor.dimshuffle %a [0, -1] : tensor<?xf32> -> tensor<?x1xf32>
    %row = tensor.dimshuffle %c [-1, 0] : tensor<?xf32> -> tensor<1x?xf32>
    %outer = tensor.mul %col, %row : tensor<?x1xf32>, tensor<1x?xf32>
    %next = tensor.add %acc, %outer : tensor<?x?xf32>
    tensor.scan_yield %next : tensor<?x?xf32>
  }
  %last = tensor.subtensor %r[] [["index", -1]] : (tensor<?x?x?xf32>) -> tensor<?x?xf32>
  func.return %last : tensor<?x?xf32>
}

