//===- ConstantData.cpp - the numbers inside constant attributes ----------===//

#include "kiln/Dialect/Kiln/IR/ConstantData.h"

#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/DialectResourceBlobManager.h"

#include <cstring>

using namespace mlir;

std::optional<llvm::SmallVector<float>> kiln::readFloatData(Attribute value) {
  auto elements = dyn_cast<ElementsAttr>(value);
  if (!elements || !elements.getElementType().isF32())
    return std::nullopt;
  if (auto dense = dyn_cast<DenseElementsAttr>(value))
    return llvm::SmallVector<float>(dense.getValues<float>());
  if (auto resource = dyn_cast<DenseResourceElementsAttr>(value)) {
    AsmResourceBlob *blob = resource.getRawHandle().getBlob();
    if (!blob)
      return std::nullopt;
    ArrayRef<char> bytes = blob->getData();
    llvm::SmallVector<float> data(bytes.size() / sizeof(float));
    std::memcpy(data.data(), bytes.data(), data.size() * sizeof(float));
    return data;
  }
  return std::nullopt;
}
