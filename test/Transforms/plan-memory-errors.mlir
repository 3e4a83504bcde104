// RUN: kiln-opt %s --kiln-plan-memory -split-input-file -verify-diagnostics

// A buffer allocated inside a parallel loop would be one slot shared by the
// threads that run the loop: refused.
func.func @parallel(%n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  scf.parallel (%i) = (%c0) to (%n) step (%c1) {
    // expected-error @+1 {{a buffer allocated inside a parallel loop cannot have one arena slot}}
    %t = memref.alloc() : memref<4xf32>
    scf.reduce
  }
  return
}
