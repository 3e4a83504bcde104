// RUN: kiln-opt %s --kiln-lower-gpu-launches | FileCheck %s

// Each launch becomes a call of kiln_launch_I (I: the kernel's index in
// the model's kernel table) with the launcher, the grid and block sizes and
// the kernel's operands; the device module is gone.
// CHECK-NOT: gpu.container_module
// CHECK: module attributes {kiln.gpu_kernels = ["kernel_0", "kernel_1"]}
// CHECK-LABEL: func.func @graph
// CHECK-SAME: (%[[A:.*]]: memref<8xf32>, %[[B:.*]]: memref<8xf32>, %[[L:.*]]: memref<1xi8>)
// CHECK: call @kiln_launch_0(%[[L]], %c2, %c1, %c1, %c4, %c1, %c1, %[[A]], %[[B]])
// CHECK: call @kiln_launch_1(%[[L]], %c1, %c1, %c1, %c8, %c1, %c1, %[[B]], %c4)
// CHECK-NOT: gpu.
// CHECK: func.func private @kiln_launch_0(memref<1xi8>, index, index, index, index, index, index, memref<8xf32>, memref<8xf32>)
// CHECK: func.func private @kiln_launch_1(memref<1xi8>, index, index, index, index, index, index, memref<8xf32>, index)
module attributes {gpu.container_module} {
  func.func @graph(%a: memref<8xf32>, %b: memref<8xf32>) {
    %c1 = arith.constant 1 : index
    %c2 = arith.constant 2 : index
    %c4 = arith.constant 4 : index
    %c8 = arith.constant 8 : index
    gpu.launch_func @kiln_kernels::@kernel_0 blocks in (%c2, %c1, %c1) threads in (%c4, %c1, %c1) args(%a : memref<8xf32>, %b : memref<8xf32>)
    gpu.launch_func @kiln_kernels::@kernel_1 blocks in (%c1, %c1, %c1) threads in (%c8, %c1, %c1) args(%b : memref<8xf32>, %c4 : index)
    return
  }
  gpu.module @kiln_kernels {
    gpu.func @kernel_0(%x: memref<8xf32>, %y: memref<8xf32>) kernel {
      gpu.return
    }
    gpu.func @kernel_1(%x: memref<8xf32>, %n: index) kernel {
      gpu.return
    }
  }
}
