// RUN: kiln-opt %s -split-input-file -verify-diagnostics

func.func @broadcast_mismatch(%a: tensor<2x3xf32>, %b: tensor<4x3xf32>) -> tensor<4x3xf32> {
  // expected-error @+2 {{shapes 2x3 vs 4x3 are not broadcast-compatible: dim 0 of the result would need both 2 and 4}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = kiln.add %a, %b : (tensor<2x3xf32>, tensor<4x3xf32>) -> tensor<4x3xf32>
  return %0 : tensor<4x3xf32>
}

// -----

func.func @declared_result_conflicts(%a: tensor<2x3xf32>) -> tensor<3x3xf32> {
  // expected-error @+2 {{'kiln.exp' op inferred type(s) 'tensor<2x3xf32>' are incompatible with return type(s) of operation 'tensor<3x3xf32>'}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = kiln.exp %a : tensor<2x3xf32> -> tensor<3x3xf32>
  return %0 : tensor<3x3xf32>
}

// -----

func.func @binary_element_types(%a: tensor<2xf32>, %b: tensor<2xi32>) -> tensor<2xf32> {
  // expected-error @+1 {{'kiln.mul' op requires the same element type for all operands}}
  %0 = kiln.mul %a, %b : (tensor<2xf32>, tensor<2xi32>) -> tensor<2xf32>
  return %0 : tensor<2xf32>
}

// -----

func.func @float_only_unary(%a: tensor<2xi32>) -> tensor<2xi32> {
  // expected-error @+1 {{'kiln.exp' op operand #0 must be ranked tensor of floating-point values}}
  %0 = kiln.exp %a : tensor<2xi32> -> tensor<2xi32>
  return %0 : tensor<2xi32>
}

// -----

func.func @not_on_float(%a: tensor<2xf32>) -> tensor<2xf32> {
  // expected-error @+1 {{'kiln.not' op operand #0 must be ranked tensor of 1-bit signless integer values}}
  %0 = kiln.not %a : tensor<2xf32> -> tensor<2xf32>
  return %0 : tensor<2xf32>
}

// -----

func.func @compare_result_not_bool(%a: tensor<2xf32>) -> tensor<2xf32> {
  // expected-error @+1 {{'kiln.compare' op result #0 must be ranked tensor of 1-bit signless integer values}}
  %0 = kiln.compare lt, %a, %a : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>
  return %0 : tensor<2xf32>
}

// -----

func.func @select_branch_types(%c: tensor<2xi1>, %a: tensor<2xf32>, %b: tensor<2xf16>) -> tensor<2xf32> {
  // expected-error @+1 {{'kiln.select' op failed to verify that all of {on_true, on_false, output} have same element type}}
  %0 = kiln.select %c, %a, %b : (tensor<2xi1>, tensor<2xf32>, tensor<2xf16>) -> tensor<2xf32>
  return %0 : tensor<2xf32>
}

// -----

func.func @cast_result_type(%a: tensor<2xf32>) -> tensor<2xi64> {
  // expected-error @+2 {{'kiln.cast' op inferred type(s) 'tensor<2xi32>' are incompatible with return type(s) of operation 'tensor<2xi64>'}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = kiln.cast %a to i32 : tensor<2xf32> -> tensor<2xi64>
  return %0 : tensor<2xi64>
}

// -----

func.func @cast_to_non_scalar(%a: tensor<2xf32>) -> tensor<2xf32> {
  // expected-error @+1 {{'kiln.cast' op can only cast to a float or integer element type, got 'index'}}
  %0 = kiln.cast %a to index : tensor<2xf32> -> tensor<2xf32>
  return %0 : tensor<2xf32>
}

// -----

func.func @clamp_bounds(%a: tensor<2xf32>) -> tensor<2xf32> {
  // expected-error @+1 {{'kiln.clamp' op min (6.000000e+00) is greater than max (0.000000e+00)}}
  %0 = kiln.clamp %a min = 6.0 max = 0.0 : tensor<2xf32> -> tensor<2xf32>
  return %0 : tensor<2xf32>
}

// -----

func.func @matmul_k(%a: tensor<4x5xf32>, %b: tensor<6x7xf32>) -> tensor<4x7xf32> {
  // expected-error @+2 {{matmul contraction dims differ: 4x5 x 6x7 (K = 5 vs 6)}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = kiln.matmul %a, %b : (tensor<4x5xf32>, tensor<6x7xf32>) -> tensor<4x7xf32>
  return %0 : tensor<4x7xf32>
}

