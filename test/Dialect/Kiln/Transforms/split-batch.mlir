// RUN: kiln-opt %s --kiln-split-batch="min-image-bytes=1024" -split-input-file | FileCheck %s
// RUN: kiln-opt %s --kiln-split-batch="min-image-bytes=1024 max-pieces=1" -split-input-file | FileCheck %s --check-prefix=NOT-SPLIT
// RUN: kiln-opt %s --kiln-split-batch="min-image-bytes=1024 max-pieces=2" -split-input-file | FileCheck %s --check-prefix=PIECES
// RUN: kiln-opt %s --kiln-split-batch="min-image-bytes=1024 lanes=2" -split-input-file | FileCheck %s --check-prefix=LANES
// RUN: kiln-opt %s --kiln-split-batch="min-image-bytes=1024 max-pieces=2 lanes=4" -split-input-file | FileCheck %s --check-prefix=LANE-PER-PIECE

// A convolution whose result takes 1 KiB an image, its ReLU6 (a clamp) and
// a product with a scale broadcast over the batch run per image: the input
// is split, each image runs the three ops on its piece, and the result the
// reshape reads is joined. The reshape (not per-image) ends the region.
// CHECK-LABEL: func.func @conv_chain
// CHECK: %[[X:.*]]:2 = kiln.split %arg0 axis = 0 sizes = [1, 1] : tensor<2x2x8x8xf32> -> tensor<1x2x8x8xf32>, tensor<1x2x8x8xf32>
// CHECK-NEXT: %[[C0:.*]] = kiln.conv %[[X]]#0, {{.*}} -> tensor<1x4x8x8xf32>
// CHECK-NEXT: %[[R0:.*]] = kiln.clamp %[[C0]] {{.*}} : tensor<1x4x8x8xf32> -> tensor<1x4x8x8xf32>
// CHECK-NEXT: %[[S0:.*]] = kiln.mul %[[R0]], %{{.*}} : (tensor<1x4x8x8xf32>, tensor<4x1x1xf32>) -> tensor<1x4x8x8xf32>
// CHECK-NEXT: %[[C1:.*]] = kiln.conv %[[X]]#1, {{.*}} -> tensor<1x4x8x8xf32>
// CHECK-NEXT: %[[R1:.*]] = kiln.clamp %[[C1]]
// CHECK-NEXT: %[[S1:.*]] = kiln.mul %[[R1]]
// CHECK-NEXT: %[[J:.*]] = kiln.concat %[[S0]], %[[S1]] axis = 0 : (tensor<1x4x8x8xf32>, tensor<1x4x8x8xf32>) -> tensor<2x4x8x8xf32>
// CHECK-NEXT: %[[F:.*]] = kiln.reshape %[[J]] to [2, 256]
// CHECK-NEXT: return %[[F]]
// NOT-SPLIT-LABEL: func.func @conv_chain
// NOT-SPLIT-NOT: kiln.split
// NOT-SPLIT: kiln.conv %arg0
func.func @conv_chain(%x: tensor<2x2x8x8xf32>) -> tensor<2x256xf32> {
  %w = kiln.constant dense<0.5> : tensor<4x2x3x3xf32>
  %scale = kiln.constant dense<2.0> : tensor<4x1x1xf32>
  %c = kiln.conv %x, %w strides = [1, 1] dilations = [1, 1] pads = [1, 1, 1, 1] groups = 1 : (tensor<2x2x8x8xf32>, tensor<4x2x3x3xf32>) -> tensor<2x4x8x8xf32>
  %r = kiln.clamp %c min = 0.0 max = 6.0 : tensor<2x4x8x8xf32> -> tensor<2x4x8x8xf32>
  %s = kiln.mul %r, %scale : (tensor<2x4x8x8xf32>, tensor<4x1x1xf32>) -> tensor<2x4x8x8xf32>
  %f = kiln.reshape %s to [2, 256] : tensor<2x4x8x8xf32> -> tensor<2x256xf32>
  return %f : tensor<2x256xf32>
}

// -----

