// RUN: lowering-opt --list-passes | filecheck %s

// CHECK:      Passes:
// CHECK:        canonicalize {{ +}}Fold constants
// CHECK-NEXT:       max-iterations=<int>  (default: 10, at least 1)
// CHECK-NEXT:       disable-patterns=<list of string>  (default: empty)
// CHECK-NEXT:       test-convergence=<bool>  (default: false)
// CHECK:        cse {{ +}}Replace each PURE op
// CHECK:        dce {{ +}}Erase PURE ops