// -----

func.func @matmul_rank(%a: tensor<5xf32>, %b: tensor<5x7xf32>) -> tensor<7xf32> {
  // expected-error @+2 {{matmul operands must have rank >= 2, got 5 and 5x7}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = kiln.matmul %a, %b : (tensor<5xf32>, tensor<5x7xf32>) -> tensor<7xf32>
  return %0 : tensor<7xf32>
}

// -----

func.func @matmul_batch(%a: tensor<2x4x5xf32>, %b: tensor<3x5x6xf32>) -> tensor<?x4x6xf32> {
  // expected-error @+2 {{matmul batch dims: shapes 2 vs 3 are not broadcast-compatible}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = kiln.matmul %a, %b : (tensor<2x4x5xf32>, tensor<3x5x6xf32>) -> tensor<?x4x6xf32>
  return %0 : tensor<?x4x6xf32>
}

// -----

func.func @conv_channels(%x: tensor<1x3x8x8xf32>, %w: tensor<4x2x3x3xf32>) -> tensor<1x4x6x6xf32> {
  // expected-error @+2 {{conv filter 4x2x3x3 expects 2 input channels per group but the input has 3 channels in 1 group(s)}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = kiln.conv %x, %w strides = [1, 1] dilations = [1, 1] pads = [0, 0, 0, 0] groups = 1 : (tensor<1x3x8x8xf32>, tensor<4x2x3x3xf32>) -> tensor<1x4x6x6xf32>
  return %0 : tensor<1x4x6x6xf32>
}

// -----

func.func @conv_groups(%x: tensor<1x4x8x8xf32>, %w: tensor<6x2x3x3xf32>) -> tensor<1x6x6x6xf32> {
  // expected-error @+2 {{conv output channels 6 are not divisible by groups 4}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = kiln.conv %x, %w strides = [1, 1] dilations = [1, 1] pads = [0, 0, 0, 0] groups = 4 : (tensor<1x4x8x8xf32>, tensor<6x2x3x3xf32>) -> tensor<1x6x6x6xf32>
  return %0 : tensor<1x6x6x6xf32>
}

// -----

func.func @conv_attr_lengths(%x: tensor<1x3x8x8xf32>, %w: tensor<4x3x3x3xf32>) -> tensor<1x4x6x6xf32> {
  // expected-error @+2 {{conv: 2 spatial dims need 2 kernel sizes, strides and dilations and 4 pads; got 2, 1, 2 and 4}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = kiln.conv %x, %w strides = [1] dilations = [1, 1] pads = [0, 0, 0, 0] groups = 1 : (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>) -> tensor<1x4x6x6xf32>
  return %0 : tensor<1x4x6x6xf32>
}

// -----

func.func @conv_window_too_big(%x: tensor<1x3x2x2xf32>, %w: tensor<4x3x3x3xf32>) -> tensor<1x4x1x1xf32> {
  // expected-error @+2 {{conv: spatial dim 0: window of extent 3 (kernel 3, dilation 1) does not fit in input size 2 padded to 2}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = kiln.conv %x, %w strides = [1, 1] dilations = [1, 1] pads = [0, 0, 0, 0] groups = 1 : (tensor<1x3x2x2xf32>, tensor<4x3x3x3xf32>) -> tensor<1x4x1x1xf32>
  return %0 : tensor<1x4x1x1xf32>
}

// -----

func.func @conv_bias(%x: tensor<1x3x8x8xf32>, %w: tensor<4x3x3x3xf32>, %b: tensor<3xf32>) -> tensor<1x4x6x6xf32> {
  // expected-error @+2 {{conv bias must be [4] (one per output channel), got 'tensor<3xf32>'}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = kiln.conv %x, %w, %b strides = [1, 1] dilations = [1, 1] pads = [0, 0, 0, 0] groups = 1 : (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>, tensor<3xf32>) -> tensor<1x4x6x6xf32>
  return %0 : tensor<1x4x6x6xf32>
}

// -----

func.func @conv_rank(%x: tensor<3x8xf32>, %w: tensor<4x3xf32>) -> tensor<3x8xf32> {
  // expected-error @+2 {{conv input must be [N, C, D1, ...] (rank >= 3), got 3x8}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = kiln.conv %x, %w strides = [] dilations = [] pads = [] groups = 1 : (tensor<3x8xf32>, tensor<4x3xf32>) -> tensor<3x8xf32>
  return %0 : tensor<3x8xf32>
}