// A value read both inside the region (the pool) and after it (the
// return) is joined once, and only the uses after the region take the
// join. The second max pool shrinks a result of the region (256 -> 64
// bytes an image), so it joins below min-image-bytes; the 3x3 convolution
// after it, 64 bytes in and out, does not, and ends the region.
// CHECK-LABEL: func.func @shrinking_pool
// CHECK: kiln.split %arg0
// CHECK: %[[C0:.*]] = kiln.conv {{.*}} -> tensor<1x4x8x8xf32>
// CHECK-NEXT: %[[P0:.*]] = kiln.max_pool %[[C0]] {{.*}} -> tensor<1x4x4x4xf32>
// CHECK-NEXT: %[[Q0:.*]] = kiln.max_pool %[[P0]] {{.*}} -> tensor<1x4x2x2xf32>
// CHECK-NEXT: %[[C1:.*]] = kiln.conv {{.*}} -> tensor<1x4x8x8xf32>
// CHECK-NEXT: %[[P1:.*]] = kiln.max_pool %[[C1]]
// CHECK-NEXT: %[[Q1:.*]] = kiln.max_pool %[[P1]]
// CHECK-DAG: %[[JC:.*]] = kiln.concat %[[C0]], %[[C1]] axis = 0
// CHECK-DAG: %[[JQ:.*]] = kiln.concat %[[Q0]], %[[Q1]] axis = 0
// CHECK: %[[D:.*]] = kiln.conv %[[JQ]], {{.*}} -> tensor<2x4x2x2xf32>
// CHECK: return %[[JC]], %[[D]]
func.func @shrinking_pool(%x: tensor<2x2x8x8xf32>) -> (tensor<2x4x8x8xf32>, tensor<2x4x2x2xf32>) {
  %w = kiln.constant dense<0.5> : tensor<4x2x3x3xf32>
  %v = kiln.constant dense<0.25> : tensor<4x4x3x3xf32>
  %c = kiln.conv %x, %w strides = [1, 1] dilations = [1, 1] pads = [1, 1, 1, 1] groups = 1 : (tensor<2x2x8x8xf32>, tensor<4x2x3x3xf32>) -> tensor<2x4x8x8xf32>
  %p = kiln.max_pool %c kernel = [2, 2] strides = [2, 2] dilations = [1, 1] pads = [0, 0, 0, 0] : tensor<2x4x8x8xf32> -> tensor<2x4x4x4xf32>
  %q = kiln.max_pool %p kernel = [2, 2] strides = [2, 2] dilations = [1, 1] pads = [0, 0, 0, 0] : tensor<2x4x4x4xf32> -> tensor<2x4x2x2xf32>
  %d = kiln.conv %q, %v strides = [1, 1] dilations = [1, 1] pads = [1, 1, 1, 1] groups = 1 : (tensor<2x4x2x2xf32>, tensor<4x4x3x3xf32>) -> tensor<2x4x2x2xf32>
  return %c, %d : tensor<2x4x8x8xf32>, tensor<2x4x2x2xf32>
}

// -----

// Activations under min-image-bytes (256 bytes an image in and out): left
// alone.
// CHECK-LABEL: func.func @small_images
// CHECK-NOT: kiln.split
// CHECK: kiln.conv %arg0
func.func @small_images(%x: tensor<4x4x4x4xf32>) -> tensor<4x4x4x4xf32> {
  %w = kiln.constant dense<0.5> : tensor<4x4x3x3xf32>
  %c = kiln.conv %x, %w strides = [1, 1] dilations = [1, 1] pads = [1, 1, 1, 1] groups = 1 : (tensor<4x4x4x4xf32>, tensor<4x4x3x3xf32>) -> tensor<4x4x4x4xf32>
  return %c : tensor<4x4x4x4xf32>
}

// -----

// An elementwise op whose other operand holds per-image data not produced
// per image (a constant with dim 0 = N) does not join: it ends the region
// before it, and the convolution's result is joined for it.
// CHECK-LABEL: func.func @batched_constant
// CHECK: kiln.split %arg0
// CHECK: %[[J:.*]] = kiln.concat
// CHECK-NEXT: kiln.add %[[J]], %{{.*}} : (tensor<2x4x8x8xf32>, tensor<2x4x8x8xf32>)
func.func @batched_constant(%x: tensor<2x2x8x8xf32>) -> tensor<2x4x8x8xf32> {
  %w = kiln.constant dense<0.5> : tensor<4x2x3x3xf32>
  %k = kiln.constant dense<1.0> : tensor<2x4x8x8xf32>
  %c = kiln.conv %x, %w strides = [1, 1] dilations = [1, 1] pads = [1, 1, 1, 1] groups = 1 : (tensor<2x2x8x8xf32>, tensor<4x2x3x3xf32>) -> tensor<2x4x8x8xf32>
  %a = kiln.add %c, %k : (tensor<2x4x8x8xf32>, tensor<2x4x8x8xf32>) -> tensor<2x4x8x8xf32>
  return %a : tensor<2x4x8x8xf32>
}

