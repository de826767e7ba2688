// RUN: lowering-opt %s -p "map-to-gpu{block-size=32},outline-kernels" | filecheck %s

// Each gpu.launch becomes a kernel of gpu.module @kernels, named by what it does and numbered
// in program order, and a gpu.launch_func with the launch's sizes; the values the body read
// from outside are its arguments (the device buffer and the scalar), constants are copied in.
// CHECK-LABEL: func.func @two_kernels
// CHECK:       "gpu.launch_func"({{.*}}, %x, %s) {module = @kernels, kernel = @mul_0}
// CHECK:       "gpu.launch_func"({{.*}}, %x) {module = @kernels, kernel = @fill_1}
// CHECK-NOT:   "gpu.launch"(
// CHECK:       func.return
// CHECK:       "gpu.module"() ({
// CHECK:         "gpu.func"() ({
// CHECK-NEXT:    ^bb0(%{{.*}}: index, %x: !loops.buffer<?xf32, space="device">, %s: f32):
// CHECK:           "gpu.thread_id"()
// CHECK:           "scalar.mul"
// CHECK:           "gpu.return"() : () -> ()
// CHECK:         }) {sym_name = "mul_0", function_type = (index, !loops.buffer<?xf32, space="device">, f32) -> (), kernel = unit}
// CHECK:         "gpu.func"() ({
// CHECK:           "scalar.constant"() {value = 2.000000e+00 : f32}
// CHECK:         }) {sym_name = "fill_1", {{.*}}kernel = unit}
// CHECK:       }) {sym_name = "kernels"}
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
