// RUN: not kiln-opt %s --convert-kiln-to-linalg 2>&1 | FileCheck %s

// Ops without a lowering yet are all named in one error, with counts.
// CHECK: error: no lowering to linalg yet for: kiln.expand (1), kiln.reshape (1)
func.func @not_lowered(%x: tensor<1x3x8x8xf32>, %s: tensor<4xi64>) -> (tensor<?x?x?x?xf32>, tensor<?x?x?x?xf32>) {
  // Run-time target shapes (only constant ones are lowered).
  %0 = kiln.expand %x by %s : tensor<1x3x8x8xf32>, tensor<4xi64> -> tensor<?x?x?x?xf32>
  %1 = kiln.reshape %x by %s : tensor<1x3x8x8xf32>, tensor<4xi64> -> tensor<?x?x?x?xf32>
  return %0, %1 : tensor<?x?x?x?xf32>, tensor<?x?x?x?xf32>
}