// -----

func.func @pool_stride(%x: tensor<1x3x8x8xf32>) -> tensor<1x3x4x4xf32> {
  // expected-error @+2 {{pooling: spatial dim 1: window kernel (2), stride (0) and dilation (1) must be positive}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = kiln.max_pool %x kernel = [2, 2] strides = [2, 0] dilations = [1, 1] pads = [0, 0, 0, 0] : tensor<1x3x8x8xf32> -> tensor<1x3x4x4xf32>
  return %0 : tensor<1x3x4x4xf32>
}

// -----

func.func @reduce_axis_range(%x: tensor<2x3xf32>) -> tensor<2xf32> {
  // expected-error @+2 {{axis 2 is out of range for rank 2 (expected [-2, 1])}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = kiln.reduce_sum %x axes = [2] : tensor<2x3xf32> -> tensor<2xf32>
  return %0 : tensor<2xf32>
}

// -----

func.func @reduce_duplicate_axes(%x: tensor<2x3xf32>) -> tensor<2xf32> {
  // expected-error @+2 {{axis -1 appears more than once}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = kiln.reduce_max %x axes = [1, -1] : tensor<2x3xf32> -> tensor<2xf32>
  return %0 : tensor<2xf32>
}

// -----

func.func @reduce_keepdims_rank(%x: tensor<2x3xf32>) -> tensor<2xf32> {
  // expected-error @+2 {{'kiln.reduce_mean' op inferred type(s) 'tensor<2x1xf32>' are incompatible with return type(s) of operation 'tensor<2xf32>'}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = kiln.reduce_mean %x axes = [1] keepdims : tensor<2x3xf32> -> tensor<2xf32>
  return %0 : tensor<2xf32>
}

// -----

func.func @argmax_result(%x: tensor<2x3xf32>) -> tensor<2xi32> {
  // expected-error @+1 {{'kiln.argmax' op result #0 must be ranked tensor of 64-bit signless integer values}}
  %0 = kiln.argmax %x axis = 1 : tensor<2x3xf32> -> tensor<2xi32>
  return %0 : tensor<2xi32>
}

// -----

func.func @softmax_axis(%x: tensor<2x3xf32>) -> tensor<2x3xf32> {
  // expected-error @+2 {{axis -3 is out of range for rank 2 (expected [-2, 1])}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = kiln.softmax %x axis = -3 : tensor<2x3xf32> -> tensor<2x3xf32>
  return %0 : tensor<2x3xf32>
}

// -----

func.func @reshape_count(%x: tensor<2x3xf32>) -> tensor<7xf32> {
  // expected-error @+2 {{cannot reshape 2x3 (6 elements) to 7 (7 elements)}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = kiln.reshape %x to [7] : tensor<2x3xf32> -> tensor<7xf32>
  return %0 : tensor<7xf32>
}

// -----

func.func @reshape_two_minus_one(%x: tensor<2x3xf32>) -> tensor<?x?xf32> {
  // expected-error @+2 {{reshape target [-1, -1] has more than one -1}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = kiln.reshape %x to [-1, -1] : tensor<2x3xf32> -> tensor<?x?xf32>
  return %0 : tensor<?x?xf32>
}

// -----

func.func @reshape_indivisible(%x: tensor<2x3xf32>) -> tensor<4x?xf32> {
  // expected-error @+2 {{cannot reshape 2x3 (6 elements) to [4, -1]: the other dims (4 elements) do not divide it}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = kiln.reshape %x to [4, -1] : tensor<2x3xf32> -> tensor<4x?xf32>
  return %0 : tensor<4x?xf32>
}

// -----

func.func @reshape_both_forms(%x: tensor<6xf32>, %s: tensor<2xi64>) -> tensor<2x3xf32> {
  // expected-error @+1 {{'kiln.reshape' op needs exactly one of a shape operand (`by`) or a shape attribute (`to`)}}
  %0 = kiln.reshape %x by %s to [2, 3] : tensor<6xf32>, tensor<2xi64> -> tensor<2x3xf32>
  return %0 : tensor<2x3xf32>
}

// -----

func.func @reshape_no_shape(%x: tensor<6xf32>) -> tensor<6xf32> {
  // expected-error @+1 {{'kiln.reshape' op needs exactly one of a shape operand (`by`) or a shape attribute (`to`)}}
  %0 = kiln.reshape %x : tensor<6xf32> -> tensor<6xf32>
  return %0 : tensor<6xf32>
}

