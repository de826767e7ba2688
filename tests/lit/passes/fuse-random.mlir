// RUN: lowering-opt %s -p fuse | filecheck %s
// RUN: lowering-opt %s -p 'fuse{explain=true}' -o /dev/null 2>&1 | filecheck %s --check-prefix=EXPLAIN
// RUN: lowering-opt %s -p fuse,bufferize | filecheck %s --check-prefix=LOOPS

// A dropout mask whose size is x's shape: the draws join the product in one fused op, the
// element's position coming from scalar.linear_index.
// CHECK-LABEL: func.func @dropout
// CHECK: %[[F:.*]] = tensor.fused %key, %counter, %x : (tensor<1x1xui64>, tensor<1x1xui64>, tensor<?x?xf64>) -> tensor<?x?xf64> {
// CHECK-NEXT: ^bb0(%[[K:.*]]: ui64, %[[C:.*]]: ui64, %[[X:.*]]: f64):
// CHECK-NEXT:   %[[I:.*]] = scalar.linear_index : ui64
// CHECK-NEXT:   scalar.add %[[C]], %[[I]] : ui64
// CHECK:        scalar.lt
// CHECK:        scalar.mul %[[X]]
// CHECK:      func.return %[[F]]
// EXPLAIN: fuse: fused 4 ops (random, lt, cast, mul) at {{.*}}: 3 inputs, 1 results
// The loops compute the position from the loop indices; the mask is never stored.
// LOOPS-LABEL: func.func @dropout
// LOOPS: loops.alloc
// LOOPS-NOT: loops.alloc
// LOOPS: loops.parallel (%[[I:.*]]) =
// LOOPS-NEXT: loops.for %[[J:.*]] =
// LOOPS-NOT: scalar.linear_index
// LOOPS: scalar.mul %[[I]], %{{.*}} : index
// LOOPS-NEXT: scalar.add %{{.*}}, %[[J]] : index
// LOOPS-NEXT: scalar.cast %{{.*}} : index -> ui64
// LOOPS-NOT: loops.parallel
// LOOPS-NOT: loops.alloc
// LOOPS: func.return
func.func @dropout(%x: tensor<?x?xf64>, %key: tensor<1x1xui64>, %counter: tensor<1x1xui64>) -> tensor<?x?xf64> {
  %n = tensor.shape_i %x, 0 : tensor<?x?xf64> -> tensor<i64>
  %m = tensor.shape_i %x, 1 : tensor<?x?xf64> -> tensor<i64>
  %u = tensor.random "uniform" %key, %counter(%n, %m) : (tensor<1x1xui64>, tensor<1x1xui64>, tensor<i64>, tensor<i64>) -> tensor<?x?xf64>
  %p = "tensor.constant"() {value = dense<0.8> : tensor<1x1xf64>} : () -> tensor<1x1xf64>
  %keep = "tensor.lt"(%u, %p) : (tensor<?x?xf64>, tensor<1x1xf64>) -> tensor<?x?xi1>
  %mask = tensor.cast %keep to f64 : tensor<?x?xi1> -> tensor<?x?xf64>
  %y = "tensor.mul"(%x, %mask) : (tensor<?x?xf64>, tensor<?x?xf64>) -> tensor<?x?xf64>
  func.return %y : tensor<?x?xf64>
}

// A size that is not an array's shape: the draws stay a loop of their own.
// CHECK-LABEL: func.func @given_size
// CHECK: tensor.random "normal" %key, %counter(%n) : (tensor<1xui64>, tensor<1xui64>, tensor<i64>) -> tensor<?xf32>
// EXPLAIN: fuse: boundary tensor.random at {{.*}} -> tensor.exp at {{.*}}: tensor.random's size is not the shape of an array
func.func @given_size(%n: tensor<i64>, %key: tensor<1xui64>, %counter: tensor<1xui64>) -> tensor<?xf32> {
  %z = tensor.random "normal" %key, %counter(%n) : (tensor<1xui64>, tensor<1xui64>, tensor<i64>) -> tensor<?xf32>
  %e = "tensor.exp"(%z) : (tensor<?xf32>) -> tensor<?xf32>
  func.return %e : tensor<?xf32>
}
