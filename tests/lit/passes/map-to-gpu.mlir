// RUN: lowering-opt %s -p "map-to-gpu{block-size=64 elements-per-thread=2}" | filecheck %s
// RUN: lowering-opt %s -p "map-to-gpu{block-size=4}" | filecheck %s --check-prefix=TREE

// Elementwise work on a contiguous device buffer: one gpu.launch in place of the loop, its grid
// sized on the host (ceil(n / (64 * 2)), at least 1, at most 1024 blocks), a grid-stride loop
// taking two elements per step (a grid's width apart), then the remainder one per step.
// CHECK-LABEL: func.func @scale
// CHECK:       %n = loops.dim %x, 0
// CHECK:       %[[SPAN:.*]] = scalar.add %n, %{{.*}}
// CHECK:       %[[BLOCKS:.*]] = scalar.floordiv %[[SPAN]], %{{.*}}
// CHECK:       %[[ATLEAST:.*]] = scalar.maximum %[[BLOCKS]], %{{.*}}
// CHECK:       %[[GRID:.*]] = scalar.minimum %[[ATLEAST]], %{{.*}}
// CHECK:       gpu.launch blocks(%[[GRID]], {{.*}} attributes {kernel_name = "mul"} {
// CHECK:         %[[TID:.*]] = gpu.thread_id "x"
// CHECK:         %[[BID:.*]] = gpu.block_id "x"
// CHECK:         %[[BDIM:.*]] = gpu.block_dim "x"
// CHECK:         %[[GDIM:.*]] = gpu.grid_dim "x"
// CHECK:         loops.for %{{.*}} = %{{.*}} to %{{.*}} step %{{.*}} {
// CHECK-COUNT-2:   loops.store
// CHECK:           loops.yield
// CHECK:         loops.for %[[I:.*]] = %{{.*}} to %n step
// CHECK:           loops.load %x[%[[I]]]
// CHECK:           loops.store
// CHECK:         gpu.terminator
// CHECK:       }
// CHECK-NOT:   loops.parallel
// CHECK:       func.return
func.func @scale(%x: !loops.buffer<?xf32, space="device">, %s: f32) {
  %c0 = "scalar.constant"() {value = 0 : index} : () -> index
  %c1 = "scalar.constant"() {value = 1 : index} : () -> index
  %n = loops.dim %x, 0 : !loops.buffer<?xf32, space="device">
  loops.parallel (%i) = (%c0) to (%n) step (%c1) {
    %v = loops.load %x[%i] : !loops.buffer<?xf32, space="device">
    %w = "scalar.mul"(%v, %s) : (f32, f32) -> f32
    loops.store %w, %x[%i] : !loops.buffer<?xf32, space="device">
    loops.yield
  }
  func.return
}

// A row sum carried by loops.for: each row gets a group of threads, the smallest power of two
// at least the row's length and at most the block (chosen on the host: 1, 2 or 4 here); the
// groups take the rows in rounds over the blocks, each thread summing every group-size-th
// element of its row; a tree in shared memory (2 halvings for 4 threads, a barrier after each,
// run by the whole block) combines each group's sums, and the group's first thread stores it.
// TREE-LABEL: func.func @row_sums
// TREE:       scalar.le %n,
// TREE:       scalar.select 
// TREE:       scalar.le %n,
// TREE:       %[[WIDTH:.*]] = scalar.select 
// TREE:       gpu.launch {{.*}} attributes {kernel_name = "sum"} {
// TREE:         %[[CACHE:.*]] = gpu.shared_alloc : !loops.buffer<4xf32, space="shared">
// TREE:         %[[TID:.*]] = gpu.thread_id
// TREE:         %[[LANE:.*]] = scalar.mod %[[TID]], %[[WIDTH]]
// TREE:         loops.for %{{.*}} = %{{.*}} to %m step
// TREE:           %[[ROW:.*]] = scalar.minimum
// TREE:           %[[MINE:.*]] = loops.for %[[J:.*]] = %[[LANE]] to %{{.*}} step %[[WIDTH]] iter_args
// TREE:             loops.load %x[%[[ROW]], %[[J]]]
// TREE:           loops.store %[[MINE]], %[[CACHE]][%[[TID]]]
// TREE-NEXT:      gpu.barrier
// TREE:           gpu.barrier
// TREE:           gpu.barrier
// TREE:           loops.for
// TREE:             loops.load %[[CACHE]][%[[TID]]]
// TREE:             loops.store %{{.*}}, %out[%[[ROW]]]
// TREE:       }
func.func @row_sums(%x: !loops.buffer<?x?xf32, space="device">, %out: !loops.buffer<?xf32, space="device">) {
  %c0 = "scalar.constant"() {value = 0 : index} : () -> index
  %c1 = "scalar.constant"() {value = 1 : index} : () -> index
  %zero = "scalar.constant"() {value = 0.0 : f32} : () -> f32
  %m = loops.dim %x, 0 : !loops.buffer<?x?xf32, space="device">
  %n = loops.dim %x, 1 : !loops.buffer<?x?xf32, space="device">
  loops.parallel (%i) = (%c0) to (%m) step (%c1) {
    %s = loops.for %j = %c0 to %n step %c1 iter_args(%acc = %zero) -> f32 {
      %v = loops.load %x[%i, %j] : !loops.buffer<?x?xf32, space="device">
      %t = "scalar.add"(%acc, %v) : (f32, f32) -> f32
      loops.yield %t : f32
    }
    loops.store %s, %out[%i] : !loops.buffer<?xf32, space="device">
    loops.yield
  }
  func.return
}

// Host memory stays the host's: nothing to map.
// CHECK-LABEL: func.func @on_the_host
// CHECK-NOT:   gpu.launch
// CHECK:       loops.parallel
func.func @on_the_host(%x: !loops.buffer<?xf32>) {
  %c0 = "scalar.constant"() {value = 0 : index} : () -> index
  %c1 = "scalar.constant"() {value = 1 : index} : () -> index
  %n = loops.dim %x, 0 : !loops.buffer<?xf32>
  loops.parallel (%i) = (%c0) to (%n) step (%c1) {
    %v = loops.load %x[%i] : !loops.buffer<?xf32>
    loops.store %v, %x[%i] : !loops.buffer<?xf32>
    loops.yield
  }
  func.return
}
