// RUN: kiln-opt %s --kiln-externalize-constants -split-input-file -verify-diagnostics --allow-unregistered-dialect | FileCheck %s
// RUN: kiln-opt %s --kiln-externalize-constants=alignment=64 -split-input-file -verify-diagnostics --allow-unregistered-dialect | FileCheck %s --check-prefix=A64

// Each constant global gets an aligned offset in one weights buffer (a new
// trailing argument), in order of first use; a global read twice is placed
// once. The globals stay, for the host library to hold their data.
// CHECK: memref.global "private" constant @w0
// CHECK: memref.global "private" constant @w1
// CHECK-LABEL: func.func @graph
// CHECK-SAME: (%{{.*}}: memref<4xf32>, %[[W:.*]]: memref<264xi8>)
// CHECK-SAME: kiln.constants = {{\[}}[@w0, 0, 12], [@w1, 256, 8]]
// CHECK-SAME: kiln.weights_bytes = 264
// CHECK-NOT: memref.get_global
// CHECK: %[[C0:.*]] = arith.constant 0 : index
// CHECK: memref.view %[[W]][%[[C0]]][] : memref<264xi8> to memref<3xf32>
// CHECK: %[[C256:.*]] = arith.constant 256 : index
// CHECK: memref.view %[[W]][%[[C256]]][] : memref<264xi8> to memref<2xf32>
// CHECK: memref.view %[[W]][%{{.*}}][] : memref<264xi8> to memref<3xf32>
// A64: kiln.constants = {{\[}}[@w0, 0, 12], [@w1, 64, 8]]
memref.global "private" constant @w0 : memref<3xf32> = dense<[1.0, 2.0, 3.0]>
memref.global "private" constant @w1 : memref<2xf32> = dense<[4.0, 5.0]>
func.func @graph(%out: memref<4xf32>) {
  %a = memref.get_global @w0 : memref<3xf32>
  %b = memref.get_global @w1 : memref<2xf32>
  %c = memref.get_global @w0 : memref<3xf32>
  "test.use"(%a, %b, %c, %out) : (memref<3xf32>, memref<2xf32>, memref<3xf32>, memref<4xf32>) -> ()
  return
}

// -----

// A model without constants still gets the (one-byte) buffer, so the
// launcher ABI is the same for every model.
// CHECK-LABEL: func.func @no_constants
// CHECK-SAME: memref<1xi8>
// CHECK-SAME: kiln.constants = []
// CHECK-SAME: kiln.weights_bytes = 0
func.func @no_constants(%out: memref<4xf32>) {
  return
}

// -----

memref.global "private" @mutable : memref<2xf32> = dense<0.0>
func.func @not_constant(%out: memref<4xf32>) {
  // expected-error @+1 {{only statically shaped constant globals}}
  %a = memref.get_global @mutable : memref<2xf32>
  "test.use"(%a) : (memref<2xf32>) -> ()
  return
}
