//===- KilnToLinalg.h - kiln to linalg patterns -----------------*- C++ -*-===//

#ifndef KILN_CONVERSION_KILNTOLINALG_KILNTOLINALG_H
#define KILN_CONVERSION_KILNTOLINALG_KILNTOLINALG_H

#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/DialectConversion.h"

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
void populateWindowToLinalgPatterns(mlir::TypeConverter &converter,
                                    mlir::RewritePatternSet &patterns);
void populateResizeToLinalgPatterns(mlir::TypeConverter &converter,
                                    mlir::RewritePatternSet &patterns);
void populateDataMovementToLinalgPatterns(mlir::TypeConverter &converter,
                                          mlir::RewritePatternSet &patterns);

} // namespace kiln

#endif // KILN_CONVERSION_KILNTOLINALG_KILNTOLINALG_H
