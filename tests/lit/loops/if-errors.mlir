// RUN: lowering-opt %s --split-input-file --verify-diagnostics

// The condition is an i1.
func.func @condition(%c: index, %a: f32) -> f32 {
  %r = "loops.if"(%c) ({ // expected-error {{loops.if: the condition must be i1, got index}}
    "loops.yield"(%a) : (f32) -> ()
  }, {
    "loops.yield"(%a) : (f32) -> ()
  }) : (index) -> f32
  func.return %r : f32
}

// -----

// Each branch yields the results' types.
func.func @yield_types(%c: i1, %a: f32, %b: f64) -> f32 {
  %r = loops.if %c -> f32 {
    loops.yield %a : f32
  } else {
    // expected-error @+1 {{loops.yield: yields (f64) but the results of loops.if are (f32)}}
    loops.yield %b : f64
  }
  func.return %r : f32
}

// -----

// A branch ends with loops.yield.
func.func @terminator(%c: i1, %a: f32) -> f32 {
  // expected-error @+1 {{loops.if: the body must end with loops.yield}}
  %r = "loops.if"(%c) ({
    "loops.yield"(%a) : (f32) -> ()
  }, {
    %s = "scalar.add"(%a, %a) : (f32, f32) -> f32
  }) : (i1) -> f32
  func.return %r : f32
}

// -----

// A branch takes no arguments.
func.func @arguments(%c: i1, %a: f32) -> f32 {
  // expected-error @+1 {{loops.if: body arguments (f32) should be ()}}
  %r = "loops.if"(%c) ({
    "loops.yield"(%a) : (f32) -> ()
  }, {
  ^bb0(%x: f32):
    "loops.yield"(%x) : (f32) -> ()
  }) : (i1) -> f32
  func.return %r : f32
}
