// RUN: not lowering-opt %s -p 'cse,canonicalize{disable-patterns=nope},dce' --reproducer %t 2>&1 | filecheck %s --check-prefix=NOTE
// RUN: filecheck %s --input-file %t --check-prefix=FILE
// RUN: not lowering-opt %t --run-reproducer 2>&1 | filecheck %s --check-prefix=AGAIN

// The reproducer holds the input of the failing pass (after cse) and that pass alone.

// NOTE: error: pass 'canonicalize' failed: disable-patterns: no canonicalization pattern is called 'nope'
// NOTE: note: reproducer written to {{.*}}reproducer.mlir.tmp

// FILE:      // configuration: -p 'canonicalize{disable-patterns=nope}'
// FILE-NEXT: // reproducer of: pass 'canonicalize' failed
// FILE-NEXT: module {
// FILE:        %a = scalar.add %x, %x : f32 loc(fused["{{.*}}reproducer.mlir":[[# @LINE + 7]]:8, "{{.*}}reproducer.mlir":[[# @LINE + 8]]:8])
// FILE-NOT:    %b =

// AGAIN: error: pass 'canonicalize' failed: disable-patterns: no canonicalization pattern is called 'nope'
// AGAIN-NOT: reproducer written

func.func @f(%x: f32) -> f32 {
  %a = "scalar.add"(%x, %x) : (f32, f32) -> f32
  %b = "scalar.add"(%x, %x) : (f32, f32) -> f32
  %c = "scalar.mul"(%a, %b) : (f32, f32) -> f32
  func.return %c : f32
}
