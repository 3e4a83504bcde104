// RUN: kiln-opt %s --pass-pipeline='builtin.module(func.func(kiln-split-grouped-convs{batched-group-channels=0}))' -split-input-file | FileCheck %s
// RUN: kiln-opt %s --pass-pipeline='builtin.module(func.func(kiln-split-grouped-convs{max-groups=1}))' -split-input-file | FileCheck %s --check-prefix=NOT-SPLIT
// RUN: kiln-opt %s --pass-pipeline='builtin.module(func.func(kiln-split-grouped-convs))' -split-input-file | FileCheck %s --check-prefix=DEFAULT

// 2 groups of 2 input and 2 output channels: each group's convolution reads
// its piece of the input with its 2 filters and 2 biases as constants, and
// the results are joined along the channels.
// CHECK-LABEL: func.func @two_groups
// CHECK: %[[PIECES:.*]]:2 = kiln.split %arg0 axis = 1 sizes = [2, 2] : tensor<1x4x5x5xf32> -> tensor<1x2x5x5xf32>, tensor<1x2x5x5xf32>
// CHECK: %[[W0:.*]] = kiln.constant dense<{{\[\[\[\[}}1.000000e+00]], {{\[\[}}2.000000e+00]]], {{\[\[\[}}3.000000e+00]], {{\[\[}}4.000000e+00]]]]> : tensor<2x2x1x1xf32>
// CHECK: %[[B0:.*]] = kiln.constant dense<[1.000000e-01, 2.000000e-01]> : tensor<2xf32>
// CHECK: %[[Y0:.*]] = kiln.conv %[[PIECES]]#0, %[[W0]], %[[B0]] strides = [1, 1] dilations = [1, 1] pads = [0, 0, 0, 0] groups = 1 : (tensor<1x2x5x5xf32>, tensor<2x2x1x1xf32>, tensor<2xf32>) -> tensor<1x2x5x5xf32>
// CHECK: %[[W1:.*]] = kiln.constant dense<{{\[\[\[\[}}5.000000e+00]], {{\[\[}}6.000000e+00]]], {{\[\[\[}}7.000000e+00]], {{\[\[}}8.000000e+00]]]]> : tensor<2x2x1x1xf32>
// CHECK: %[[B1:.*]] = kiln.constant dense<[3.000000e-01, 4.000000e-01]> : tensor<2xf32>
// CHECK: %[[Y1:.*]] = kiln.conv %[[PIECES]]#1, %[[W1]], %[[B1]]
// CHECK: %[[Y:.*]] = kiln.concat %[[Y0]], %[[Y1]] axis = 1 : (tensor<1x2x5x5xf32>, tensor<1x2x5x5xf32>) -> tensor<1x4x5x5xf32>
// CHECK: return %[[Y]]
// NOT-SPLIT-LABEL: func.func @two_groups
// NOT-SPLIT-NOT: kiln.split
// NOT-SPLIT: groups = 2
// One image and 2 channels a group (at most batched-group-channels, 16):
// left to the matmul batched over the groups.
// DEFAULT-LABEL: func.func @two_groups
// DEFAULT-NOT: kiln.split
// DEFAULT: groups = 2
func.func @two_groups(%x: tensor<1x4x5x5xf32>) -> tensor<1x4x5x5xf32> {
  %w = kiln.constant dense<[[[[1.0]], [[2.0]]], [[[3.0]], [[4.0]]], [[[5.0]], [[6.0]]], [[[7.0]], [[8.0]]]]> : tensor<4x2x1x1xf32>
  %b = kiln.constant dense<[0.1, 0.2, 0.3, 0.4]> : tensor<4xf32>
  %y = kiln.conv %x, %w, %b strides = [1, 1] dilations = [1, 1] pads = [0, 0, 0, 0] groups = 2 : (tensor<1x4x5x5xf32>, tensor<4x2x1x1xf32>, tensor<4xf32>) -> tensor<1x4x5x5xf32>
  return %y : tensor<1x4x5x5xf32>
}

// -----