// -----

func.func @reshape_dynamic_shape_operand(%x: tensor<6xf32>, %s: tensor<?xi64>) -> tensor<6xf32> {
  // expected-error @+1 {{'kiln.reshape' op shape operand must have a static length, got 'tensor<?xi64>'}}
  %0 = kiln.reshape %x by %s : tensor<6xf32>, tensor<?xi64> -> tensor<6xf32>
  return %0 : tensor<6xf32>
}

// -----

func.func @expand_incompatible(%x: tensor<2x3xf32>) -> tensor<2x4xf32> {
  // expected-error @+2 {{shapes 2x3 vs 2x4 are not broadcast-compatible: dim 1 of the result would need both 3 and 4}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = kiln.expand %x to [2, 4] : tensor<2x3xf32> -> tensor<2x4xf32>
  return %0 : tensor<2x4xf32>
}

// -----

func.func @expand_negative(%x: tensor<2x3xf32>) -> tensor<2x3xf32> {
  // expected-error @+2 {{expand target dims must be >= 0}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = kiln.expand %x to [-1, 3] : tensor<2x3xf32> -> tensor<2x3xf32>
  return %0 : tensor<2x3xf32>
}

// -----

func.func @transpose_perm(%x: tensor<2x3xf32>) -> tensor<2x3xf32> {
  // expected-error @+2 {{[0, 0] is not a permutation of 0..1}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = kiln.transpose %x perm = [0, 0] : tensor<2x3xf32> -> tensor<2x3xf32>
  return %0 : tensor<2x3xf32>
}

// -----

func.func @transpose_perm_length(%x: tensor<2x3xf32>) -> tensor<2x3xf32> {
  // expected-error @+2 {{permutation has 3 entries for a rank-2 tensor}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = kiln.transpose %x perm = [0, 1, 2] : tensor<2x3xf32> -> tensor<2x3xf32>
  return %0 : tensor<2x3xf32>
}

// -----

func.func @concat_other_dims(%a: tensor<2x3xf32>, %b: tensor<4x3xf32>) -> tensor<2x6xf32> {
  // expected-error @+2 {{concat input 1 (4x3) differs from input 0 (2x3) in dim 0, which is not the concat axis}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = kiln.concat %a, %b axis = 1 : (tensor<2x3xf32>, tensor<4x3xf32>) -> tensor<2x6xf32>
  return %0 : tensor<2x6xf32>
}

// -----

func.func @concat_rank(%a: tensor<2x3xf32>, %b: tensor<3xf32>) -> tensor<2x6xf32> {
  // expected-error @+2 {{concat input 1 has rank 1, input 0 has rank 2}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = kiln.concat %a, %b axis = 1 : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x6xf32>
  return %0 : tensor<2x6xf32>
}

// -----

func.func @concat_empty() -> tensor<2xf32> {
  // expected-error @+1 {{'kiln.concat' op expected 1 or more operands, but found 0}}
  %0 = kiln.concat axis = 0 : () -> tensor<2xf32>
  return %0 : tensor<2xf32>
}

// -----

func.func @split_sizes(%x: tensor<6xf32>) -> (tensor<2xf32>, tensor<3xf32>) {
  // expected-error @+2 {{split sizes sum to 5 but dim 0 of 6 is 6}}
  // expected-error @+1 {{failed to infer returned types}}
  %0:2 = kiln.split %x axis = 0 sizes = [2, 3] : tensor<6xf32> -> tensor<2xf32>, tensor<3xf32>
  return %0#0, %0#1 : tensor<2xf32>, tensor<3xf32>
}

// -----

func.func @split_result_count(%x: tensor<6xf32>) -> tensor<3xf32> {
  // expected-error @+2 {{'kiln.split' op inferred type(s) 'tensor<3xf32>', 'tensor<3xf32>' are incompatible with return type(s) of operation 'tensor<3xf32>'}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = kiln.split %x axis = 0 sizes = [3, 3] : tensor<6xf32> -> tensor<3xf32>
  return %0 : tensor<3xf32>
}

// -----

