// RUN: lowering-opt %s -p cse,dce --print-ir-after-all 2>&1 >/dev/null | filecheck %s --check-prefix=AFTER-ALL
// RUN: lowering-opt %s -p cse,dce --print-ir-before-all 2>&1 >/dev/null | filecheck %s --check-prefix=BEFORE-ALL
// RUN: lowering-opt %s -p cse,dce,canonicalize --print-ir-before=dce --print-ir-after=cse,canonicalize 2>&1 >/dev/null | filecheck %s --check-prefix=NAMED
// RUN: lowering-opt %s -p dce,cse,dce --print-ir-after-change 2>&1 >/dev/null | filecheck %s --check-prefix=CHANGE
// RUN: not lowering-opt %s -p 'cse,canonicalize{disable-patterns=nope}' --print-ir-after-failure 2>&1 >/dev/null | filecheck %s --check-prefix=FAILURE

func.func @f(%x: f32) -> f32 {
  %a = "scalar.add"(%x, %x) : (f32, f32) -> f32
  %b = "scalar.add"(%x, %x) : (f32, f32) -> f32
  %c = "scalar.mul"(%a, %b) : (f32, f32) -> f32
  func.return %c : f32
}

// AFTER-ALL:      // -----// IR Dump After cse //----- //
// AFTER-ALL-NEXT: module {
// AFTER-ALL:        %a = scalar.add %x, %x
// AFTER-ALL-NEXT:   %c = scalar.mul %a, %a
// AFTER-ALL:      // -----// IR Dump After dce //----- //
// AFTER-ALL-NEXT: module {
// AFTER-ALL-NOT:  IR Dump

// BEFORE-ALL:      // -----// IR Dump Before cse //----- //
// BEFORE-ALL:        %b = scalar.add %x, %x
// BEFORE-ALL:      // -----// IR Dump Before dce //----- //
// BEFORE-ALL-NOT:    %b =
// BEFORE-ALL-NOT:  IR Dump

// NAMED:     // -----// IR Dump After cse //----- //
// NAMED:     // -----// IR Dump Before dce //----- //
// NAMED:     // -----// IR Dump After canonicalize //----- //
// NAMED-NOT: IR Dump

// Only the cse run changes the IR.
// CHANGE-NOT: IR Dump After dce
// CHANGE:     // -----// IR Dump After cse //----- //
// CHANGE-NOT: IR Dump

// FAILURE:      // -----// IR Dump After canonicalize{disable-patterns=nope} Failed //----- //
// FAILURE-NEXT: module {
// FAILURE:      error: pass 'canonicalize' failed: disable-patterns: no canonicalization pattern is called 'nope'
