// RUN: kiln-opt %s -split-input-file --kiln-shape-inference | FileCheck %s

// A 20-op function mixing every op family; the arguments are the only
// static shapes. Every result and the function type get refined.
// CHECK-LABEL: func.func @mixed_families
// CHECK-SAME: -> (tensor<1x16x4x4xf32>, tensor<1x10xf32>, tensor<1xi64>, tensor<2xi64>, tensor<1x8x16xf32>)
// CHECK: kiln.conv {{.*}} -> tensor<1x16x8x8xf32>
// CHECK: kiln.relu {{.*}} -> tensor<1x16x8x8xf32>
// CHECK: kiln.max_pool {{.*}} -> tensor<1x16x4x4xf32>
// CHECK: kiln.reduce_mean {{.*}} -> tensor<1x16x1x1xf32>
// CHECK: kiln.reshape {{.*}} -> tensor<1x16xf32>
// CHECK: kiln.matmul {{.*}} -> tensor<1x10xf32>
// CHECK: kiln.add {{.*}} -> tensor<1x10xf32>
// CHECK: kiln.softmax {{.*}} -> tensor<1x10xf32>
// CHECK: kiln.argmax {{.*}} -> tensor<1xi64>
// CHECK: kiln.shape_of {{.*}} -> tensor<2xi64>
// CHECK: kiln.transpose {{.*}} -> tensor<1x16x16xf32>
// CHECK: kiln.slice {{.*}} -> tensor<1x8x16xf32>
// CHECK: kiln.concat {{.*}} -> tensor<1x16x16xf32>
// CHECK: kiln.split {{.*}} -> tensor<1x8x16xf32>, tensor<1x8x16xf32>
// CHECK: kiln.compare {{.*}} -> tensor<1x8x16xi1>
// CHECK: kiln.select {{.*}} -> tensor<1x8x16xf32>
// CHECK: kiln.gather {{.*}} -> tensor<1x2x16xf32>
// CHECK: kiln.pad {{.*}} -> tensor<1x8x16xf32>
// CHECK: kiln.avg_pool {{.*}} -> tensor<1x16x4x4xf32>
// CHECK: kiln.sigmoid {{.*}} -> tensor<1x16x4x4xf32>
func.func @mixed_families(%x: tensor<1x3x8x8xf32>, %w: tensor<16x3x3x3xf32>,
                          %fc: tensor<16x10xf32>, %b: tensor<10xf32>,
                          %idx: tensor<2xi64>)
    -> (tensor<?x?x?x?xf32>, tensor<?x?xf32>, tensor<?xi64>, tensor<?xi64>, tensor<?x?x?xf32>) {
  %0 = kiln.conv %x, %w strides = [1, 1] dilations = [1, 1] pads = [1, 1, 1, 1] groups = 1 : (tensor<1x3x8x8xf32>, tensor<16x3x3x3xf32>) -> tensor<?x?x?x?xf32>
  %1 = kiln.relu %0 : tensor<?x?x?x?xf32> -> tensor<?x?x?x?xf32>
  %2 = kiln.max_pool %1 kernel = [2, 2] strides = [2, 2] dilations = [1, 1] pads = [0, 0, 0, 0] : tensor<?x?x?x?xf32> -> tensor<?x?x?x?xf32>
  %3 = kiln.reduce_mean %2 axes = [2, 3] keepdims : tensor<?x?x?x?xf32> -> tensor<?x?x?x?xf32>
  %4 = kiln.reshape %3 to [1, -1] : tensor<?x?x?x?xf32> -> tensor<?x?xf32>
  %5 = kiln.matmul %4, %fc : (tensor<?x?xf32>, tensor<16x10xf32>) -> tensor<?x?xf32>
  %6 = kiln.add %5, %b : (tensor<?x?xf32>, tensor<10xf32>) -> tensor<?x?xf32>
  %7 = kiln.softmax %6 axis = -1 : tensor<?x?xf32> -> tensor<?x?xf32>
  %8 = kiln.argmax %7 axis = 1 : tensor<?x?xf32> -> tensor<?xi64>
  %9 = kiln.shape_of %7 : tensor<?x?xf32> -> tensor<?xi64>
  %10 = kiln.reshape %2 to [1, 16, 16] : tensor<?x?x?x?xf32> -> tensor<?x?x?xf32>
  %11 = kiln.transpose %10 perm = [0, 2, 1] : tensor<?x?x?xf32> -> tensor<?x?x?xf32>
  %12 = kiln.slice %11 starts = [0, 0, 0] ends = [1, 16, 16] steps = [1, 2, 1] : tensor<?x?x?xf32> -> tensor<?x?x?xf32>
  %13 = kiln.concat %12, %12 axis = 1 : (tensor<?x?x?xf32>, tensor<?x?x?xf32>) -> tensor<?x?x?xf32>
  %14:2 = kiln.split %13 axis = 1 sizes = [8, 8] : tensor<?x?x?xf32> -> tensor<?x?x?xf32>, tensor<?x?x?xf32>
  %15 = kiln.compare gt, %14#0, %14#1 : (tensor<?x?x?xf32>, tensor<?x?x?xf32>) -> tensor<?x?x?xi1>
  %16 = kiln.select %15, %14#0, %14#1 : (tensor<?x?x?xi1>, tensor<?x?x?xf32>, tensor<?x?x?xf32>) -> tensor<?x?x?xf32>
  %17 = kiln.gather %16[%idx] axis = 1 : (tensor<?x?x?xf32>, tensor<2xi64>) -> tensor<?x?x?xf32>
  %18 = kiln.pad %17 pads = [0, 3, 0, 0, 3, 0] mode = constant : tensor<?x?x?xf32> -> tensor<?x?x?xf32>
  %19 = kiln.avg_pool %1 kernel = [2, 2] strides = [2, 2] dilations = [1, 1] pads = [0, 0, 0, 0] : tensor<?x?x?x?xf32> -> tensor<?x?x?x?xf32>
  %20 = kiln.sigmoid %19 : tensor<?x?x?x?xf32> -> tensor<?x?x?x?xf32>
  return %20, %6, %8, %9, %18 : tensor<?x?x?x?xf32>, tensor<?x?xf32>, tensor<?xi64>, tensor<?xi64>, tensor<?x?x?xf32>
}

