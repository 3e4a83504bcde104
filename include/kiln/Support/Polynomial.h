//===- Polynomial.h - polynomial evaluation in arith/math ops ---*- C++ -*-===//
//
// The polynomials of kiln's transcendental expansions (exp, GELU's tail),
// emitted so that their latency chain is short: a matmul's epilogue or a
// softmax's exp loop runs many of them, but a core's out-of-order window
// holds only a few chains at a time.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_SUPPORT_POLYNOMIAL_H
#define KILN_SUPPORT_POLYNOMIAL_H

#include "mlir/IR/Builders.h"

namespace kiln {

/// sum c_i x^i (`coefficients` lowest degree first) for a float or vector of
/// floats `x`, with fused multiply-adds: the pairs c_2i + c_2i+1 x, then
/// Horner's rule in x^2 over the pairs. n coefficients take n / 2 + 1
/// dependent FMAs instead of Horner's n - 1, for one multiply (x^2) more.
mlir::Value emitPolynomial(mlir::OpBuilder &b, mlir::Location loc,
                           mlir::Value x, llvm::ArrayRef<double> coefficients);

} // namespace kiln

#endif // KILN_SUPPORT_POLYNOMIAL_H
