// RUN: kiln-opt %s --convert-memref-copy-to-linalg | FileCheck %s

// CHECK-LABEL: func.func @copy_into_subview
// CHECK-NOT: memref.copy
// CHECK: linalg.copy ins(%arg0 : memref<2x2xf32>) outs(%{{.*}} : memref<2x2xf32, strided<[4, 1], offset: 5>>)
func.func @copy_into_subview(%src: memref<2x2xf32>, %dst: memref<4x4xf32>) {
  %view = memref.subview %dst[1, 1] [2, 2] [1, 1] : memref<4x4xf32> to memref<2x2xf32, strided<[4, 1], offset: 5>>
  memref.copy %src, %view : memref<2x2xf32> to memref<2x2xf32, strided<[4, 1], offset: 5>>
  return
}