// -----

// CHECK-LABEL: func.func @broadcast_corner_cases
// CHECK: kiln.add {{.*}} -> tensor<5x4x3xf32>
// CHECK: kiln.mul {{.*}} -> tensor<2x3xf32>
// CHECK: kiln.sub {{.*}} -> tensor<0x3xf32>
// CHECK: kiln.div {{.*}} -> tensor<?x7xf32>
// CHECK: kiln.max {{.*}} -> tensor<7x?xf32>
func.func @broadcast_corner_cases(%a: tensor<5x1x3xf32>, %b: tensor<4x1xf32>, %s: tensor<f32>,
                                  %m: tensor<2x3xf32>, %z: tensor<0x1xf32>, %r: tensor<3xf32>,
                                  %d: tensor<?x1xf32>, %e: tensor<7xf32>, %f: tensor<1x?xf32>, %g: tensor<7x1xf32>)
    -> (tensor<?x?x?xf32>, tensor<?x?xf32>, tensor<?x?xf32>, tensor<?x?xf32>, tensor<?x?xf32>) {
  // Rank extension on both sides.
  %0 = kiln.add %a, %b : (tensor<5x1x3xf32>, tensor<4x1xf32>) -> tensor<?x?x?xf32>
  // A scalar broadcasts to anything.
  %1 = kiln.mul %s, %m : (tensor<f32>, tensor<2x3xf32>) -> tensor<?x?xf32>
  // A zero-size dim broadcasts against 1.
  %2 = kiln.sub %z, %r : (tensor<0x1xf32>, tensor<3xf32>) -> tensor<?x?xf32>
  // A dynamic dim against 1 stays dynamic.
  %3 = kiln.div %d, %e : (tensor<?x1xf32>, tensor<7xf32>) -> tensor<?x?xf32>
  // A dynamic dim against 7 becomes 7; 1 against ? stays ?.
  %4 = kiln.max %f, %g : (tensor<1x?xf32>, tensor<7x1xf32>) -> tensor<?x?xf32>
  return %0, %1, %2, %3, %4 : tensor<?x?x?xf32>, tensor<?x?xf32>, tensor<?x?xf32>, tensor<?x?xf32>, tensor<?x?xf32>
}

// -----

