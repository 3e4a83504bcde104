// RUN: kiln-opt %s | kiln-opt | FileCheck %s
// RUN: kiln-opt %s --mlir-print-op-generic | kiln-opt | FileCheck %s

// CHECK-LABEL: func.func @matmul
// CHECK: kiln.matmul %{{.*}}, %{{.*}} : (tensor<128x768xf32>, tensor<768x3072xf32>) -> tensor<128x3072xf32>
func.func @matmul(%a: tensor<128x768xf32>, %b: tensor<768x3072xf32>) -> tensor<128x3072xf32> {
  %0 = kiln.matmul %a, %b : (tensor<128x768xf32>, tensor<768x3072xf32>) -> tensor<128x3072xf32>
  return %0 : tensor<128x3072xf32>
}

// CHECK-LABEL: func.func @batch_matmul_broadcast
// CHECK: kiln.matmul %{{.*}}, %{{.*}} : (tensor<2x12x128x64xf32>, tensor<64x128xf32>) -> tensor<2x12x128x128xf32>
func.func @batch_matmul_broadcast(%a: tensor<2x12x128x64xf32>, %b: tensor<64x128xf32>) -> tensor<2x12x128x128xf32> {
  %0 = kiln.matmul %a, %b : (tensor<2x12x128x64xf32>, tensor<64x128xf32>) -> tensor<2x12x128x128xf32>
  return %0 : tensor<2x12x128x128xf32>
}

// CHECK-LABEL: func.func @conv2d_bias
// CHECK: kiln.conv %{{.*}}, %{{.*}}, %{{.*}} strides = [2, 2] dilations = [1, 1] pads = [3, 3, 3, 3] groups = 1 : (tensor<1x3x224x224xf32>, tensor<64x3x7x7xf32>, tensor<64xf32>) -> tensor<1x64x112x112xf32>
func.func @conv2d_bias(%x: tensor<1x3x224x224xf32>, %w: tensor<64x3x7x7xf32>, %b: tensor<64xf32>) -> tensor<1x64x112x112xf32> {
  %0 = kiln.conv %x, %w, %b strides = [2, 2] dilations = [1, 1] pads = [3, 3, 3, 3] groups = 1 : (tensor<1x3x224x224xf32>, tensor<64x3x7x7xf32>, tensor<64xf32>) -> tensor<1x64x112x112xf32>
  return %0 : tensor<1x64x112x112xf32>
}

// CHECK-LABEL: func.func @conv1d_depthwise_no_bias
// CHECK: kiln.conv %{{.*}}, %{{.*}} strides = [1] dilations = [2] pads = [2, 2] groups = 8 : (tensor<1x8x16xf32>, tensor<8x1x3xf32>) -> tensor<1x8x16xf32>
func.func @conv1d_depthwise_no_bias(%x: tensor<1x8x16xf32>, %w: tensor<8x1x3xf32>) -> tensor<1x8x16xf32> {
  %0 = kiln.conv %x, %w strides = [1] dilations = [2] pads = [2, 2] groups = 8 : (tensor<1x8x16xf32>, tensor<8x1x3xf32>) -> tensor<1x8x16xf32>
  return %0 : tensor<1x8x16xf32>
}

// CHECK-LABEL: func.func @max_pool
// CHECK: kiln.max_pool %{{.*}} kernel = [3, 3] strides = [2, 2] dilations = [1, 1] pads = [1, 1, 1, 1] : tensor<1x64x112x112xf32> -> tensor<1x64x56x56xf32>
func.func @max_pool(%x: tensor<1x64x112x112xf32>) -> tensor<1x64x56x56xf32> {
  %0 = kiln.max_pool %x kernel = [3, 3] strides = [2, 2] dilations = [1, 1] pads = [1, 1, 1, 1] : tensor<1x64x112x112xf32> -> tensor<1x64x56x56xf32>
  return %0 : tensor<1x64x56x56xf32>
}

// CHECK-LABEL: func.func @avg_pool_ceil
// CHECK: kiln.avg_pool %{{.*}} kernel = [3] strides = [2] dilations = [1] pads = [0, 0] {ceil_mode, count_include_pad} : tensor<1x4x6xf32> -> tensor<1x4x3xf32>
func.func @avg_pool_ceil(%x: tensor<1x4x6xf32>) -> tensor<1x4x3xf32> {
  %0 = kiln.avg_pool %x kernel = [3] strides = [2] dilations = [1] pads = [0, 0] {ceil_mode, count_include_pad} : tensor<1x4x6xf32> -> tensor<1x4x3xf32>
  return %0 : tensor<1x4x3xf32>
}
