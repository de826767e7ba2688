// RUN: lowering-opt %s --split-input-file | lowering-opt --split-input-file | filecheck %s


// The attributes of the lowering dialect read back as written, canonically printed.
// CHECK-LABEL: func.func @step
// CHECK-SAME:  attributes {lowering.shared_updates = {{\[\[}}1 : i64, 1 : i64]], lowering.mutable_args = [0 : i64], lowering.allow_inplace = unit, lowering.arg_devices = ["cpu", "cuda"], lowering.result_devices = ["cpu", "cuda"]}
func.func @step(%x: tensor<?xf32>, %w: tensor<?xf32>) -> (tensor<?xf32>, tensor<?xf32>)
    attributes {lowering.shared_updates = [[1, 1]], lowering.mutable_args = [0],
                lowering.allow_inplace, lowering.arg_devices = ["cpu", "cuda"],
                lowering.result_devices = ["cpu", "cuda"]} {
  func.return %x, %w : tensor<?xf32>, tensor<?xf32>
}

// -----

// A result updated in place is numbered as before it left the signature.
// CHECK-LABEL: func.func @updated
// CHECK-SAME:  attributes {lowering.updated_in_place = {{\[\[}}1 : i64, 0 : i64]]}
func.func @updated(%w: !loops.buffer<?xf32>) -> !loops.buffer<?xf32>
    attributes {lowering.updated_in_place = [[1, 0]]} {
  func.return %w : !loops.buffer<?xf32>
}
