// RUN: lowering-opt %s | filecheck %s --check-prefix=ROUNDTRIP
// RUN: lowering-opt %s -p bufferize | filecheck %s
// RUN: lowering-opt %s --emit llvm | filecheck %s --check-prefix=LLVM

// The sparse encoding is part of the tensor type, and prints and parses back.
// ROUNDTRIP: %s = sparse.assemble %pos, %crd, %val, %shape : (tensor<?xi64>, tensor<?xi64>, tensor<?xf64>, tensor<2xi64>) -> tensor<?x?xf64, #csr>
// ROUNDTRIP: sparse.matmul %s, %d : (tensor<?x?xf64, #csr>, tensor<?x?xf64>) -> tensor<?x?xf64>

// A CSR matrix is its positions, coordinates and values: the product runs over the rows in
// parallel, over each row's stored entries from positions[i] to positions[i + 1], and adds
// value * d[column, :] into the result row along its contiguous inner loop.
// CHECK-LABEL: func.func @spmm
// CHECK:       loops.assert {{.*}}"sparse.assemble at {{.*}}csr-matmul.mlir:33:{{.*}}one more position than the rows"
// CHECK:       %m = loops.alloc
// CHECK:       loops.fill
// CHECK:       loops.parallel (%[[ROW:.*]]) =
// CHECK:         %[[LO:.*]] = loops.load %pos[%[[ROW]]]
// CHECK:         %[[NEXT:.*]] = scalar.add %[[ROW]],
// CHECK:         %[[HI:.*]] = loops.load %pos[%[[NEXT]]]
// CHECK:         loops.for %[[P:.*]] = %{{.*}} to %{{.*}} step
// CHECK:           %[[COL:.*]] = loops.load %crd[%[[P]]]
// CHECK:           %[[VAL:.*]] = loops.load %val[%[[P]]]
// CHECK:           loops.for %[[J:.*]] = %{{.*}} to
// CHECK:             loops.load %d[%{{.*}}, %[[J]]]
// CHECK:             loops.load %m[%[[ROW]], %[[J]]]
// CHECK:             scalar.mul %[[VAL]],
// CHECK:             loops.store %{{.*}}, %m[%[[ROW]], %[[J]]]
// CHECK:       func.return %m

// The loops reach machine code: the row loop is a parallel body of its own.
// LLVM: define {{.*}}@lowering.parallel_body
func.func @spmm(%pos: tensor<?xi64>, %crd: tensor<?xi64>, %val: tensor<?xf64>, %shape: tensor<2xi64>, %d: tensor<?x?xf64>) -> tensor<?x?xf64> {
  %s = sparse.assemble %pos, %crd, %val, %shape : (tensor<?xi64>, tensor<?xi64>, tensor<?xf64>, tensor<2xi64>) -> tensor<?x?xf64, #csr>
  %m = sparse.matmul %s, %d : (tensor<?x?xf64, #csr>, tensor<?x?xf64>) -> tensor<?x?xf64>
  func.return %m : tensor<?x?xf64>
}