// CHECK-LABEL: func.func @negative_axes_and_keepdims
// CHECK: kiln.reduce_sum {{.*}} -> tensor<2x3x1xf32>
// CHECK: kiln.reduce_max {{.*}} -> tensor<3xf32>
// CHECK: kiln.argmin {{.*}} -> tensor<2x1x4xi64>
// CHECK: kiln.concat {{.*}} -> tensor<2x3x8xf32>
// CHECK: kiln.gather {{.*}} -> tensor<2x3x5x6xf32>
func.func @negative_axes_and_keepdims(%x: tensor<2x3x4xf32>, %i: tensor<5x6xi32>)
    -> (tensor<?x?x?xf32>, tensor<?xf32>, tensor<?x?x?xi64>, tensor<?x?x?xf32>, tensor<?x?x?x?xf32>) {
  %0 = kiln.reduce_sum %x axes = [-1] keepdims : tensor<2x3x4xf32> -> tensor<?x?x?xf32>
  %1 = kiln.reduce_max %x axes = [-3, -1] : tensor<2x3x4xf32> -> tensor<?xf32>
  %2 = kiln.argmin %x axis = -2 keepdims : tensor<2x3x4xf32> -> tensor<?x?x?xi64>
  %3 = kiln.concat %x, %x axis = -1 : (tensor<2x3x4xf32>, tensor<2x3x4xf32>) -> tensor<?x?x?xf32>
  %4 = kiln.gather %x[%i] axis = -1 : (tensor<2x3x4xf32>, tensor<5x6xi32>) -> tensor<?x?x?x?xf32>
  return %0, %1, %2, %3, %4 : tensor<?x?x?xf32>, tensor<?xf32>, tensor<?x?x?xi64>, tensor<?x?x?xf32>, tensor<?x?x?x?xf32>
}

// -----

// CHECK-LABEL: func.func @conv_and_pool_output_sizes
// CHECK: kiln.conv {{.*}} -> tensor<1x64x112x112xf32>
// CHECK: kiln.conv {{.*}} -> tensor<1x32x56x56xf32>
// CHECK: kiln.conv {{.*}} -> tensor<2x8x6xf32>
// CHECK: kiln.max_pool {{.*}} -> tensor<1x64x56x56xf32>
// CHECK: kiln.avg_pool {{.*}} -> tensor<1x4x3xf32>
// CHECK: kiln.avg_pool {{.*}} -> tensor<1x4x2xf32>
func.func @conv_and_pool_output_sizes(%x: tensor<1x3x224x224xf32>, %w: tensor<64x3x7x7xf32>,
                                      %dx: tensor<1x32x56x56xf32>, %dw: tensor<32x1x3x3xf32>,
                                      %x1: tensor<2x4x10xf32>, %w1: tensor<8x4x3xf32>,
                                      %p: tensor<1x4x6xf32>)
    -> (tensor<?x?x?x?xf32>, tensor<?x?x?x?xf32>, tensor<?x?x?xf32>, tensor<?x?x?x?xf32>, tensor<?x?x?xf32>, tensor<?x?x?xf32>) {
  // ResNet stem: 7x7 stride 2 pad 3.
  %0 = kiln.conv %x, %w strides = [2, 2] dilations = [1, 1] pads = [3, 3, 3, 3] groups = 1 : (tensor<1x3x224x224xf32>, tensor<64x3x7x7xf32>) -> tensor<?x?x?x?xf32>
  // Depthwise 3x3 pad 1.
  %1 = kiln.conv %dx, %dw strides = [1, 1] dilations = [1, 1] pads = [1, 1, 1, 1] groups = 32 : (tensor<1x32x56x56xf32>, tensor<32x1x3x3xf32>) -> tensor<?x?x?x?xf32>
  // 1-d, dilation 2: 10 - 2*(3-1) = 6.
  %2 = kiln.conv %x1, %w1 strides = [1] dilations = [2] pads = [0, 0] groups = 1 : (tensor<2x4x10xf32>, tensor<8x4x3xf32>) -> tensor<?x?x?xf32>
  %3 = kiln.max_pool %0 kernel = [3, 3] strides = [2, 2] dilations = [1, 1] pads = [1, 1, 1, 1] : tensor<?x?x?x?xf32> -> tensor<?x?x?x?xf32>
  // ceil_mode rounds up: ceil((6-3)/2)+1 = 3; floor gives 2.
  %4 = kiln.avg_pool %p kernel = [3] strides = [2] dilations = [1] pads = [0, 0] {ceil_mode} : tensor<1x4x6xf32> -> tensor<?x?x?xf32>
  %5 = kiln.avg_pool %p kernel = [3] strides = [2] dilations = [1] pads = [0, 0] : tensor<1x4x6xf32> -> tensor<?x?x?xf32>
  return %0, %1, %2, %3, %4, %5 : tensor<?x?x?x?xf32>, tensor<?x?x?x?xf32>, tensor<?x?x?xf32>, tensor<?x?x?x?xf32>, tensor<?x?x?xf32>, tensor<?x?x?xf32>
}

