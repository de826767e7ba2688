// RUN: lowering-opt %s --generic | filecheck %s
// RUN: lowering-opt %s --generic | lowering-opt --generic | filecheck %s
// RUN: lowering-opt %s | lowering-opt --generic | filecheck %s

// Every gpu op prints in the generic form and parses back unchanged.

// CHECK:      "gpu.module"() ({
// CHECK-NEXT:   "gpu.func"() ({
// CHECK-NEXT:   ^bb0(%x: !loops.buffer<?xf32, space="device">, %n: index):
// CHECK-NEXT:     %t = "gpu.thread_id"() {dimension = "x"} : () -> index
// CHECK-NEXT:     %b = "gpu.block_id"() {dimension = "y"} : () -> index
// CHECK-NEXT:     %bd = "gpu.block_dim"() {dimension = "z"} : () -> index
// CHECK-NEXT:     %gd = "gpu.grid_dim"() {dimension = "x"} : () -> index
// CHECK-NEXT:     %s = "gpu.shared_alloc"() : () -> !loops.buffer<64xf32, space="shared">
// CHECK-NEXT:     %v = "loops.load"(%x, %t) : (!loops.buffer<?xf32, space="device">, index) -> f32
// CHECK-NEXT:     "loops.store"(%v, %s, %t) : (f32, !loops.buffer<64xf32, space="shared">, index) -> ()
// CHECK-NEXT:     "gpu.barrier"() : () -> ()
// CHECK-NEXT:     %old = "gpu.atomic_rmw"(%v, %x, %b) {kind = "add"} : (f32, !loops.buffer<?xf32, space="device">, index) -> f32
// CHECK-NEXT:     %m = "gpu.atomic_rmw"(%v, %s, %t) {kind = "max"} : (f32, !loops.buffer<64xf32, space="shared">, index) -> f32
// CHECK-NEXT:     "gpu.return"() : () -> ()
// CHECK-NEXT:   }) {sym_name = "k", function_type = (!loops.buffer<?xf32, space="device">, index) -> (), kernel = unit} : () -> ()
// CHECK-NEXT: }) {sym_name = "kernels"} : () -> ()
// CHECK:      %d = "gpu.to_device"(%h) {context = "cuda"} : (!loops.buffer<?x4xf32, strides=[1, ?]>) -> !loops.buffer<?x4xf32, space="device">
// CHECK-NEXT: %flat = "loops.reshape_view"
// CHECK-NEXT: "gpu.launch_func"(%n, %one, %one, %n, %one, %one, %flat, %n) {module = @kernels, kernel = @k} : (index, index, index, index, index, index, !loops.buffer<?xf32, space="device">, index) -> ()
// CHECK-NEXT: "gpu.launch"(%one, %one, %one, %n, %one, %one) ({
// CHECK-NEXT:   %i = "gpu.thread_id"() {dimension = "x"} : () -> index
// CHECK-NEXT:   %e = "loops.load"(%flat, %i)
// CHECK-NEXT:   "gpu.terminator"() : () -> ()
// CHECK-NEXT: }) : (index, index, index, index, index, index) -> ()
// CHECK-NEXT: "gpu.sync"() : () -> ()
// CHECK-NEXT: %r = "gpu.to_host"(%d) {context = "dev0"} : (!loops.buffer<?x4xf32, space="device">) -> !loops.buffer<?x4xf32>
// CHECK-NEXT: "gpu.memcpy"(%d, %r) : (!loops.buffer<?x4xf32, space="device">, !loops.buffer<?x4xf32>) -> ()
// CHECK-NEXT: %tt = "gpu.to_device"(%y) {context = "cuda"} : (tensor<?xf32>) -> tensor<?xf32>

"gpu.module"() ({
  "gpu.func"() ({
  ^bb0(%x: !loops.buffer<?xf32, space="device">, %n: index):
    %t = "gpu.thread_id"() {dimension = "x"} : () -> index
    %b = "gpu.block_id"() {dimension = "y"} : () -> index
    %bd = "gpu.block_dim"() {dimension = "z"} : () -> index
    %gd = "gpu.grid_dim"() {dimension = "x"} : () -> index
    %s = "gpu.shared_alloc"() : () -> !loops.buffer<64xf32, space="shared">
    %v = "loops.load"(%x, %t) : (!loops.buffer<?xf32, space="device">, index) -> f32
    "loops.store"(%v, %s, %t) : (f32, !loops.buffer<64xf32, space="shared">, index) -> ()
    "gpu.barrier"() : () -> ()
    %old = "gpu.atomic_rmw"(%v, %x, %b) {kind = "add"} : (f32, !loops.buffer<?xf32, space="device">, index) -> f32
    %m = "gpu.atomic_rmw"(%v, %s, %t) {kind = "max"} : (f32, !loops.buffer<64xf32, space="shared">, index) -> f32
    "gpu.return"() : () -> ()
  }) {sym_name = "k", function_type = (!loops.buffer<?xf32, space="device">, index) -> (), kernel} : () -> ()
}) {sym_name = "kernels"} : () -> ()

func.func @main(%h: !loops.buffer<?x4xf32, strides=[1, ?]>, %n: index, %y: tensor<?xf32>) -> tensor<?xf32> {
  %one = "scalar.constant"() {value = 1 : index} : () -> index
  %d = "gpu.to_device"(%h) {context = "cuda"} : (!loops.buffer<?x4xf32, strides=[1, ?]>) -> !loops.buffer<?x4xf32, space="device">
  %flat = "loops.reshape_view"(%d, %n) {shape = [-9223372036854775808]} : (!loops.buffer<?x4xf32, space="device">, index) -> !loops.buffer<?xf32, space="device">
  "gpu.launch_func"(%n, %one, %one, %n, %one, %one, %flat, %n) {module = @kernels, kernel = @k} : (index, index, index, index, index, index, !loops.buffer<?xf32, space="device">, index) -> ()
  "gpu.launch"(%one, %one, %one, %n, %one, %one) ({
    %i = "gpu.thread_id"() {dimension = "x"} : () -> index
    %e = "loops.load"(%flat, %i) : (!loops.buffer<?xf32, space="device">, index) -> f32
    "gpu.terminator"() : () -> ()
  }) : (index, index, index, index, index, index) -> ()
  "gpu.sync"() : () -> ()
  %r = "gpu.to_host"(%d) {context = "dev0"} : (!loops.buffer<?x4xf32, space="device">) -> !loops.buffer<?x4xf32>
  "gpu.memcpy"(%d, %r) : (!loops.buffer<?x4xf32, space="device">, !loops.buffer<?x4xf32>) -> ()
  %tt = "gpu.to_device"(%y) {context = "cuda"} : (tensor<?xf32>) -> tensor<?xf32>
  func.return %tt : tensor<?xf32>
}
