// RUN: kiln-opt %s --kiln-plan-memory -split-input-file -verify-diagnostics

// A buffer allocated inside a parallel loop would be one slot shared by the
// threads that run the loop, and this one is too big for a stack slot:
// refused.
func.func @parallel(%n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  scf.parallel (%i) = (%c0) to (%n) step (%c1) {
    // expected-error @+1 {{a buffer of 262144 bytes allocated inside a parallel loop can have neither one arena slot nor a stack slot (at most 131072 bytes)}}
    %t = memref.alloc() : memref<65536xf32>
    scf.reduce
  }
  return
}

// -----

// A lane's buffer read after the lanes (kiln-form-lanes moves such buffers
// before the loop): refused, not placed as if the lane owned it.
func.func @lane_buffer_escapes(%in: memref<65536xf32>, %out: memref<65536xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %escaped = scf.parallel (%lane) = (%c0) to (%c2) step (%c1) init (%in) -> memref<65536xf32> {
    %r = scf.index_switch %lane -> memref<65536xf32>
    case 0 {
      // expected-error @+1 {{a buffer allocated in a lane of a kiln.lanes loop is used outside it}}
      %a = memref.alloc() : memref<65536xf32>
      scf.yield %a : memref<65536xf32>
    }
    default {
      scf.yield %in : memref<65536xf32>
    }
    scf.reduce(%r : memref<65536xf32>) {
    ^bb0(%x: memref<65536xf32>, %y: memref<65536xf32>):
      scf.reduce.return %x : memref<65536xf32>
    }
  } {kiln.lanes}
  memref.copy %escaped, %out : memref<65536xf32> to memref<65536xf32>
  return
}
