// RUN: lowering-opt %s --split-input-file --verify-diagnostics

// A dense op does not take a sparse tensor.
func.func @exp_of_sparse(%x: tensor<?x?xf64, #csr>) -> tensor<?x?xf64, #csr> {
  // expected-error @+1 {{tensor.exp: operand #0 must be a dense tensor, got tensor<?x?xf64, #csr>}}
  %e = "tensor.exp"(%x) : (tensor<?x?xf64, #csr>) -> tensor<?x?xf64, #csr>
  func.return %e : tensor<?x?xf64, #csr>
}

// -----

// expected-error @+1 {{unknown sparse encoding '#coo'; known: #csr, #csc}}
func.func @coo(%x: tensor<?x?xf64, #coo>) {
  func.return
}

// -----

// expected-error @+1 {{a sparse tensor (#csr) must have rank 2, got rank 1}}
func.func @vector(%x: tensor<?xf64, #csr>) {
  func.return
}
