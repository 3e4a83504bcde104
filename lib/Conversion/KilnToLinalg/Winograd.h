//===- Winograd.h - 3x3 convolutions as Winograd F(2x2, 3x3) ----*- C++ -*-===//

#ifndef KILN_LIB_CONVERSION_KILNTOLINALG_WINOGRAD_H
#define KILN_LIB_CONVERSION_KILNTOLINALG_WINOGRAD_H

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinTypes.h"

#include <optional>

namespace kiln::detail {

/// The sizes of a convolution computed by 2x2 output tiles.
struct WinogradShape {
  int64_t batch, channels, outputs, tileRows, tileCols;
  /// `input`: the convolution's input [N, C, H, W] (padded or not);
  /// `output`: its result [N, O, OH, OW].
  WinogradShape(mlir::RankedTensorType input, mlir::RankedTensorType output);
  /// The images transformed and multiplied at once (a divisor of the
  /// batch), so that their transformed tiles stay in the caches; 0 when
  /// one image's are too many.
  int64_t imagesPerGroup() const;
};

/// When a dense f32 2-D convolution is computed faster as Winograd F(2x2,
/// 3x3) (a 3x3 window, stride and dilation 1, at least 16 input and output
/// channels, one image's transformed input small enough to stay in the
/// caches, and enough tiles per group of images that the saved multiplies
/// outweigh the transforms and the matmuls' ragged panels), the share of the
/// direct convolution's multiplies its matmuls perform; nullopt otherwise.
std::optional<double> winogradShare(llvm::ArrayRef<int64_t> kernel,
                                    llvm::ArrayRef<int64_t> strides,
                                    llvm::ArrayRef<int64_t> dilations,
                                    mlir::RankedTensorType input,
                                    mlir::RankedTensorType output);

/// The convolution of `padded` (its input, padded so that [N, C, 2 *
/// tileRows + 2, 2 * tileCols + 2] covers every tile) with the constant
/// `filters` ([O][C][3][3], row-major) as Winograd F(2x2, 3x3), without
/// bias, of `type` [N, O, OH, OW], a loop over groups of images when the
/// batch's transformed input is too large. `name` names the transformed
/// filters' resource.
mlir::Value convAsWinograd(mlir::OpBuilder &b, mlir::Location loc,
                           mlir::Value padded, llvm::ArrayRef<float> filters,
                           mlir::RankedTensorType type, llvm::StringRef name);

} // namespace kiln::detail

#endif // KILN_LIB_CONVERSION_KILNTOLINALG_WINOGRAD_H