// -----

// Elementwise ops alone are not split: there is no convolution or pool.
// CHECK-LABEL: func.func @elementwise_only
// CHECK-NOT: kiln.split
// CHECK: kiln.relu %arg0
func.func @elementwise_only(%x: tensor<2x4x16x16xf32>) -> tensor<2x4x16x16xf32> {
  %r = kiln.relu %x : tensor<2x4x16x16xf32> -> tensor<2x4x16x16xf32>
  return %r : tensor<2x4x16x16xf32>
}

// -----

// A filter whose dim 0 happens to be the batch is not cut into images: the
// convolution that reads it (1 KiB an image in) does not join, and nothing
// is split.
// CHECK-LABEL: func.func @filter_argument
// CHECK-NOT: kiln.split
// CHECK: kiln.conv %arg0, %arg1
func.func @filter_argument(%x: tensor<2x4x8x8xf32>, %w: tensor<2x4x3x3xf32>) -> tensor<2x2x8x8xf32> {
  %c = kiln.conv %x, %w strides = [1, 1] dilations = [1, 1] pads = [1, 1, 1, 1] groups = 1 : (tensor<2x4x8x8xf32>, tensor<2x4x3x3xf32>) -> tensor<2x2x8x8xf32>
  return %c : tensor<2x2x8x8xf32>
}

// -----

// A batch of 5 in at most 2 pieces: pieces of 3 and 2 images, each with
// its own copy of the region.
// CHECK-LABEL: func.func @pieces
// CHECK: kiln.split %arg0 axis = 0 sizes = [1, 1, 1, 1, 1]
// PIECES-LABEL: func.func @pieces
// PIECES: %[[X:.*]]:2 = kiln.split %arg0 axis = 0 sizes = [3, 2] : tensor<5x2x8x8xf32> -> tensor<3x2x8x8xf32>, tensor<2x2x8x8xf32>
// PIECES-NEXT: %[[C0:.*]] = kiln.conv %[[X]]#0, {{.*}} -> tensor<3x4x8x8xf32>
// PIECES-NEXT: %[[C1:.*]] = kiln.conv %[[X]]#1, {{.*}} -> tensor<2x4x8x8xf32>
// PIECES-NEXT: kiln.concat %[[C0]], %[[C1]] axis = 0 : (tensor<3x4x8x8xf32>, tensor<2x4x8x8xf32>) -> tensor<5x4x8x8xf32>
func.func @pieces(%x: tensor<5x2x8x8xf32>) -> tensor<5x4x8x8xf32> {
  %w = kiln.constant dense<0.5> : tensor<4x2x3x3xf32>
  %c = kiln.conv %x, %w strides = [1, 1] dilations = [1, 1] pads = [1, 1, 1, 1] groups = 1 : (tensor<5x2x8x8xf32>, tensor<4x2x3x3xf32>) -> tensor<5x4x8x8xf32>
  return %c : tensor<5x4x8x8xf32>
}

// -----

