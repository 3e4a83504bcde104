//===- KilnToLinalg.h - kiln to linalg patterns -----------------*- C++ -*-===//

#ifndef KILN_CONVERSION_KILNTOLINALG_KILNTOLINALG_H
#define KILN_CONVERSION_KILNTOLINALG_KILNTOLINALG_H

#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/DialectConversion.h"

#include <optional>

namespace kiln {

/// Maps kiln's tensor types to linalg-ready ones: signed/unsigned integer
/// element types become signless.
class KilnToLinalgTypeConverter : public mlir::TypeConverter {
public:
  KilnToLinalgTypeConverter();
};

void populateElementwiseToLinalgPatterns(mlir::TypeConverter &converter,
                                         mlir::RewritePatternSet &patterns);
void populateContractionToLinalgPatterns(mlir::TypeConverter &converter,
                                         mlir::RewritePatternSet &patterns);
void populateReductionToLinalgPatterns(mlir::TypeConverter &converter,
                                       mlir::RewritePatternSet &patterns);
/// `implicitGemmConvs`: dense 2-D f32 convolutions as implicit GEMMs over a
/// laid-out input (kiln-lower-matmul reads their B rows in place) where
/// that wastes little, rather than im2col + matmul (for the CPU target;
/// device targets hand im2col matmuls to their GEMM libraries).
/// `winogradConvs`: 3x3 stride-1 ones as Winograd F(2x2, 3x3) where that
/// pays (WinogradConv.cpp).
void populateWindowToLinalgPatterns(mlir::TypeConverter &converter,
                                    mlir::RewritePatternSet &patterns,
                                    bool implicitGemmConvs = false,
                                    bool winogradConvs = false);
/// When `conv` runs as Winograd F(2x2, 3x3) with winogradConvs, the share
/// of the direct convolution's multiplies its matmuls perform (16 per tile
/// against 9 per output, the tiles in whole panels of 32); nullopt when it
/// runs directly. For the kernel report's predictions.
std::optional<double> winogradShareOfWork(mlir::Operation *conv);
void populateResizeToLinalgPatterns(mlir::TypeConverter &converter,
                                    mlir::RewritePatternSet &patterns);
void populateDataMovementToLinalgPatterns(mlir::TypeConverter &converter,
                                          mlir::RewritePatternSet &patterns);

} // namespace kiln

#endif // KILN_CONVERSION_KILNTOLINALG_KILNTOLINALG_H