// A batch, a 3x3 window with strides and pads, and a bias computed at run
// time (sliced per group).
// A batch is split whatever its groups' channels.
// DEFAULT-LABEL: func.func @batched
// DEFAULT: kiln.split %arg0 axis = 1 sizes = [3, 3]
// DEFAULT: kiln.concat
// CHECK-LABEL: func.func @batched
// CHECK: kiln.split %arg0 axis = 1 sizes = [3, 3] : tensor<2x6x9x9xf32> -> tensor<2x3x9x9xf32>, tensor<2x3x9x9xf32>
// CHECK: %[[B0:.*]] = kiln.slice %arg1 starts = [0] ends = [4] steps = [1] : tensor<8xf32> -> tensor<4xf32>
// CHECK: kiln.conv %{{.*}}#0, %{{.*}}, %[[B0]] strides = [2, 2] dilations = [1, 1] pads = [1, 1, 1, 1] groups = 1 : (tensor<2x3x9x9xf32>, tensor<4x3x3x3xf32>, tensor<4xf32>) -> tensor<2x4x5x5xf32>
// CHECK: %[[B1:.*]] = kiln.slice %arg1 starts = [4] ends = [8] steps = [1] : tensor<8xf32> -> tensor<4xf32>
// CHECK: kiln.conv %{{.*}}#1, %{{.*}}, %[[B1]]
// CHECK: kiln.concat %{{.*}}, %{{.*}} axis = 1 : (tensor<2x4x5x5xf32>, tensor<2x4x5x5xf32>) -> tensor<2x8x5x5xf32>
func.func @batched(%x: tensor<2x6x9x9xf32>, %b: tensor<8xf32>) -> tensor<2x8x5x5xf32> {
  %w = kiln.constant dense<0.5> : tensor<8x3x3x3xf32>
  %y = kiln.conv %x, %w, %b strides = [2, 2] dilations = [1, 1] pads = [1, 1, 1, 1] groups = 2 : (tensor<2x6x9x9xf32>, tensor<8x3x3x3xf32>, tensor<8xf32>) -> tensor<2x8x5x5xf32>
  return %y : tensor<2x8x5x5xf32>
}

// -----

// Left alone: a depthwise convolution (one input channel a group), filters
// computed at run time, and groups of one output channel.
// CHECK-LABEL: func.func @kept
// CHECK-NOT: kiln.split
// CHECK-COUNT-3: kiln.conv
// CHECK-NOT: kiln.concat
func.func @kept(%x: tensor<1x4x5x5xf32>, %w: tensor<4x2x1x1xf32>) -> (tensor<1x4x5x5xf32>, tensor<1x4x5x5xf32>, tensor<1x2x5x5xf32>) {
  %dw = kiln.constant dense<1.0> : tensor<4x1x3x3xf32>
  %0 = kiln.conv %x, %dw strides = [1, 1] dilations = [1, 1] pads = [1, 1, 1, 1] groups = 4 : (tensor<1x4x5x5xf32>, tensor<4x1x3x3xf32>) -> tensor<1x4x5x5xf32>
  %1 = kiln.conv %x, %w strides = [1, 1] dilations = [1, 1] pads = [0, 0, 0, 0] groups = 2 : (tensor<1x4x5x5xf32>, tensor<4x2x1x1xf32>) -> tensor<1x4x5x5xf32>
  %single = kiln.constant dense<1.0> : tensor<2x2x1x1xf32>
  %2 = kiln.conv %x, %single strides = [1, 1] dilations = [1, 1] pads = [0, 0, 0, 0] groups = 2 : (tensor<1x4x5x5xf32>, tensor<2x2x1x1xf32>) -> tensor<1x2x5x5xf32>
  return %0, %1, %2 : tensor<1x4x5x5xf32>, tensor<1x4x5x5xf32>, tensor<1x2x5x5xf32>
}

// -----

// The ReLU6 (a clamp) and the ReLU that only the convolution's result feeds
// run on each group's result (fusion then applies them on the group's
// tiles); the join comes after them.
// CHECK-LABEL: func.func @activations
// CHECK: %[[Y0:.*]] = kiln.conv %{{.*}}#0
// CHECK: %[[Y1:.*]] = kiln.conv %{{.*}}#1
// CHECK: %[[C0:.*]] = kiln.clamp %[[Y0]] {{.*}} : tensor<1x2x5x5xf32> -> tensor<1x2x5x5xf32>
// CHECK: %[[C1:.*]] = kiln.clamp %[[Y1]]
// CHECK: %[[R0:.*]] = kiln.relu %[[C0]] : tensor<1x2x5x5xf32> -> tensor<1x2x5x5xf32>
// CHECK: %[[R1:.*]] = kiln.relu %[[C1]]
// CHECK: %[[J:.*]] = kiln.concat %[[R0]], %[[R1]] axis = 1
// CHECK: return %[[J]]
func.func @activations(%x: tensor<1x4x5x5xf32>) -> tensor<1x4x5x5xf32> {
  %w = kiln.constant dense<1.0> : tensor<4x2x1x1xf32>
  %y = kiln.conv %x, %w strides = [1, 1] dilations = [1, 1] pads = [0, 0, 0, 0] groups = 2 : (tensor<1x4x5x5xf32>, tensor<4x2x1x1xf32>) -> tensor<1x4x5x5xf32>
  %c = kiln.clamp %y min = 0.0 max = 6.0 : tensor<1x4x5x5xf32> -> tensor<1x4x5x5xf32>
  %r = kiln.relu %c : tensor<1x4x5x5xf32> -> tensor<1x4x5x5xf32>
  return %r : tensor<1x4x5x5xf32>
}

