// RUN: lowering-opt %s -p cse,canonicalize --timing 2>&1 >/dev/null | filecheck %s

// CHECK:      ... Execution time report ...
// CHECK:        Total Execution Time: {{[0-9.]+}} seconds
// CHECK:        ----Wall Time----  ----Name----
// CHECK-NEXT:     {{[0-9.]+}} ({{ *[0-9.]+}}%)  parse
// CHECK-NEXT:     {{[0-9.]+}} ({{ *[0-9.]+}}%)  cse
// CHECK-NEXT:     {{[0-9.]+}} ({{ *[0-9.]+}}%)  canonicalize
// CHECK-NEXT:     {{[0-9.]+}} ({{ *[0-9.]+}}%)  output
// CHECK-NEXT:     {{[0-9.]+}} (100.0%)  Total

func.func @f(%x: f32) -> f32 {
  func.return %x : f32
}
