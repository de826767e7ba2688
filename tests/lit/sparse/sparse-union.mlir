// RUN: lowering-opt %s | filecheck %s --check-prefix=ROUNDTRIP
// RUN: lowering-opt %s -p bufferize | filecheck %s
// RUN: lowering-opt %s --emit llvm | filecheck %s --check-prefix=LLVM

// Two sparse operands: their ops print and parse back.
// ROUNDTRIP: %s = sparse.add %a, %b : (tensor<?x?xf64, #csr>, tensor<?x?xf64, #csr>) -> tensor<?x?xf64, #csr>
// ROUNDTRIP: %t = sparse.convert %bt : (tensor<?x?xf64, #csc>) -> tensor<?x?xf64, #csr>
// ROUNDTRIP: %p = sparse.spmm %a, %t : (tensor<?x?xf64, #csr>, tensor<?x?xf64, #csr>) -> tensor<?x?xf64, #csr>

// sparse.add builds each row with a workspace over the columns: a marker (-1 at first) says
// whether the row has met a column yet. A first sequential pass counts each row's distinct
// columns into running positions; the coordinates and values are allocated at that size.
// CHECK-LABEL: func.func @union
// CHECK:       loops.assert {{.*}}"sparse.add at {{.*}}sparse-union.mlir:[[# @LINE + 29]]:{{.*}}sizes in dimension 1 differ"
// CHECK:       %[[MARK:.*]] = loops.alloc({{.*}}) : !loops.buffer<?xi64>
// CHECK:       %[[ACC:.*]] = loops.alloc({{.*}}) : !loops.buffer<?xf64>
// CHECK:       %[[POS:.*]] = loops.alloc({{.*}}) : !loops.buffer<?xi64>
// CHECK:       loops.fill %{{.*}}, %[[MARK]]
// CHECK:       %[[NNZ:.*]] = loops.for %[[ROW:.*]] = {{.*}} iter_args
// CHECK:         loops.load %[[MARK]]
// CHECK:         scalar.ne
// CHECK:         loops.store %{{.*}}, %[[MARK]]
// CHECK:         loops.store %{{.*}}, %[[POS]]
// CHECK:       %[[N:.*]] = scalar.cast %[[NNZ]] : i64 -> index
// CHECK:       %[[CRD:.*]] = loops.alloc(%[[N]]) : !loops.buffer<?xi64>
// CHECK:       %[[VAL:.*]] = loops.alloc(%[[N]]) : !loops.buffer<?xf64>
// The second pass records a column when first met and accumulates, then writes the row.
// CHECK:       loops.fill %{{.*}}, %[[MARK]]
// CHECK:       loops.for
// CHECK:         loops.store %{{.*}}, %[[ACC]]
// CHECK:         loops.if
// CHECK:           loops.store %{{.*}}, %[[CRD]]
// CHECK:         loops.for
// CHECK:           loops.load %[[ACC]]
// CHECK:           loops.store %{{.*}}, %[[VAL]]

// The product and the conversion reach machine code.
// LLVM: define {{.*}}@union
// LLVM: define {{.*}}@product
func.func @union(%pa: tensor<?xi64>, %ca: tensor<?xi64>, %va: tensor<?xf64>, %sa: tensor<2xi64>, %pb: tensor<?xi64>, %cb: tensor<?xi64>, %vb: tensor<?xf64>, %sb: tensor<2xi64>) -> tensor<?x?xf64> {
  %a = sparse.assemble %pa, %ca, %va, %sa : (tensor<?xi64>, tensor<?xi64>, tensor<?xf64>, tensor<2xi64>) -> tensor<?x?xf64, #csr>
  %b = sparse.assemble %pb, %cb, %vb, %sb : (tensor<?xi64>, tensor<?xi64>, tensor<?xf64>, tensor<2xi64>) -> tensor<?x?xf64, #csr>
  %s = sparse.add %a, %b : (tensor<?x?xf64, #csr>, tensor<?x?xf64, #csr>) -> tensor<?x?xf64, #csr>
  %d = sparse.to_dense %s : (tensor<?x?xf64, #csr>) -> tensor<?x?xf64>
  func.return %d : tensor<?x?xf64>
}

func.func @product(%pa: tensor<?xi64>, %ca: tensor<?xi64>, %va: tensor<?xf64>, %sa: tensor<2xi64>, %pb: tensor<?xi64>, %cb: tensor<?xi64>, %vb: tensor<?xf64>, %sb: tensor<2xi64>) -> tensor<?x?xf64> {
  %a = sparse.assemble %pa, %ca, %va, %sa : (tensor<?xi64>, tensor<?xi64>, tensor<?xf64>, tensor<2xi64>) -> tensor<?x?xf64, #csr>
  %bt = sparse.assemble %pb, %cb, %vb, %sb : (tensor<?xi64>, tensor<?xi64>, tensor<?xf64>, tensor<2xi64>) -> tensor<?x?xf64, #csc>
  %t = sparse.convert %bt : (tensor<?x?xf64, #csc>) -> tensor<?x?xf64, #csr>
  %p = sparse.spmm %a, %t : (tensor<?x?xf64, #csr>, tensor<?x?xf64, #csr>) -> tensor<?x?xf64, #csr>
  %d = sparse.to_dense %p : (tensor<?x?xf64, #csr>) -> tensor<?x?xf64>
  func.return %d : tensor<?x?xf64>
}
