//===- Epilogue.h - elementwise work applied on a kernel's registers -----===//
//
// A matmul or convolution kernel is often followed, inside its kiln.kernel,
// by elementwise work on its result: a bias, an activation, a residual add,
// a scale. The code generators that emit their own vector loops
// (kiln-lower-matmul, kiln-lower-depthwise) apply that work to each vector
// of the result while it is still in a register, so the result is never
// written to memory and read back.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_TRANSFORMS_EPILOGUE_H
#define KILN_TRANSFORMS_EPILOGUE_H

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/IR/Builders.h"

#include <optional>

namespace mlir {
class IRMapping;
} // namespace mlir

namespace kiln {

/// An elementwise linalg.generic on buffers right after `producer` that
/// reads the producer's result (possibly through reshapes) and is its only
/// reader. The result is a dense buffer viewed as [rows, columns] (row-major);
/// the epilogue's iteration space must split into leading dims whose product
/// is `rows` and trailing dims whose product is `columns`. Each other input
/// is read as a full tensor of the result's shape (or of its trailing rows,
/// repeated: an attention mask over every head), as a vector along the
/// columns (a matmul's bias), as one value per row (a convolution's bias
/// over its channels), or as a scalar. Inputs have the result's element
/// type, but for constant bools (a causal mask), read from an i8 copy.
///
/// With `allowSlicedLines`, the epilogue may read the result through a
/// subview that keeps the first `width()` of each line of its last dim
/// (`pitch()` long): an implicit GEMM's output computed over the input's row
/// pitch. Its columns are then the kept ones (rows x columns / pitch x
/// width), and the producer stores each line's kept part where `output()`
/// holds it.
class Epilogue {
public:
  static std::optional<Epilogue> find(mlir::Operation *producer,
                                      mlir::Value result, int64_t rows,
                                      int64_t columns,
                                      bool allowSlicedLines = false);

  /// Moves the allocations and views between the producer and the epilogue
  /// above the producer, and creates the views `apply` and `output` use, at
  /// `b`'s insertion point (before the producer).
  void prepare(mlir::OpBuilder &b, mlir::Location loc);

  /// The epilogue's body on `acc`, the result's `lanes` values at (`row`,
  /// `column` ...): its other inputs are loaded at the same place (masked
  /// like the result when `mask` is set) and its ops cloned on vectors.
  mlir::Value apply(mlir::OpBuilder &b, mlir::Location loc, mlir::Value acc,
                    mlir::Value row, mlir::Value column, mlir::Value mask);

  /// One vector of the result for `applyEach`.
  struct Place {
    mlir::Value acc, row, column, mask;
  };

  /// `apply` on each of `places`, the clones of each body op emitted for all
  /// of them before the next op's: their dependency chains interleave (a
  /// GELU is ~35 dependent operations per vector, whose latency one chain
  /// at a time exposes).
  llvm::SmallVector<mlir::Value> applyEach(mlir::OpBuilder &b,
                                           mlir::Location loc,
                                           llvm::ArrayRef<Place> places);

  /// Prefetches what `apply` will load from the full-size inputs (a
  /// residual) for the result's `count` values from (`row`, `column`): a
  /// kernel calls it before a tile's long reduction, so those loads hit in
  /// L1 rather than wait on memory (the tiles visit a residual's rows in an
  /// order the hardware prefetchers do not follow).
  void prefetch(mlir::OpBuilder &b, mlir::Location loc, mlir::Value row,
                mlir::Value column, int64_t count);

  /// Whether no input is read along the columns (only per row, scalars
  /// and the result): `apply` then gives the same values at any column.
  bool isColumnInvariant() const {
    return llvm::none_of(inputs, [](const Input &input) {
      return input.access == Access::Full || input.access == Access::Columns;
    });
  }

  /// The epilogue's output as a [rows, columns] view, where the values
  /// `apply` returns are stored.
  mlir::Value output() const { return stored; }

  /// Erases the epilogue op (once its work is in the producer's loops).
  void erase() { op.erase(); }

  mlir::linalg::GenericOp getOp() const { return op; }

  /// The result's line length and the kept part of each line, when the
  /// epilogue reads it sliced (0 otherwise).
  int64_t getPitch() const { return pitch; }
  int64_t getWidth() const { return width; }

private:
  /// How an input is read: the producer's result, a tensor of the result's
  /// shape (of `period` rows when it repeats over the leading rows), a
  /// vector along the columns, one value per row (modulo `period` when it
  /// repeats over the leading rows, e.g. per channel of each image), or a
  /// scalar.
  enum class Access { Result, Full, Columns, PerRow, Scalar };
  struct Input {
    Input(Access access, int64_t period = 0) : access(access), period(period) {}
    Access access;
    int64_t period;
    mlir::Value view;
    /// A constant i1 input, read from its i8 copy (`view`): memory holds
    /// an i1 per byte, which a vector<16xi1> load would read as bits.
    bool widened = false;
  };

  /// Maps the body's arguments to `place`'s vectors: its result, the
  /// other inputs loaded there.
  void mapInputs(mlir::OpBuilder &b, mlir::Location loc, const Place &place,
                 mlir::IRMapping &mapping);
  /// `bodyOp` on `place`'s vectors (its operands through `mapping`).
  void cloneOnVectors(mlir::OpBuilder &b, mlir::Location loc,
                      mlir::Operation &bodyOp, const Place &place,
                      mlir::IRMapping &mapping);

  static std::optional<Input> classify(mlir::AffineMap map,
                                       mlir::MemRefType type,
                                       llvm::ArrayRef<int64_t> loopSizes,
                                       unsigned rowLoops);

  mlir::linalg::GenericOp op;
  mlir::Operation *producer = nullptr;
  /// How many leading loops of the epilogue make up the rows.
  unsigned rowLoops = 0;
  int64_t pitch = 0, width = 0;
  llvm::SmallVector<Input> inputs;
  mlir::Value stored;
};

} // namespace kiln

#endif // KILN_TRANSFORMS_EPILOGUE_H
