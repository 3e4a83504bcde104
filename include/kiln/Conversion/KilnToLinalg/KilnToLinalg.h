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
/// How convolutions are lowered: the target's choices.
struct ConvLowering {
  /// Dense 2-D f32 convolutions as implicit GEMMs over a laid-out input
  /// (kiln-lower-matmul reads their B rows in place) where that wastes
  /// little, rather than im2col + matmul, and grouped ones of one image as
  /// matmuls batched over the groups (for the CPU target; device targets
  /// hand im2col matmuls to their GEMM libraries).
  bool implicitGemm = false;
  /// 3x3 stride-1 ones as Winograd F(2x2, 3x3) where that pays
  /// (WinogradConv.cpp).
  bool winograd = false;
  /// kiln-lower-matmul's register tile: its rows, and the f32 lanes its
  /// panels are whole vectors of (which orientation of a convolution's
  /// matmul fills them better: the output pixels as rows or as columns).
  int64_t tileRows = 8, lanes = 16;
};
void populateWindowToLinalgPatterns(mlir::TypeConverter &converter,
                                    mlir::RewritePatternSet &patterns,
                                    const ConvLowering &convs = {});
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
