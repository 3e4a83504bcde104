// RUN: kiln-opt %s | kiln-opt | FileCheck %s
// RUN: kiln-opt %s --mlir-print-op-generic | kiln-opt | FileCheck %s

// CHECK-LABEL: func.func @constant
// CHECK: kiln.constant dense<[1, -1]> : tensor<2xi64>
// CHECK: kiln.constant dense_resource<weights> : tensor<2x2xf32>
func.func @constant() -> (tensor<2xi64>, tensor<2x2xf32>) {
  %0 = kiln.constant dense<[1, -1]> : tensor<2xi64>
  %1 = kiln.constant dense_resource<weights> : tensor<2x2xf32>
  return %0, %1 : tensor<2xi64>, tensor<2x2xf32>
}

// CHECK-LABEL: func.func @reshape
// CHECK: kiln.reshape %{{.*}} to [2, -1] : tensor<6xf32> -> tensor<2x3xf32>
// CHECK: kiln.reshape %{{.*}} by %{{.*}} : tensor<6xf32>, tensor<2xi64> -> tensor<?x?xf32>
func.func @reshape(%x: tensor<6xf32>, %s: tensor<2xi64>) -> (tensor<2x3xf32>, tensor<?x?xf32>) {
  %0 = kiln.reshape %x to [2, -1] : tensor<6xf32> -> tensor<2x3xf32>
  %1 = kiln.reshape %x by %s : tensor<6xf32>, tensor<2xi64> -> tensor<?x?xf32>
  return %0, %1 : tensor<2x3xf32>, tensor<?x?xf32>
}

// CHECK-LABEL: func.func @expand
// CHECK: kiln.expand %{{.*}} to [4, 1] : tensor<1x3xf32> -> tensor<4x3xf32>
// CHECK: kiln.expand %{{.*}} by %{{.*}} : tensor<1x3xf32>, tensor<3xi64> -> tensor<?x?x?xf32>
func.func @expand(%x: tensor<1x3xf32>, %s: tensor<3xi64>) -> (tensor<4x3xf32>, tensor<?x?x?xf32>) {
  %0 = kiln.expand %x to [4, 1] : tensor<1x3xf32> -> tensor<4x3xf32>
  %1 = kiln.expand %x by %s : tensor<1x3xf32>, tensor<3xi64> -> tensor<?x?x?xf32>
  return %0, %1 : tensor<4x3xf32>, tensor<?x?x?xf32>
}

// CHECK-LABEL: func.func @transpose
// CHECK: kiln.transpose %{{.*}} perm = [0, 2, 1, 3] : tensor<1x128x12x64xf32> -> tensor<1x12x128x64xf32>
func.func @transpose(%x: tensor<1x128x12x64xf32>) -> tensor<1x12x128x64xf32> {
  %0 = kiln.transpose %x perm = [0, 2, 1, 3] : tensor<1x128x12x64xf32> -> tensor<1x12x128x64xf32>
  return %0 : tensor<1x12x128x64xf32>
}

// CHECK-LABEL: func.func @concat_split
// CHECK: kiln.concat %{{.*}}, %{{.*}} axis = 1 : (tensor<2x3xf32>, tensor<2x5xf32>) -> tensor<2x8xf32>
// CHECK: kiln.split %{{.*}} axis = 1 sizes = [4, 4] : tensor<2x8xf32> -> tensor<2x4xf32>, tensor<2x4xf32>
func.func @concat_split(%a: tensor<2x3xf32>, %b: tensor<2x5xf32>) -> (tensor<2x4xf32>, tensor<2x4xf32>) {
  %0 = kiln.concat %a, %b axis = 1 : (tensor<2x3xf32>, tensor<2x5xf32>) -> tensor<2x8xf32>
  %1:2 = kiln.split %0 axis = 1 sizes = [4, 4] : tensor<2x8xf32> -> tensor<2x4xf32>, tensor<2x4xf32>
  return %1#0, %1#1 : tensor<2x4xf32>, tensor<2x4xf32>
}

// CHECK-LABEL: func.func @slice
// CHECK: kiln.slice %{{.*}} starts = [0, 1] ends = [4, 7] steps = [1, 2] : tensor<4x8xf32> -> tensor<4x3xf32>
// CHECK: kiln.slice %{{.*}} starts = [3, 7] ends = [-1, -1] steps = [-1, -1] : tensor<4x8xf32> -> tensor<4x8xf32>
func.func @slice(%x: tensor<4x8xf32>) -> (tensor<4x3xf32>, tensor<4x8xf32>) {
  %0 = kiln.slice %x starts = [0, 1] ends = [4, 7] steps = [1, 2] : tensor<4x8xf32> -> tensor<4x3xf32>
  %1 = kiln.slice %x starts = [3, 7] ends = [-1, -1] steps = [-1, -1] : tensor<4x8xf32> -> tensor<4x8xf32>
  return %0, %1 : tensor<4x3xf32>, tensor<4x8xf32>
}

