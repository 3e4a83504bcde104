// RUN: kiln-opt %s --kiln-map-loops-to-gpu --canonicalize -split-input-file -verify-diagnostics | FileCheck %s
// RUN: kiln-opt %s --kiln-map-loops-to-gpu=block-size=128 --canonicalize -split-input-file -verify-diagnostics | FileCheck %s --check-prefix=B128

// A 2-D parallel loop becomes one launch over its 64 * 100 iterations
// flattened, each thread running 4 consecutive iterations of the last
// dimension (100 is a multiple of 4 and the store writes along it): 1600
// threads, 7 blocks of 256, a guard for the ragged last block, the last
// dimension varying fastest; the 4 iterations' loads are one 128-bit
// vector load, their stores one vector store. The arena view is recomputed
// in the kernel, so only the arena itself crosses into it.
// CHECK-LABEL: func.func @elementwise
// CHECK-SAME: (%[[IN:.*]]: memref<64x100xf32>, %[[ARENA:.*]]: memref<25600xi8>)
// CHECK-DAG: %[[C7:.*]] = arith.constant 7 : index
// CHECK-DAG: %[[C256:.*]] = arith.constant 256 : index
// CHECK: gpu.launch blocks(%[[BX:.*]], %{{.*}}, %{{.*}}) in (%{{.*}} = %[[C7]], {{.*}}) threads(%[[TX:.*]], %{{.*}}, %{{.*}}) in (%[[BDX:.*]] = %[[C256]], {{.*}}) module(@kiln_kernels) function(@kernel_0)
// CHECK-DAG: %[[VIEW:.*]] = memref.view %[[ARENA]]
// CHECK-DAG: %[[BASE:.*]] = arith.muli %[[BX]], %[[BDX]]
// CHECK: %[[ID:.*]] = arith.addi %[[BASE]], %[[TX]]
// CHECK: %[[IN_BOUNDS:.*]] = arith.cmpi ult, %[[ID]], %c1600
// CHECK: scf.if %[[IN_BOUNDS]]
// CHECK-DAG: %[[K:.*]] = arith.remui %[[ID]], %c25
// CHECK-DAG: %[[I:.*]] = arith.divui %[[ID]], %c25
// CHECK: %[[J:.*]] = arith.muli %[[K]], %c4
// CHECK: %[[X:.*]] = vector.load %[[IN]][%[[I]], %[[J]]] {alignment = 16 : i64} : memref<64x100xf32>, vector<4xf32>
// CHECK: vector.extract %[[X]][0]
// CHECK-COUNT-4: math.exp
// CHECK: %[[Y:.*]] = vector.from_elements
// CHECK: vector.store %[[Y]], %[[VIEW]][%[[I]], %[[J]]] {alignment = 16 : i64} : memref<64x100xf32>, vector<4xf32>
// CHECK: gpu.terminator
// CHECK-NOT: scf.parallel
// B128-LABEL: func.func @elementwise
// B128-DAG: arith.constant 13 : index
// B128-DAG: arith.constant 128 : index
func.func @elementwise(%in: memref<64x100xf32>, %arena: memref<25600xi8>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c64 = arith.constant 64 : index
  %c100 = arith.constant 100 : index
  %out = memref.view %arena[%c0][] : memref<25600xi8> to memref<64x100xf32>
  scf.parallel (%i, %j) = (%c0, %c0) to (%c64, %c100) step (%c1, %c1) {
    %x = memref.load %in[%i, %j] : memref<64x100xf32>
    %e = math.exp %x : f32
    memref.store %e, %out[%i, %j] : memref<64x100xf32>
    scf.reduce
  }
  return
}

// -----

// A read across rows (a transpose) stays 4 scalar loads, all before the
// computation; the stores along the row are one vector store. A load of
// the buffer the loop stores to, at another element, keeps the copies as
// they are: each copy's load, computation and store in turn.
// CHECK-LABEL: func.func @transposed_read
// CHECK-COUNT-4: memref.load %arg0
// CHECK: math.exp
// CHECK: vector.store
// CHECK-LABEL: func.func @reads_its_output
// CHECK-NOT: vector.
// CHECK: memref.load
// CHECK: memref.store
// CHECK: memref.load
// CHECK: memref.store
func.func @transposed_read(%in: memref<100x64xf32>, %out: memref<64x100xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c64 = arith.constant 64 : index
  %c100 = arith.constant 100 : index
  scf.parallel (%i, %j) = (%c0, %c0) to (%c64, %c100) step (%c1, %c1) {
    %x = memref.load %in[%j, %i] : memref<100x64xf32>
    %e = math.exp %x : f32
    memref.store %e, %out[%i, %j] : memref<64x100xf32>
    scf.reduce
  }
  return
}

