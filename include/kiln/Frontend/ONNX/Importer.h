//===- Importer.h - ONNX model import into the kiln dialect -----*- C++ -*-===//
//
// Loads an ONNX model (binary protobuf or ONNX text format, with external
// weight files) and imports it as one `func.func @main` of kiln ops. Every
// value gets a static shape at import: dynamic input dims must be pinned
// through ImportOptions. Errors go to the MLIR context's diagnostic engine;
// the importer never crashes on bad input.
//
// This header does not expose protobuf: tools and tests link only MLIR.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_FRONTEND_ONNX_IMPORTER_H
#define KILN_FRONTEND_ONNX_IMPORTER_H

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/OwningOpRef.h"

#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/ADT/StringRef.h"

namespace kiln::frontend {

struct ImportOptions {
  /// Whole shapes of named graph inputs, e.g. "pixel_values" -> 1x3x224x224.
  llvm::StringMap<llvm::SmallVector<int64_t>> inputShapes;
  /// Values of symbolic dims (ONNX dim_param), e.g. "batch" -> 8.
  llvm::StringMap<int64_t> dimValues;
  /// Graph inputs replaced by constants read from ONNX TensorProto files
  /// (`.pb`), e.g. a shape or axes input that must be known at compile time.
  llvm::StringMap<std::string> constantInputs;
  /// Constants with at least this many bytes become dense_resource blobs
  /// (not uniqued or printed); smaller ones stay dense attributes.
  int64_t resourceThresholdBytes = 1024;
};

/// Imports the model at `path` (`.onnxtext`/`.txt` is parsed as ONNX text
/// format, anything else as binary protobuf). Returns null after reporting
/// errors.
mlir::OwningOpRef<mlir::ModuleOp> importModelFile(mlir::MLIRContext &context,
                                                  llvm::StringRef path,
                                                  const ImportOptions &options);

/// Imports a binary model held in memory; external data files resolve inside
/// `baseDirectory` (empty: external data is refused). Used by the fuzzer.
mlir::OwningOpRef<mlir::ModuleOp>
importModelBytes(mlir::MLIRContext &context, llvm::StringRef bytes,
                 llvm::StringRef baseDirectory, const ImportOptions &options);

/// Registers the dialects an imported module uses.
void registerImportDialects(mlir::MLIRContext &context);

/// Parses "1x3x224x224" into {1, 3, 224, 224}.
std::optional<llvm::SmallVector<int64_t>> parseShape(llvm::StringRef text);

} // namespace kiln::frontend

#endif // KILN_FRONTEND_ONNX_IMPORTER_H
