// RUN: lowering-opt %s --load-dialect test -p canonicalize | filecheck %s
// RUN: not lowering-opt %s 2>&1 | filecheck %s --check-prefix=DEFAULT
// RUN: not lowering-opt %s --load-dialect tset 2>&1 | filecheck %s --check-prefix=UNKNOWN

// The test dialect is read only through a context that loads it; canonicalize then applies its
// ops' folds and patterns: constants fold, x * 1 becomes x, unused pure ops go.
// DEFAULT: error: unknown dialect 'test' in op 'test.constant'
// UNKNOWN: error: --load-dialect: unknown dialect 'tset'; did you mean 'test'?

// CHECK-LABEL: func.func @f
func.func @f(%x: i64) -> i64 {
  // CHECK-NEXT: %six = test.constant 6
  // CHECK-NEXT: %r = test.add %x, %six : i64
  // CHECK-NEXT: func.return %r : i64
  %one = test.constant 1
  %two = test.constant 2
  %three = test.constant 3
  %six = test.mul %two, %three : i64
  %y = test.mul %x, %one : i64
  %dead = "test.pure"(%y) : (i64) -> i64
  %r = test.add %y, %six : i64
  func.return %r : i64
}
