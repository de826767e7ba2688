// RUN: not lowering-opt %s -p 'cse,canonicalise' 2>&1 | filecheck %s --check-prefix=PASS
// RUN: not lowering-opt %s -p 'canonicalize{max-iteration=3}' 2>&1 | filecheck %s --check-prefix=OPTION
// RUN: not lowering-opt %s -p 'canonicalize{max-iterations=many}' 2>&1 | filecheck %s --check-prefix=VALUE
// RUN: not lowering-opt %s -p 'cse,canonicalize{max-iterations=0}' 2>&1 | filecheck %s --check-prefix=RANGE
// RUN: not lowering-opt %s -p 'map-to-gpu{block-size=100}' 2>&1 | filecheck %s --check-prefix=POW2
// RUN: not lowering-opt %s --print-ir-afterall 2>&1 | filecheck %s --check-prefix=FLAG
// RUN: not lowering-opt %s --print-ir-after=csee 2>&1 | filecheck %s --check-prefix=DUMP
// RUN: not lowering-opt %s --emit irr 2>&1 | filecheck %s --check-prefix=EMIT
// RUN: not lowering-opt %s.missing 2>&1 | filecheck %s --check-prefix=MISSING

// No traceback for any of these: each is one message.

// PASS:      lowering-opt: invalid pass pipeline at column 5: unknown pass 'canonicalise'; did you mean 'canonicalize'{{.*}}?
// PASS-NEXT:   cse,canonicalise
// PASS-NEXT:       ^
// PASS-NOT:  Traceback

// OPTION: lowering-opt: invalid pass pipeline at column 14: unknown option 'max-iteration' of pass 'canonicalize'; did you mean 'max-iterations'? (its options: max-iterations, disable-patterns, test-convergence)

// VALUE: invalid pass pipeline at column 29: option 'max-iterations' of pass 'canonicalize': expected an integer, got 'many'

// Options out of their range are refused before any pass runs, at the value.
// RANGE:      lowering-opt: invalid pass pipeline at column 33: option 'max-iterations' of pass 'canonicalize' must be at least 1, got 0
// RANGE-NEXT:   cse,canonicalize{max-iterations=0}
// RANGE-NEXT:                                   ^
// RANGE-NOT:  Traceback

// POW2: lowering-opt: invalid pass pipeline at column 23: option 'block-size' of pass 'map-to-gpu' must be a power of two, got 100

// FLAG:     lowering-opt: error: unknown option '--print-ir-afterall'; did you mean '--print-ir-after-all'
// FLAG-NOT: Traceback

// DUMP: lowering-opt: error: --print-ir-after: unknown pass 'csee'; did you mean 'cse'

// EMIT: lowering-opt: error: unknown --emit stage 'irr'; did you mean 'ir'?

// MISSING: lowering-opt: error: cannot read '{{.*}}pipeline-errors.mlir.missing': No such file or directory

func.func @f(%x: f32) -> f32 {
  func.return %x : f32
}
