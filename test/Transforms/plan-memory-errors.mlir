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
