// RUN: lowering-opt %s -p "map-to-gpu{block-size=32},outline-kernels" | filecheck %s

// Each gpu.launch becomes a kernel of gpu.module @kernels, named by what it does and numbered
// in program order, and a gpu.launch_func with the launch's sizes; the values the body read
// from outside are its arguments (the device buffer and the scalar), constants are copied in.
// CHECK-LABEL: func.func @two_kernels
// CHECK:       gpu.launch_func @kernels @mul_0 blocks({{.*}} args({{.*}}, %x, %s :
// CHECK:       gpu.launch_func @kernels @fill_1 blocks({{.*}} args({{.*}}, %x :
// CHECK-NOT:   gpu.launch blocks(
// CHECK:       func.return
// CHECK:       gpu.module @kernels {
// CHECK:         gpu.func @mul_0(%{{.*}}: index, %x: !loops.buffer<?xf32, space="device">, %s: f32) attributes {kernel = unit} {
// CHECK:           gpu.thread_id
// CHECK:           scalar.mul
// CHECK:           gpu.return
// CHECK:         }
// CHECK:         gpu.func @fill_1({{.*}}) attributes {kernel = unit} {
// CHECK:           scalar.constant 2.000000e+00 : f32
// CHECK:         }
// CHECK:       }
func.func @two_kernels(%x: !loops.buffer<?xf32, space="device">, %s: f32) {
  %c0 = "scalar.constant"() {value = 0 : index} : () -> index
  %c1 = "scalar.constant"() {value = 1 : index} : () -> index
  %two = "scalar.constant"() {value = 2.0 : f32} : () -> f32
  %n = loops.dim %x, 0 : !loops.buffer<?xf32, space="device">
  loops.parallel (%i) = (%c0) to (%n) step (%c1) {
    %v = loops.load %x[%i] : !loops.buffer<?xf32, space="device">
    %w = "scalar.mul"(%v, %s) : (f32, f32) -> f32
    loops.store %w, %x[%i] : !loops.buffer<?xf32, space="device">
    loops.yield
  }
  loops.fill %two, %x : !loops.buffer<?xf32, space="device">
  func.return
}