// -----

// The result is also returned: the ReLU stays after the join.
// CHECK-LABEL: func.func @shared_result
// CHECK: %[[J:.*]] = kiln.concat
// CHECK: %[[R:.*]] = kiln.relu %[[J]] : tensor<1x4x5x5xf32>
// CHECK: return %[[J]], %[[R]]
func.func @shared_result(%x: tensor<1x4x5x5xf32>) -> (tensor<1x4x5x5xf32>, tensor<1x4x5x5xf32>) {
  %w = kiln.constant dense<1.0> : tensor<4x2x1x1xf32>
  %y = kiln.conv %x, %w strides = [1, 1] dilations = [1, 1] pads = [0, 0, 0, 0] groups = 2 : (tensor<1x4x5x5xf32>, tensor<4x2x1x1xf32>) -> tensor<1x4x5x5xf32>
  %r = kiln.relu %y : tensor<1x4x5x5xf32> -> tensor<1x4x5x5xf32>
  return %y, %r : tensor<1x4x5x5xf32>, tensor<1x4x5x5xf32>
}

// -----

// One image is split when its groups' convolutions take kernels the
// batched matmul does not: more than batched-group-channels input channels
// a group (Winograd, say), or a strided window over fewer than 16 groups
// (which kiln-lower-matmul would lay out one at a time). A strided window
// over 16 small groups is left batched.
// DEFAULT-LABEL: func.func @one_image_split
// DEFAULT: kiln.split %arg0 axis = 1 sizes = [2, 2]
// DEFAULT: kiln.concat
// DEFAULT: kiln.split %arg1 axis = 1 sizes = [17, 17]
// DEFAULT: kiln.concat
// DEFAULT: kiln.conv %arg2, %{{.*}} strides = [2, 2] {{.*}} groups = 16
// DEFAULT-NOT: kiln.split
func.func @one_image_split(%x: tensor<1x4x8x8xf32>, %wide: tensor<1x34x5x5xf32>, %many: tensor<1x32x8x8xf32>) -> (tensor<1x4x4x4xf32>, tensor<1x4x5x5xf32>, tensor<1x32x4x4xf32>) {
  %w = kiln.constant dense<1.0> : tensor<4x2x3x3xf32>
  %0 = kiln.conv %x, %w strides = [2, 2] dilations = [1, 1] pads = [1, 1, 1, 1] groups = 2 : (tensor<1x4x8x8xf32>, tensor<4x2x3x3xf32>) -> tensor<1x4x4x4xf32>
  %v = kiln.constant dense<1.0> : tensor<4x17x3x3xf32>
  %1 = kiln.conv %wide, %v strides = [1, 1] dilations = [1, 1] pads = [1, 1, 1, 1] groups = 2 : (tensor<1x34x5x5xf32>, tensor<4x17x3x3xf32>) -> tensor<1x4x5x5xf32>
  %u = kiln.constant dense<1.0> : tensor<32x2x3x3xf32>
  %2 = kiln.conv %many, %u strides = [2, 2] dilations = [1, 1] pads = [1, 1, 1, 1] groups = 16 : (tensor<1x32x8x8xf32>, tensor<32x2x3x3xf32>) -> tensor<1x32x4x4xf32>
  return %0, %1, %2 : tensor<1x4x4x4xf32>, tensor<1x4x5x5xf32>, tensor<1x32x4x4xf32>
}

// -----

// A convolution of a lane (kiln-split-batch) is replaced by ops of that
// lane, its split, filters, group convolutions and join, so the lane's
// kernels stay one run; the ReLU cloned per group keeps its own.
// CHECK-LABEL: func.func @lane
// CHECK: kiln.split %arg0 {{.*}} {kiln.lane = 1 : i64}
// CHECK: kiln.constant {kiln.lane = 1 : i64}
// CHECK: kiln.conv {{.*}} {kiln.lane = 1 : i64}
// CHECK: kiln.relu {{.*}} {kiln.lane = 1 : i64}
// CHECK: kiln.relu {{.*}} {kiln.lane = 1 : i64}
// CHECK: kiln.concat {{.*}} {kiln.lane = 1 : i64}
func.func @lane(%x: tensor<1x4x5x5xf32>) -> tensor<1x4x5x5xf32> {
  %w = kiln.constant dense<0.5> : tensor<4x2x1x1xf32>
  %y = kiln.conv %x, %w strides = [1, 1] dilations = [1, 1] pads = [0, 0, 0, 0] groups = 2 {kiln.lane = 1 : i64} : (tensor<1x4x5x5xf32>, tensor<4x2x1x1xf32>) -> tensor<1x4x5x5xf32>
  %r = kiln.relu %y {kiln.lane = 1 : i64} : tensor<1x4x5x5xf32> -> tensor<1x4x5x5xf32>
  return %r : tensor<1x4x5x5xf32>
}
