// RUN: lowering-opt %s --split-input-file --verify-diagnostics

// Each attribute of the lowering dialect is checked against its kind and the function's
// signature; an unknown lowering.* name is an error.

// expected-error @+1 {{func.func @f: lowering.shared_updates: argument index 2 out of range (the function has 1 arguments)}}
func.func @f(%x: tensor<f32>) -> tensor<f32> attributes {lowering.shared_updates = [[0, 2]]} {
  func.return %x : tensor<f32>
}

// -----

// expected-error @+1 {{func.func @f: lowering.shared_updates: result index 1 out of range (the function has 1 results)}}
func.func @f(%x: tensor<f32>) -> tensor<f32> attributes {lowering.shared_updates = [[1, 0]]} {
  func.return %x : tensor<f32>
}

// -----

// expected-error @+1 {{func.func @f: lowering.updated_in_place: result index 2 out of range (the function has 2 results)}}
func.func @f(%x: tensor<f32>) -> tensor<f32> attributes {lowering.updated_in_place = [[2, 0]]} {
  func.return %x : tensor<f32>
}

// -----

// expected-error @+1 {{func.func @f: lowering.shared_updates must be an array of [integer, integer] pairs, got [0 : i64, 0 : i64]}}
func.func @f(%x: tensor<f32>) -> tensor<f32> attributes {lowering.shared_updates = [0, 0]} {
  func.return %x : tensor<f32>
}

// -----

// expected-error @+1 {{func.func @f: lowering.mutable_args: argument index -1 out of range (the function has 1 arguments)}}
func.func @f(%x: tensor<f32>) -> tensor<f32> attributes {lowering.mutable_args = [-1]} {
  func.return %x : tensor<f32>
}

// -----

// expected-error @+1 {{func.func @f: lowering.mutable_args must be an array of integers, got ["x"]}}
func.func @f(%x: tensor<f32>) -> tensor<f32> attributes {lowering.mutable_args = ["x"]} {
  func.return %x : tensor<f32>
}

// -----

// expected-error @+1 {{func.func @f: lowering.allow_inplace must be unit, got true}}
func.func @f(%x: tensor<f32>) -> tensor<f32> attributes {lowering.allow_inplace = true} {
  func.return %x : tensor<f32>
}

// -----

// expected-error @+1 {{func.func @f: lowering.arg_devices: 2 entries for the function's 1 arguments}}
func.func @f(%x: tensor<f32>) -> tensor<f32> attributes {lowering.arg_devices = ["cpu", "cuda"]} {
  func.return %x : tensor<f32>
}

// -----

// expected-error @+1 {{func.func @f: lowering.result_devices must be an array of strings, got [1 : i64]}}
func.func @f(%x: tensor<f32>) -> tensor<f32> attributes {lowering.result_devices = [1]} {
  func.return %x : tensor<f32>
}

// -----

// expected-error @+1 {{func.func @f: lowering.shared_update is not an attribute of the lowering dialect (it has lowering.allow_inplace, lowering.arg_devices, lowering.mutable_args, lowering.result_devices, lowering.shared_updates, lowering.updated_in_place)}}
func.func @f(%x: tensor<f32>) -> tensor<f32> attributes {lowering.shared_update = [[0, 0]]} {
  func.return %x : tensor<f32>
}

// -----

// A function attribute on another op.
func.func @f(%x: f32) -> f32 {
  // expected-error @+1 {{scalar.neg: lowering.allow_inplace: a function attribute, found on scalar.neg}}
  %y = "scalar.neg"(%x) {lowering.allow_inplace} : (f32) -> f32
  func.return %y : f32
}
