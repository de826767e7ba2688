// RUN: lowering-opt %S/Inputs/make_module.py:compiled -p cse | filecheck %s
// RUN: lowering-opt %S/Inputs/make_module.py:module -p cse | filecheck %s
// RUN: not lowering-opt %S/Inputs/make_module.py:modul 2>&1 | filecheck %s --check-prefix=MISSING
// RUN: not lowering-opt %S/Inputs/make_module.py:not_ir 2>&1 | filecheck %s --check-prefix=NOT-IR
// RUN: not lowering-opt %S/Inputs/make_module.py 2>&1 | filecheck %s --check-prefix=NO-NAME

// The module-level object gives the IR: through ir_module(), or by being a module.
// CHECK:      func.func @twice
// CHECK-NEXT:   %a = scalar.add %x, %x
// CHECK-NEXT:   %c = scalar.mul %a, %a

// MISSING: lowering-opt: error: '{{.*}}make_module.py' defines no 'modul'; did you mean 'module'
// NOT-IR:  lowering-opt: error: 'not_ir' in '{{.*}}make_module.py' is of type int; expected a compiled function (with an ir_module() method) or an IR module
// NO-NAME: lowering-opt: error: '{{.*}}make_module.py': name the object that gives the IR, as {{.*}}make_module.py:<name>