// CHECK-LABEL: func.func @gather
// CHECK: kiln.gather %{{.*}}[%{{.*}}] axis = 0 : (tensor<30522x768xf32>, tensor<1x128xi64>) -> tensor<1x128x768xf32>
func.func @gather(%table: tensor<30522x768xf32>, %ids: tensor<1x128xi64>) -> tensor<1x128x768xf32> {
  %0 = kiln.gather %table[%ids] axis = 0 : (tensor<30522x768xf32>, tensor<1x128xi64>) -> tensor<1x128x768xf32>
  return %0 : tensor<1x128x768xf32>
}

// CHECK-LABEL: func.func @pad
// CHECK: kiln.pad %{{.*}} pads = [0, 0, 1, 1, 0, 0, 1, 1] mode = constant {value = 1.500000e+00 : f64} : tensor<1x3x4x4xf32> -> tensor<1x3x6x6xf32>
// CHECK: kiln.pad %{{.*}} pads = [1, 2] mode = reflect : tensor<5xf32> -> tensor<8xf32>
// CHECK: kiln.pad %{{.*}} pads = [1, 2] mode = edge : tensor<5xf32> -> tensor<8xf32>
func.func @pad(%x: tensor<1x3x4x4xf32>, %y: tensor<5xf32>) -> (tensor<1x3x6x6xf32>, tensor<8xf32>, tensor<8xf32>) {
  %0 = kiln.pad %x pads = [0, 0, 1, 1, 0, 0, 1, 1] mode = constant {value = 1.5 : f64} : tensor<1x3x4x4xf32> -> tensor<1x3x6x6xf32>
  %1 = kiln.pad %y pads = [1, 2] mode = reflect : tensor<5xf32> -> tensor<8xf32>
  %2 = kiln.pad %y pads = [1, 2] mode = edge : tensor<5xf32> -> tensor<8xf32>
  return %0, %1, %2 : tensor<1x3x6x6xf32>, tensor<8xf32>, tensor<8xf32>
}

// CHECK-LABEL: func.func @shape_of
// CHECK: kiln.shape_of %{{.*}} : tensor<?x3xf32> -> tensor<2xi64>
func.func @shape_of(%x: tensor<?x3xf32>) -> tensor<2xi64> {
  %0 = kiln.shape_of %x : tensor<?x3xf32> -> tensor<2xi64>
  return %0 : tensor<2xi64>
}

// CHECK-LABEL: func.func @resize
// CHECK: kiln.resize %{{.*}} sizes = [1, 3, 8, 8] scales = [1.000000e+00, 1.000000e+00, 2.000000e+00, 2.000000e+00] mode = linear coordinate_transform = half_pixel nearest_mode = round_prefer_floor : tensor<1x3x4x4xf32> -> tensor<1x3x8x8xf32>
// CHECK: kiln.resize %{{.*}} sizes = [1, 3, 2, 2] scales = [1.000000e+00, 1.000000e+00, 5.000000e-01, 5.000000e-01] mode = nearest coordinate_transform = asymmetric nearest_mode = floor : tensor<1x3x4x4xf32> -> tensor<1x3x2x2xf32>
func.func @resize(%x: tensor<1x3x4x4xf32>) -> (tensor<1x3x8x8xf32>, tensor<1x3x2x2xf32>) {
  %0 = kiln.resize %x sizes = [1, 3, 8, 8] scales = [1.0, 1.0, 2.0, 2.0] mode = linear coordinate_transform = half_pixel nearest_mode = round_prefer_floor : tensor<1x3x4x4xf32> -> tensor<1x3x8x8xf32>
  %1 = kiln.resize %x sizes = [1, 3, 2, 2] scales = [1.0, 1.0, 0.5, 0.5] mode = nearest coordinate_transform = asymmetric nearest_mode = floor : tensor<1x3x4x4xf32> -> tensor<1x3x2x2xf32>
  return %0, %1 : tensor<1x3x8x8xf32>, tensor<1x3x2x2xf32>
}

{-#
  dialect_resources: {
    builtin: {
      weights: "0x040000000000803F000000400000404000008040"
    }
  }
#-}
