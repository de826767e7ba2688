// RUN: lowering-opt %s --split-input-file --verify-diagnostics
// RUN: not lowering-opt %s --split-input-file 2>&1 | filecheck %s

// Thread ids only exist inside a kernel.
// CHECK: gpu.thread_id is only valid inside a gpu.func or a gpu.launch, found in func.func
func.func @host(%n: index) -> index {
  // expected-error @+1 {{gpu.thread_id is only valid inside a gpu.func or a gpu.launch, found in func.func}}
  %t = "gpu.thread_id"() {dimension = "x"} : () -> index
  func.return %t : index
}

// -----

// A launch names a kernel that must exist.
// CHECK: gpu.launch_func: no kernel @kernels::@missing (kernels of @kernels: @k)
"gpu.module"() ({
  "gpu.func"() ({
  ^bb0(%n: index):
    "gpu.return"() : () -> ()
  }) {sym_name = "k", function_type = (index) -> (), kernel} : () -> ()
}) {sym_name = "kernels"} : () -> ()
func.func @main(%n: index) {
  // expected-error @+1 {{gpu.launch_func: no kernel @kernels::@missing (kernels of @kernels: @k)}}
  "gpu.launch_func"(%n, %n, %n, %n, %n, %n, %n) {module = @kernels, kernel = @missing} : (index, index, index, index, index, index, index) -> ()
  func.return
}

// -----

// Its arguments have the kernel's types.
// CHECK: gpu.launch_func: argument #0 has type f32, but @kernels::@k takes index
"gpu.module"() ({
  "gpu.func"() ({
  ^bb0(%n: index):
    "gpu.return"() : () -> ()
  }) {sym_name = "k", function_type = (index) -> (), kernel} : () -> ()
}) {sym_name = "kernels"} : () -> ()
func.func @main(%n: index, %x: f32) {
  // expected-error @+1 {{gpu.launch_func: argument #0 has type f32, but @kernels::@k takes index}}
  "gpu.launch_func"(%n, %n, %n, %n, %n, %n, %x) {module = @kernels, kernel = @k} : (index, index, index, index, index, index, f32) -> ()
  func.return
}

// -----

// A kernel takes device buffers and scalars, not host buffers.
// CHECK: a kernel takes device buffers (space "device") and scalars
"gpu.module"() ({
  // expected-error @+1 {{gpu.func @k: argument #0 has type !loops.buffer<?xf32>; a kernel takes device buffers (space "device") and scalars}}
  "gpu.func"() ({
  ^bb0(%x: !loops.buffer<?xf32>):
    "gpu.return"() : () -> ()
  }) {sym_name = "k", function_type = (!loops.buffer<?xf32>) -> (), kernel} : () -> ()
}) {sym_name = "kernels"} : () -> ()

// -----

// Shared memory has a static size.
// CHECK: gpu.shared_alloc: the result must be a static contiguous buffer
"gpu.module"() ({
  "gpu.func"() ({
  ^bb0(%n: index):
    // expected-error @+1 {{gpu.shared_alloc: the result must be a static contiguous buffer with offset 0 in space "shared", got !loops.buffer<?xf32, space="shared">}}
    %s = "gpu.shared_alloc"() : () -> !loops.buffer<?xf32, space="shared">
    "gpu.return"() : () -> ()
  }) {sym_name = "k", function_type = (index) -> (), kernel} : () -> ()
}) {sym_name = "kernels"} : () -> ()

// -----

// A transfer gives a fresh contiguous buffer in the other space.
// CHECK: gpu.to_host: result !loops.buffer<?xf32, space="device"> should be !loops.buffer<?xf32>
func.func @back(%d: !loops.buffer<?xf32, space="device">) {
  // expected-error @+1 {{gpu.to_host: result !loops.buffer<?xf32, space="device"> should be !loops.buffer<?xf32>}}
  %h = "gpu.to_host"(%d) {context = "cuda"} : (!loops.buffer<?xf32, space="device">) -> !loops.buffer<?xf32, space="device">
  func.return
}

// -----

// Atomics know four kinds.
// CHECK: gpu.atomic_rmw: attribute 'kind' must be one of add, max, min, exch, got 'sub'
"gpu.module"() ({
  "gpu.func"() ({
  ^bb0(%x: !loops.buffer<?xf32, space="device">, %v: f32, %i: index):
    // expected-error @+1 {{gpu.atomic_rmw: attribute 'kind' must be one of add, max, min, exch, got 'sub'}}
    %o = "gpu.atomic_rmw"(%v, %x, %i) {kind = "sub"} : (f32, !loops.buffer<?xf32, space="device">, index) -> f32
    "gpu.return"() : () -> ()
  }) {sym_name = "k", function_type = (!loops.buffer<?xf32, space="device">, f32, index) -> (), kernel} : () -> ()
}) {sym_name = "kernels"} : () -> ()