// -----

// CHECK-LABEL: func.func @reshape_minus_one
// CHECK: kiln.reshape {{.*}} -> tensor<2x12xf32>
// CHECK: kiln.reshape {{.*}} -> tensor<6x4xf32>
// CHECK: kiln.reshape {{.*}} -> tensor<24xf32>
// CHECK: kiln.reshape {{.*}} -> tensor<?x4xf32>
func.func @reshape_minus_one(%x: tensor<2x3x4xf32>, %d: tensor<?x8xf32>)
    -> (tensor<?x?xf32>, tensor<?x?xf32>, tensor<?xf32>, tensor<?x?xf32>) {
  %0 = kiln.reshape %x to [2, -1] : tensor<2x3x4xf32> -> tensor<?x?xf32>
  %1 = kiln.reshape %x to [-1, 4] : tensor<2x3x4xf32> -> tensor<?x?xf32>
  %2 = kiln.reshape %x to [-1] : tensor<2x3x4xf32> -> tensor<?xf32>
  // Unknown input size: -1 stays unknown.
  %3 = kiln.reshape %d to [-1, 4] : tensor<?x8xf32> -> tensor<?x?xf32>
  return %0, %1, %2, %3 : tensor<?x?xf32>, tensor<?x?xf32>, tensor<?xf32>, tensor<?x?xf32>
}

// -----

// A declared static size that inference cannot see is kept.
// CHECK-LABEL: func.func @keeps_declared_static_dims
// CHECK: kiln.reshape {{.*}} by {{.*}} -> tensor<2x?xf32>
// CHECK: kiln.exp {{.*}} -> tensor<2x?xf32>
func.func @keeps_declared_static_dims(%x: tensor<6xf32>, %s: tensor<2xi64>) -> tensor<?x?xf32> {
  %0 = kiln.reshape %x by %s : tensor<6xf32>, tensor<2xi64> -> tensor<2x?xf32>
  %1 = kiln.exp %0 : tensor<2x?xf32> -> tensor<?x?xf32>
  return %1 : tensor<?x?xf32>
}

// -----

// Data movement and casts.
// CHECK-LABEL: func.func @data_movement
// CHECK: kiln.expand {{.*}} -> tensor<4x2x3xf32>
// CHECK: kiln.slice {{.*}} -> tensor<2x2x2xf32>
// CHECK: kiln.reshape {{.*}} -> tensor<4x2xf32>
// CHECK: kiln.cast {{.*}} -> tensor<4x2xf16>
// CHECK: kiln.pad {{.*}} -> tensor<6x1xf16>
// CHECK: kiln.matmul {{.*}} -> tensor<3x5x2x4xf32>
func.func @data_movement(%x: tensor<2x1xf32>, %y: tensor<1x3xf32>, %a: tensor<3x1x2x6xf32>, %b: tensor<5x6x4xf32>)
    -> (tensor<?x?x?xf32>, tensor<?x?xf16>, tensor<?x?x?x?xf32>) {
  %0 = kiln.expand %y to [4, 2, 1] : tensor<1x3xf32> -> tensor<?x?x?xf32>
  %1 = kiln.slice %0 starts = [3, 0, 2] ends = [-1, 2, -1] steps = [-2, 1, -2] : tensor<?x?x?xf32> -> tensor<?x?x?xf32>
  %2 = kiln.reshape %1 to [4, 2] : tensor<?x?x?xf32> -> tensor<?x?xf32>
  %3 = kiln.cast %2 to f16 : tensor<?x?xf32> -> tensor<?x?xf16>
  %4 = kiln.pad %3 pads = [1, 0, 1, -1] mode = constant : tensor<?x?xf16> -> tensor<?x?xf16>
  %5 = kiln.matmul %a, %b : (tensor<3x1x2x6xf32>, tensor<5x6x4xf32>) -> tensor<?x?x?x?xf32>
  return %0, %4, %5 : tensor<?x?x?xf32>, tensor<?x?xf16>, tensor<?x?x?x?xf32>
}
