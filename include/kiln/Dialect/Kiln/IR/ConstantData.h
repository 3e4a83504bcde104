//===- ConstantData.h - the numbers inside constant attributes --*- C++ -*-===//
//
// Weights arrive as DenseResourceElementsAttr blobs (not uniqued, not
// printed) and small constants as DenseElementsAttr; passes that rewrite
// weights at compile time (packing, precision conversion) read both.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_DIALECT_KILN_IR_CONSTANTDATA_H
#define KILN_DIALECT_KILN_IR_CONSTANTDATA_H

#include "mlir/IR/Attributes.h"

#include "llvm/ADT/SmallVector.h"

#include <optional>

namespace kiln {

/// The elements of an f32 dense or dense-resource attribute, in row-major
/// order, or nullopt for anything else (another element type, a resource
/// whose blob is gone).
std::optional<llvm::SmallVector<float>> readFloatData(mlir::Attribute value);

} // namespace kiln

#endif // KILN_DIALECT_KILN_IR_CONSTANTDATA_H
