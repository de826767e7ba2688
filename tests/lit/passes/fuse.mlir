// RUN: lowering-opt %s -p fuse | filecheck %s
// RUN: lowering-opt %s -p 'fuse{explain=true}' -o /dev/null 2>&1 | filecheck %s --check-prefix=EXPLAIN
// RUN: lowering-opt %s -p 'fuse{max-inputs=2}' | filecheck %s --check-prefix=CAP

// sum(exp(x)) is one op; exp(x) is also used outside, so it is a second result.
// CHECK-LABEL: func.func @sum_of_exp
// EXPLAIN: fuse: fused 2 ops (exp, sum) at {{.*}}fuse.mlir:[[# @LINE + 9]]:8 and 1 more: 1 inputs, 2 results
func.func @sum_of_exp(%x: tensor<?x?xf32>) -> (tensor<?xf32>, tensor<?x?xf32>) {
  // CHECK-NEXT: %[[F:.*]]:2 = tensor.fused %x attributes {reductions = [{kind = "none"}, {kind = "sum", axes = [1 : i64], keepdims = false}]} : (tensor<?x?xf32>) -> (tensor<?x?xf32>, tensor<?xf32>) {
  // CHECK-NEXT: ^bb0(%[[A:.*]]: f32):
  // CHECK-NEXT:   %[[E:.*]] = scalar.exp %[[A]]
  // CHECK-NEXT:   scalar.yield %[[E]], %[[E]]
  // CHECK-NEXT: }
  // CHECK-NEXT: %s = tensor.softmax %[[F]]#0
  // CHECK-NEXT: func.return %[[F]]#1, %s
  %e = "tensor.exp"(%x) : (tensor<?x?xf32>) -> tensor<?x?xf32>
  %r = "tensor.sum"(%e) {axes = [1], keepdims = false} : (tensor<?x?xf32>) -> tensor<?xf32>
  %s = "tensor.softmax"(%e) {axis = 1} : (tensor<?x?xf32>) -> tensor<?x?xf32>
  func.return %r, %s : tensor<?xf32>, tensor<?x?xf32>
}

// A chain around a dot, with a one-element constant (it goes into the body). exp(-v) is used
// after the dot too: fusing it with the ops after the dot would need the dot inside the group.
// CHECK-LABEL: func.func @around_a_dot
// EXPLAIN-NEXT: fuse: fused 2 ops (neg, exp) at {{.*}}fuse.mlir:[[# @LINE + 21]]:8 and 1 more: 1 inputs, 1 results
// EXPLAIN-NEXT: fuse: fused 4 ops (mul, sub, mul, sqr) at {{.*}}: 3 inputs, 1 results
// EXPLAIN-DAG: fuse: boundary tensor.exp at {{.*}} -> tensor.softmax at {{.*}}: tensor.softmax is not elementwise
// EXPLAIN-DAG: fuse: boundary tensor.exp at {{.*}} -> tensor.mul at {{.*}}: fusing would create a cycle: a value of the group reaches it again through tensor.dot at {{.*}}
// EXPLAIN-DAG: fuse: boundary tensor.dot at {{.*}} -> tensor.mul at {{.*}}: tensor.dot is not elementwise
// EXPLAIN-DAG: fuse: boundary tensor.exp at {{.*}} -> tensor.dot at {{.*}}: tensor.dot is not elementwise
// With at most two inputs, the ops after the dot are two fused ops.
// CAP-LABEL: func.func @around_a_dot
// CAP: %d = tensor.dot
// CAP-NEXT: %[[P:.*]] = tensor.fused %d, %y
// CAP: scalar.sub
// CAP: %[[Q:.*]] = tensor.fused %[[P]], %{{.*}}
// CAP: scalar.sqr
// CAP: func.return %[[Q]]
func.func @around_a_dot(%a: tensor<?x?xf32>, %v: tensor<?xf32>, %y: tensor<?xf32>) -> tensor<?xf32> {
  // CHECK-NEXT: %[[G:.*]] = tensor.fused %v
  // CHECK: %d = tensor.dot %a, %[[G]]
  // CHECK-NEXT: %[[H:.*]] = tensor.fused %d, %y, %[[G]]
  // CHECK: scalar.constant 2.000000e+00 : f32
  // CHECK: func.return %[[H]]
  %two = "tensor.constant"() {value = dense<2.0> : tensor<1xf32>} : () -> tensor<1xf32>
  %n = "tensor.neg"(%v) : (tensor<?xf32>) -> tensor<?xf32>
  %e = "tensor.exp"(%n) : (tensor<?xf32>) -> tensor<?xf32>
  %d = "tensor.dot"(%a, %e) : (tensor<?x?xf32>, tensor<?xf32>) -> tensor<?xf32>
  %m = "tensor.mul"(%d, %two) : (tensor<?xf32>, tensor<1xf32>) -> tensor<?xf32>
  %s = "tensor.sub"(%m, %y) : (tensor<?xf32>, tensor<?xf32>) -> tensor<?xf32>
  %t = "tensor.mul"(%s, %e) : (tensor<?xf32>, tensor<?xf32>) -> tensor<?xf32>
  %q = "tensor.sqr"(%t) : (tensor<?xf32>) -> tensor<?xf32>
  func.return %q : tensor<?xf32>
}