// An NHWC input transposed to NCHW and padded (dim 0 left alone) runs per
// image with the convolution after it; a transpose that moves dim 0 does
// not join, and ends the region.
// CHECK-LABEL: func.func @nhwc_input
// CHECK: %[[X:.*]]:2 = kiln.split %arg0 axis = 0 sizes = [1, 1] : tensor<2x8x8x2xf32>
// CHECK-NEXT: %[[T0:.*]] = kiln.transpose %[[X]]#0 perm = [0, 3, 1, 2] : tensor<1x8x8x2xf32> -> tensor<1x2x8x8xf32>
// CHECK-NEXT: %[[P0:.*]] = kiln.pad %[[T0]] {{.*}} : tensor<1x2x8x8xf32> -> tensor<1x2x10x10xf32>
// CHECK-NEXT: kiln.conv %[[P0]], {{.*}} -> tensor<1x4x8x8xf32>
// CHECK: %[[J:.*]] = kiln.concat {{.*}} -> tensor<2x4x8x8xf32>
// CHECK-NEXT: kiln.transpose %[[J]] perm = [1, 0, 2, 3]
func.func @nhwc_input(%x: tensor<2x8x8x2xf32>) -> tensor<4x2x8x8xf32> {
  %w = kiln.constant dense<0.5> : tensor<4x2x3x3xf32>
  %t = kiln.transpose %x perm = [0, 3, 1, 2] : tensor<2x8x8x2xf32> -> tensor<2x2x8x8xf32>
  %p = kiln.pad %t pads = [0, 0, 1, 1, 0, 0, 1, 1] mode = constant : tensor<2x2x8x8xf32> -> tensor<2x2x10x10xf32>
  %c = kiln.conv %p, %w strides = [1, 1] dilations = [1, 1] pads = [0, 0, 0, 0] groups = 1 : (tensor<2x2x10x10xf32>, tensor<4x2x3x3xf32>) -> tensor<2x4x8x8xf32>
  %u = kiln.transpose %c perm = [1, 0, 2, 3] : tensor<2x4x8x8xf32> -> tensor<4x2x8x8xf32>
  return %u : tensor<4x2x8x8xf32>
}

// -----

// With lanes, the pieces are dealt out in order, contiguous runs of them
// to each lane, and every clone carries its piece's lane; more lanes than
// pieces leave one piece per lane. Without lanes, no clone has one.
// CHECK-LABEL: func.func @lanes
// CHECK-NOT: kiln.lane
// LANES-LABEL: func.func @lanes
// LANES: kiln.split %arg0 axis = 0 sizes = [1, 1, 1, 1]
// LANES-NOT: kiln.lane
// LANES-NEXT: kiln.conv {{.*}} {kiln.lane = 0 : i64} : {{.*}} -> tensor<1x4x8x8xf32>
// LANES-NEXT: kiln.relu {{.*}} {kiln.lane = 0 : i64}
// LANES-NEXT: kiln.conv {{.*}} {kiln.lane = 0 : i64}
// LANES-NEXT: kiln.relu {{.*}} {kiln.lane = 0 : i64}
// LANES-NEXT: kiln.conv {{.*}} {kiln.lane = 1 : i64}
// LANES-NEXT: kiln.relu {{.*}} {kiln.lane = 1 : i64}
// LANES-NEXT: kiln.conv {{.*}} {kiln.lane = 1 : i64}
// LANES-NEXT: kiln.relu {{.*}} {kiln.lane = 1 : i64}
// LANES-NEXT: kiln.concat
// LANES-NOT: kiln.lane
// LANE-PER-PIECE-LABEL: func.func @lanes
// LANE-PER-PIECE: kiln.split %arg0 axis = 0 sizes = [2, 2]
// LANE-PER-PIECE-NEXT: kiln.conv {{.*}} {kiln.lane = 0 : i64} : {{.*}} -> tensor<2x4x8x8xf32>
// LANE-PER-PIECE-NEXT: kiln.relu {{.*}} {kiln.lane = 0 : i64}
// LANE-PER-PIECE-NEXT: kiln.conv {{.*}} {kiln.lane = 1 : i64}
// LANE-PER-PIECE-NEXT: kiln.relu {{.*}} {kiln.lane = 1 : i64}
// LANE-PER-PIECE-NEXT: kiln.concat
func.func @lanes(%x: tensor<4x2x8x8xf32>) -> tensor<4x256xf32> {
  %w = kiln.constant dense<0.5> : tensor<4x2x3x3xf32>
  %c = kiln.conv %x, %w strides = [1, 1] dilations = [1, 1] pads = [1, 1, 1, 1] groups = 1 : (tensor<4x2x8x8xf32>, tensor<4x2x3x3xf32>) -> tensor<4x4x8x8xf32>
  %r = kiln.relu %c : tensor<4x4x8x8xf32> -> tensor<4x4x8x8xf32>
  %f = kiln.reshape %r to [4, 256] : tensor<4x4x8x8xf32> -> tensor<4x256xf32>
  return %f : tensor<4x256xf32>
}
