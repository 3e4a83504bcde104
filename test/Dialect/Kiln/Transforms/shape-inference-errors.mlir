// RUN: kiln-opt %s -split-input-file --kiln-shape-inference -verify-diagnostics

// Refining %0 exposes a broadcast conflict that the dynamic types hid.
func.func @broadcast_conflict(%x: tensor<2x3xf32>, %y: tensor<?x4xf32>) -> tensor<?x4xf32> {
  %0 = kiln.exp %x : tensor<2x3xf32> -> tensor<?x?xf32>
  // expected-error @+2 {{shapes 2x3 vs ?x4 are not broadcast-compatible: dim 1 of the result would need both 3 and 4}}
  // expected-error @+1 {{'kiln.add' op cannot infer its result types from operand types 'tensor<2x3xf32>', 'tensor<?x4xf32>'}}
  %1 = kiln.add %0, %y : (tensor<?x?xf32>, tensor<?x4xf32>) -> tensor<?x4xf32>
  return %1 : tensor<?x4xf32>
}

// -----

// A declared static size disagrees with what the refined operands give.
func.func @declared_size_conflict(%x: tensor<2x3xf32>) -> tensor<4x?xf32> {
  %0 = kiln.exp %x : tensor<2x3xf32> -> tensor<?x?xf32>
  // expected-error @+1 {{'kiln.relu' op result #0 is declared as 'tensor<4x?xf32>' but its operands 'tensor<2x3xf32>' give 'tensor<2x3xf32>'}}
  %1 = kiln.relu %0 : tensor<?x?xf32> -> tensor<4x?xf32>
  return %1 : tensor<4x?xf32>
}

// -----

func.func @matmul_k_conflict(%x: tensor<8x16xf32>, %w: tensor<32x4xf32>) -> tensor<?x?xf32> {
  %0 = kiln.tanh %x : tensor<8x16xf32> -> tensor<?x?xf32>
  // expected-error @+2 {{matmul contraction dims differ: 8x16 x 32x4 (K = 16 vs 32)}}
  // expected-error @+1 {{'kiln.matmul' op cannot infer its result types}}
  %1 = kiln.matmul %0, %w : (tensor<?x?xf32>, tensor<32x4xf32>) -> tensor<?x?xf32>
  return %1 : tensor<?x?xf32>
}

// -----

func.func @reshape_count_conflict(%x: tensor<2x3xf32>) -> tensor<?x?xf32> {
  %0 = kiln.sqrt %x : tensor<2x3xf32> -> tensor<?x?xf32>
  // expected-error @+2 {{cannot reshape 2x3 (6 elements) to [4, -1]: the other dims (4 elements) do not divide it}}
  // expected-error @+1 {{'kiln.reshape' op cannot infer its result types}}
  %1 = kiln.reshape %0 to [4, -1] : tensor<?x?xf32> -> tensor<?x?xf32>
  return %1 : tensor<?x?xf32>
}