func.func @slice_step_zero(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+2 {{dim 0: slice step must not be 0}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = kiln.slice %x starts = [0] ends = [4] steps = [0] : tensor<4xf32> -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

func.func @slice_out_of_range(%x: tensor<4xf32>) -> tensor<5xf32> {
  // expected-error @+2 {{dim 0: slice [0:5:1] is not normalized for a dim of size 4}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = kiln.slice %x starts = [0] ends = [5] steps = [1] : tensor<4xf32> -> tensor<5xf32>
  return %0 : tensor<5xf32>
}

// -----

func.func @slice_lengths(%x: tensor<4x4xf32>) -> tensor<4x4xf32> {
  // expected-error @+2 {{slice of a rank-2 tensor needs 2 starts, ends and steps; got 1, 2 and 2}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = kiln.slice %x starts = [0] ends = [4, 4] steps = [1, 1] : tensor<4x4xf32> -> tensor<4x4xf32>
  return %0 : tensor<4x4xf32>
}

// -----

func.func @gather_axis(%x: tensor<4x4xf32>, %i: tensor<2xi64>) -> tensor<4x2xf32> {
  // expected-error @+2 {{axis 2 is out of range for rank 2 (expected [-2, 1])}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = kiln.gather %x[%i] axis = 2 : (tensor<4x4xf32>, tensor<2xi64>) -> tensor<4x2xf32>
  return %0 : tensor<4x2xf32>
}

// -----

func.func @gather_index_type(%x: tensor<4x4xf32>, %i: tensor<2xf32>) -> tensor<2x4xf32> {
  // expected-error @+1 {{'kiln.gather' op operand #1 must be ranked tensor of 32-bit signless integer or 64-bit signless integer values}}
  %0 = kiln.gather %x[%i] axis = 0 : (tensor<4x4xf32>, tensor<2xf32>) -> tensor<2x4xf32>
  return %0 : tensor<2x4xf32>
}

// -----

func.func @pad_count(%x: tensor<4x4xf32>) -> tensor<6x4xf32> {
  // expected-error @+2 {{a rank-2 tensor needs 4 pads, got 2}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = kiln.pad %x pads = [1, 1] mode = constant : tensor<4x4xf32> -> tensor<6x4xf32>
  return %0 : tensor<6x4xf32>
}

// -----

func.func @pad_crop_below_zero(%x: tensor<4xf32>) -> tensor<0xf32> {
  // expected-error @+2 {{pads -3 and -2 crop dim 0 of size 4 below zero}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = kiln.pad %x pads = [-3, -2] mode = constant : tensor<4xf32> -> tensor<0xf32>
  return %0 : tensor<0xf32>
}

// -----

func.func @pad_negative_reflect(%x: tensor<4xf32>) -> tensor<3xf32> {
  // expected-error @+2 {{negative pads (cropping) are only allowed in constant mode}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = kiln.pad %x pads = [-1, 0] mode = reflect : tensor<4xf32> -> tensor<3xf32>
  return %0 : tensor<3xf32>
}

// -----

func.func @shape_of_result(%x: tensor<4x4xf32>) -> tensor<3xi64> {
  // expected-error @+2 {{'kiln.shape_of' op inferred type(s) 'tensor<2xi64>' are incompatible with return type(s) of operation 'tensor<3xi64>'}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = kiln.shape_of %x : tensor<4x4xf32> -> tensor<3xi64>
  return %0 : tensor<3xi64>
}

// -----

func.func @constant_type() -> tensor<3xi64> {
  // expected-error @+2 {{'kiln.constant' op inferred type(s) 'tensor<2xi64>' are incompatible with return type(s) of operation 'tensor<3xi64>'}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = "kiln.constant"() {value = dense<[1, 2]> : tensor<2xi64>} : () -> tensor<3xi64>
  return %0 : tensor<3xi64>
}

// -----

func.func @reshape_negative_dim(%x: tensor<2x3xf32>) -> tensor<?x3xf32> {
  // expected-error @+2 {{reshape target dim 0 is -2; expected a size >= 0 or -1}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = kiln.reshape %x to [-2, 3] : tensor<2x3xf32> -> tensor<?x3xf32>
  return %0 : tensor<?x3xf32>
}

// -----

func.func @conv_filter_rank(%x: tensor<1x3x8x8xf32>, %w: tensor<4x3x3xf32>) -> tensor<1x4x6x6xf32> {
  // expected-error @+2 {{conv filter 4x3x3 must have the input's rank 4}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = kiln.conv %x, %w strides = [1, 1] dilations = [1, 1] pads = [0, 0, 0, 0] groups = 1 : (tensor<1x3x8x8xf32>, tensor<4x3x3xf32>) -> tensor<1x4x6x6xf32>
  return %0 : tensor<1x4x6x6xf32>
}

// -----

func.func @conv_groups_zero(%x: tensor<1x3x8x8xf32>, %w: tensor<4x3x3x3xf32>) -> tensor<1x4x6x6xf32> {
  // expected-error @+2 {{conv groups must be positive, got 0}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = kiln.conv %x, %w strides = [1, 1] dilations = [1, 1] pads = [0, 0, 0, 0] groups = 0 : (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>) -> tensor<1x4x6x6xf32>
  return %0 : tensor<1x4x6x6xf32>
}

// -----

func.func @conv_input_channels_groups(%x: tensor<1x3x8x8xf32>, %w: tensor<4x1x3x3xf32>) -> tensor<1x4x6x6xf32> {
  // expected-error @+2 {{conv input channels 3 are not divisible by groups 2}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = kiln.conv %x, %w strides = [1, 1] dilations = [1, 1] pads = [0, 0, 0, 0] groups = 2 : (tensor<1x3x8x8xf32>, tensor<4x1x3x3xf32>) -> tensor<1x4x6x6xf32>
  return %0 : tensor<1x4x6x6xf32>
}

// -----

func.func @pool_rank(%x: tensor<8x8xf32>) -> tensor<4x4xf32> {
  // expected-error @+2 {{pooling input must be [N, C, D1, ...] (rank >= 3), got 8x8}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = kiln.avg_pool %x kernel = [2] strides = [2] dilations = [1] pads = [0, 0] : tensor<8x8xf32> -> tensor<4x4xf32>
  return %0 : tensor<4x4xf32>
}

// -----

func.func @split_negative_size(%x: tensor<6xf32>) -> (tensor<8xf32>, tensor<?xf32>) {
  // expected-error @+2 {{split size -2 is negative}}
  // expected-error @+1 {{failed to infer returned types}}
  %0:2 = kiln.split %x axis = 0 sizes = [8, -2] : tensor<6xf32> -> tensor<8xf32>, tensor<?xf32>
  return %0#0, %0#1 : tensor<8xf32>, tensor<?xf32>
}

// -----

func.func @gather_scalar_data(%x: tensor<f32>, %i: tensor<2xi64>) -> tensor<2xf32> {
  // expected-error @+2 {{gather data must have rank >= 1}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = kiln.gather %x[%i] axis = 0 : (tensor<f32>, tensor<2xi64>) -> tensor<2xf32>
  return %0 : tensor<2xf32>
}

// -----

func.func @expand_shape_operand_type(%x: tensor<3xf32>, %s: tensor<2xi32>) -> tensor<?x?xf32> {
  // expected-error @+1 {{'kiln.expand' op operand #1 must be 1D tensor of 64-bit signless integer values, but got 'tensor<2xi32>'}}
  %0 = kiln.expand %x by %s : tensor<3xf32>, tensor<2xi32> -> tensor<?x?xf32>
  return %0 : tensor<?x?xf32>
}

// -----

func.func @compare_bad_direction(%a: tensor<2xf32>) -> tensor<2xi1> {
  // expected-error @+1 {{expected string or keyword containing one of the following enum values for attribute 'direction' [eq, ne, lt, le, gt, ge]}}
  %0 = kiln.compare lg, %a, %a : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xi1>
  return %0 : tensor<2xi1>
}

// -----

func.func @resize_sizes_rank(%x: tensor<1x3x4x4xf32>) -> tensor<1x3x8x8xf32> {
  // expected-error @+2 {{resize of a rank-4 tensor needs that many sizes and scales, got 2 and 4}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = kiln.resize %x sizes = [8, 8] scales = [1.0, 1.0, 2.0, 2.0] mode = linear coordinate_transform = half_pixel nearest_mode = floor : tensor<1x3x4x4xf32> -> tensor<1x3x8x8xf32>
  return %0 : tensor<1x3x8x8xf32>
}

// -----

func.func @resize_negative_scale(%x: tensor<4xf32>) -> tensor<8xf32> {
  // expected-error @+2 {{resize sizes must be >= 0 and scales > 0}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = kiln.resize %x sizes = [8] scales = [-2.0] mode = nearest coordinate_transform = asymmetric nearest_mode = floor : tensor<4xf32> -> tensor<8xf32>
  return %0 : tensor<8xf32>
}
