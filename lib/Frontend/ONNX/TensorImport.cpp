//===- TensorImport.cpp - ONNX TensorProto to MLIR attributes -------------===//
//
// Checks every size against the declared shape before touching data, and
// keeps large tensors as dense_resource blobs. External data is memory-mapped
// and referenced without a copy when its alignment allows.
//
//===----------------------------------------------------------------------===//

#include "ImporterImpl.h"

#include "mlir/IR/AsmState.h"
#include "mlir/IR/BuiltinDialect.h"
#include "mlir/IR/DialectResourceBlobManager.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"

#include <cstring>

using namespace mlir;
using onnx::TensorProto;

namespace kiln::frontend {

FailureOr<Type> importElementType(int32_t dataType, MLIRContext *context,
                                  Location loc) {
  Builder b(context);
  switch (dataType) {
  case TensorProto::FLOAT:
    return b.getF32Type();
  case TensorProto::FLOAT16:
    return b.getF16Type();
  case TensorProto::BFLOAT16:
    return b.getBF16Type();
  case TensorProto::DOUBLE:
    return b.getF64Type();
  case TensorProto::BOOL:
    return b.getI1Type();
  case TensorProto::INT8:
    return b.getIntegerType(8);
  case TensorProto::INT16:
    return b.getIntegerType(16);
  case TensorProto::INT32:
    return b.getI32Type();
  case TensorProto::INT64:
    return b.getI64Type();
  case TensorProto::UINT8:
    return b.getIntegerType(8, /*isSigned=*/false);
  case TensorProto::UINT16:
    return b.getIntegerType(16, /*isSigned=*/false);
  case TensorProto::UINT32:
    return b.getIntegerType(32, /*isSigned=*/false);
  case TensorProto::UINT64:
    return b.getIntegerType(64, /*isSigned=*/false);
  default:
    break;
  }
  const std::string &name =
      TensorProto::DataType_Name(static_cast<TensorProto::DataType>(dataType));
  return emitError(loc) << "unsupported tensor element type "
                        << (name.empty() ? std::to_string(dataType) : name);
}

FailureOr<int64_t> checkedElementCount(ArrayRef<int64_t> dims, Location loc) {
  int64_t count = 1;
  for (int64_t dim : dims) {
    if (dim < 0)
      return emitError(loc) << "tensor dimension " << dim << " is negative";
    if (__builtin_mul_overflow(count, dim, &count))
      return emitError(loc) << "tensor dimensions overflow 64 bits";
  }
  return count;
}

namespace {

/// Bytes of one element as stored in raw_data (bool takes one byte).
int64_t storageBytes(Type elementType) {
  return std::max<int64_t>(1, elementType.getIntOrFloatBitWidth() / 8);
}

/// A blob name the MLIR printer accepts, derived from the tensor's name.
std::string blobName(llvm::StringRef tensorName) {
  std::string name = "onnx_";
  for (char c : tensorName)
    name += (llvm::isAlnum(c) || c == '_' || c == '.') ? c : '_';
  return name;
}

/// The bytes of the typed repeated field that holds `type`'s data, with each
/// value narrowed to its storage width.
template <typename Field>
std::vector<char> packField(const Field &values, int64_t width) {
  std::vector<char> bytes(values.size() * width);
  for (int i = 0; i < values.size(); ++i) {
    auto value = values.Get(i);
    // Little-endian host: the low bytes of the value are the narrow value.
    std::memcpy(bytes.data() + i * width, &value, width);
  }
  return bytes;
}

FailureOr<std::vector<char>> typedFieldBytes(const TensorProto &tensor,
                                             int64_t width, int64_t count,
                                             Location loc) {
  auto checkCount = [&](int64_t have) -> LogicalResult {
    if (have == count)
      return success();
    return emitError(loc) << "tensor '" << tensor.name() << "' has " << have
                          << " values for " << count << " elements";
  };
  switch (tensor.data_type()) {
  case TensorProto::FLOAT:
    if (failed(checkCount(tensor.float_data_size())))
      return failure();
    return packField(tensor.float_data(), width);
  case TensorProto::DOUBLE:
    if (failed(checkCount(tensor.double_data_size())))
      return failure();
    return packField(tensor.double_data(), width);
  case TensorProto::INT64:
    if (failed(checkCount(tensor.int64_data_size())))
      return failure();
    return packField(tensor.int64_data(), width);
  case TensorProto::UINT32:
  case TensorProto::UINT64:
    if (failed(checkCount(tensor.uint64_data_size())))
      return failure();
    return packField(tensor.uint64_data(), width);
  default: // int32_data holds every narrower type, f16/bf16 as raw bits.
    if (failed(checkCount(tensor.int32_data_size())))
      return failure();
    return packField(tensor.int32_data(), width);
  }
}

/// A memory-mapped slice of an external data file, kept alive by the blob.
struct ExternalSlice {
  std::shared_ptr<llvm::MemoryBuffer> buffer;
};

FailureOr<std::string> resolveExternalPath(const TensorProto &tensor,
                                           llvm::StringRef location,
                                           const TensorImportOptions &options,
                                           Location loc) {
  auto refuse = [&](const llvm::Twine &why) {
    return emitError(loc) << "external data '" << location << "' of tensor '"
                          << tensor.name() << "' " << why;
  };
  if (options.baseDirectory.empty())
    return refuse("cannot be used: the model was not loaded from a file");
  if (location.empty() || llvm::sys::path::is_absolute(location))
    return refuse("must be a path relative to the model's folder");
  for (llvm::StringRef part : llvm::make_range(llvm::sys::path::begin(location),
                                               llvm::sys::path::end(location)))
    if (part == "..")
      return refuse("must not leave the model's folder ('..')");
  llvm::SmallString<256> joined(options.baseDirectory);
  llvm::sys::path::append(joined, location);
  llvm::SmallString<256> real, base;
  if (llvm::sys::fs::real_path(joined, real))
    return refuse("does not exist (looked for '" + joined + "')");
  if (llvm::sys::fs::real_path(options.baseDirectory, base))
    return refuse("cannot be resolved: the model's folder is unreadable");
  llvm::StringRef realRef(real);
  if (!realRef.starts_with(base) ||
      (realRef.size() > base.size() &&
       !llvm::sys::path::is_separator(realRef[base.size()])))
    return refuse("resolves outside the model's folder (through a link)");
  return std::string(real);
}

/// The external bytes of `tensor` as a blob, without copying when aligned.
FailureOr<AsmResourceBlob> externalBlob(const TensorProto &tensor,
                                        int64_t byteSize, int64_t alignment,
                                        const TensorImportOptions &options,
                                        Location loc) {
  std::string location;
  int64_t offset = 0, length = -1;
  for (const onnx::StringStringEntryProto &entry : tensor.external_data()) {
    llvm::StringRef key = entry.key(), value = entry.value();
    if (key == "location") {
      location = entry.value();
    } else if (key == "offset" || key == "length") {
      int64_t parsed;
      if (value.getAsInteger(10, parsed) || parsed < 0)
        return emitError(loc)
               << "external data " << key << " '" << value << "' of tensor '"
               << tensor.name() << "' is not a non-negative integer";
      (key == "offset" ? offset : length) = parsed;
    }
  }
  FailureOr<std::string> path =
      resolveExternalPath(tensor, location, options, loc);
  if (failed(path))
    return failure();
  if (length >= 0 && length != byteSize)
    return emitError(loc) << "external data of tensor '" << tensor.name()
                          << "' has length " << length << " but its shape "
                          << "needs " << byteSize << " bytes";
  uint64_t fileSize = 0;
  if (llvm::sys::fs::file_size(*path, fileSize))
    return emitError(loc) << "cannot read the size of '" << *path << "'";
  if (static_cast<uint64_t>(offset) > fileSize ||
      fileSize - offset < static_cast<uint64_t>(byteSize))
    return emitError(loc) << "external data of tensor '" << tensor.name()
                          << "' needs " << byteSize << " bytes at offset "
                          << offset << " but '" << location << "' has "
                          << fileSize << " bytes";
  auto buffer = llvm::MemoryBuffer::getFileSlice(*path, byteSize, offset,
                                                 /*IsVolatile=*/false);
  if (!buffer)
    return emitError(loc) << "cannot read '" << *path
                          << "': " << buffer.getError().message();
  std::shared_ptr<llvm::MemoryBuffer> owned(std::move(*buffer));
  ArrayRef<char> data(owned->getBufferStart(), byteSize);
  if (reinterpret_cast<uintptr_t>(data.data()) % alignment != 0)
    return HeapAsmResourceBlob::allocateAndCopyWithAlign(data, alignment);
  return AsmResourceBlob(
      data, alignment,
      [owned](void *, size_t, size_t) mutable { owned.reset(); },
      /*dataIsMutable=*/false);
}

/// A dense attribute from little-endian bytes (bools one byte each).
ElementsAttr denseFromBytes(RankedTensorType type, ArrayRef<char> bytes) {
  if (type.getElementType().isInteger(1)) {
    SmallVector<bool> values(bytes.begin(), bytes.end());
    return DenseElementsAttr::get(type, values);
  }
  return DenseElementsAttr::getFromRawBuffer(type, bytes);
}

/// A blob with `tensor`'s raw_data: moved out of `owner` (the same tensor,
/// mutable) when given and suitably aligned, copied otherwise.
AsmResourceBlob rawDataBlob(const TensorProto &tensor, TensorProto *owner,
                            int64_t alignment) {
  const std::string &raw = tensor.raw_data();
  ArrayRef<char> data(raw.data(), raw.size());
  if (!owner || reinterpret_cast<uintptr_t>(raw.data()) % alignment != 0)
    return HeapAsmResourceBlob::allocateAndCopyWithAlign(data, alignment);
  std::shared_ptr<std::string> moved(owner->release_raw_data());
  return AsmResourceBlob(
      ArrayRef<char>(moved->data(), moved->size()), alignment,
      [moved](void *, size_t, size_t) mutable { moved.reset(); },
      /*dataIsMutable=*/false);
}

} // namespace

FailureOr<ElementsAttr> importTensor(const TensorProto &tensor,
                                     MLIRContext *context,
                                     const TensorImportOptions &options,
                                     Location loc,
                                     TensorProto *takeRawDataFrom) {
  FailureOr<Type> elementType =
      importElementType(tensor.data_type(), context, loc);
  if (failed(elementType))
    return failure();
  SmallVector<int64_t> dims(tensor.dims().begin(), tensor.dims().end());
  FailureOr<int64_t> count = checkedElementCount(dims, loc);
  if (failed(count))
    return failure();
  int64_t width = storageBytes(*elementType);
  int64_t byteSize;
  if (__builtin_mul_overflow(*count, width, &byteSize))
    return emitError(loc) << "tensor '" << tensor.name() << "' is too large";
  auto type = RankedTensorType::get(dims, *elementType);
  bool isBool = elementType->isInteger(1);
  bool asResource = !isBool && byteSize >= options.resourceThresholdBytes;

  if (tensor.data_location() == TensorProto::EXTERNAL) {
    FailureOr<AsmResourceBlob> blob =
        externalBlob(tensor, byteSize, width, options, loc);
    if (failed(blob))
      return failure();
    if (asResource)
      return ElementsAttr(DenseResourceElementsAttr::get(
          type, blobName(tensor.name()), std::move(*blob)));
    return denseFromBytes(type, blob->getData());
  }

  if (tensor.has_raw_data()) {
    const std::string &raw = tensor.raw_data();
    if (static_cast<int64_t>(raw.size()) != byteSize)
      return emitError(loc) << "tensor '" << tensor.name() << "' has "
                            << raw.size() << " bytes of raw_data but its "
                            << "shape needs " << byteSize;
    if (asResource)
      return ElementsAttr(DenseResourceElementsAttr::get(
          type, blobName(tensor.name()),
          rawDataBlob(tensor, takeRawDataFrom, width)));
    return denseFromBytes(type, ArrayRef<char>(raw.data(), raw.size()));
  }
  FailureOr<std::vector<char>> packed =
      typedFieldBytes(tensor, width, *count, loc);
  if (failed(packed))
    return failure();
  if (asResource)
    return ElementsAttr(DenseResourceElementsAttr::get(
        type, blobName(tensor.name()),
        HeapAsmResourceBlob::allocateAndCopyWithAlign(*packed, width)));
  return denseFromBytes(type, *packed);
}

} // namespace kiln::frontend