func.func @reads_its_output(%buf: memref<64x100xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c64 = arith.constant 64 : index
  %c100 = arith.constant 100 : index
  scf.parallel (%i, %j) = (%c0, %c0) to (%c64, %c100) step (%c1, %c1) {
    %x = memref.load %buf[%c0, %j] : memref<64x100xf32>
    memref.store %x, %buf[%i, %j] : memref<64x100xf32>
    scf.reduce
  }
  return
}

// -----

// A loop with fewer iterations than a block gets one block of exactly that
// many threads; non-unit lower bounds and steps are kept.
// CHECK-LABEL: func.func @small_strided
// CHECK: %[[C1:.*]] = arith.constant 1 : index
// CHECK: %[[C5:.*]] = arith.constant 5 : index
// CHECK: gpu.launch blocks({{.*}}) in (%{{.*}} = %[[C1]], {{.*}}) threads({{.*}}) in (%{{.*}} = %[[C5]],
// CHECK: arith.muli %{{.*}}, %c2
// CHECK: arith.addi %{{.*}}, %c1
func.func @small_strided(%buf: memref<16xf32>) {
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c11 = arith.constant 11 : index
  %zero = arith.constant 0.0 : f32
  scf.parallel (%i) = (%c1) to (%c11) step (%c2) {
    memref.store %zero, %buf[%i] : memref<16xf32>
    scf.reduce
  }
  return
}

// -----

// Work without a parallel dimension (a reduction to a scalar) runs in a
// one-thread kernel; consecutive such ops share it.
// CHECK-LABEL: func.func @scalar_reduction
// CHECK: gpu.launch blocks({{.*}}) in ({{.*}} = %c1, {{.*}} = %c1, {{.*}} = %c1) threads({{.*}}) in ({{.*}} = %c1, {{.*}} = %c1, {{.*}} = %c1) module(@kiln_kernels) function(@kernel_0)
// CHECK: linalg.fill
// CHECK: scf.for
// CHECK: memref.load
// CHECK: arith.addf
// CHECK: gpu.terminator
// CHECK-NOT: gpu.launch
func.func @scalar_reduction(%in: memref<128xf32>, %out: memref<f32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c128 = arith.constant 128 : index
  %zero = arith.constant 0.0 : f32
  linalg.fill ins(%zero : f32) outs(%out : memref<f32>)
  scf.for %i = %c0 to %c128 step %c1 {
    %x = memref.load %in[%i] : memref<128xf32>
    %acc = memref.load %out[] : memref<f32>
    %s = arith.addf %acc, %x : f32
    memref.store %s, %out[] : memref<f32>
  }
  return
}

// -----

// A reshape to a static shape would read its shape operand on the host:
// it becomes a reinterpret_cast, recomputed in the kernel that uses it.
// CHECK-LABEL: func.func @static_reshape
// CHECK-NOT: memref.reshape
// CHECK: gpu.launch
// CHECK: memref.reinterpret_cast %{{.*}} to offset: [0], sizes: [4, 8], strides: [8, 1]
func.func @static_reshape(%in: memref<32xf32>, %shape: memref<2xi64>, %out: memref<4x8xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %c8 = arith.constant 8 : index
  %r = memref.reshape %in(%shape) : (memref<32xf32>, memref<2xi64>) -> memref<4x8xf32>
  scf.parallel (%i, %j) = (%c0, %c0) to (%c4, %c8) step (%c1, %c1) {
    %x = memref.load %r[%i, %j] : memref<4x8xf32>
    memref.store %x, %out[%i, %j] : memref<4x8xf32>
    scf.reduce
  }
  return
}

// -----

// Scalar code at the top level (a loop of one iteration, folded away) goes
// into one kernel with the pure ops computing on its loads; the parallel
// loop after it is a kernel of its own.
// CHECK-LABEL: func.func @scalar_code
// CHECK: gpu.launch {{.*}} function(@kernel_0)
// CHECK: memref.load
// CHECK: arith.mulf
// CHECK: memref.store
// CHECK: gpu.terminator
// CHECK: gpu.launch {{.*}} function(@kernel_1)
// CHECK: scf.if
func.func @scalar_code(%a: memref<1xf32>, %b: memref<1xf32>, %c: memref<8xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  %x = memref.load %a[%c0] : memref<1xf32>
  %y = arith.mulf %x, %x : f32
  memref.store %y, %b[%c0] : memref<1xf32>
  scf.parallel (%i) = (%c0) to (%c8) step (%c1) {
    %v = memref.load %b[%c0] : memref<1xf32>
    memref.store %v, %c[%i] : memref<8xf32>
    scf.reduce
  }
  return
}

// -----

// The host cannot use what a kernel computes.
func.func @host_reads_device(%buf: memref<4xf32>) -> f32 {
  %c0 = arith.constant 0 : index
  // expected-error @+1 {{the host uses its result}}
  %x = memref.load %buf[%c0] : memref<4xf32>
  return %x : f32
}
