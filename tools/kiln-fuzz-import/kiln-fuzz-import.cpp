//===- kiln-fuzz-import.cpp - libFuzzer target over the ONNX importer -----===//
//
// Feeds arbitrary bytes to the model loader, the importer and the graph
// pipeline. Any crash, sanitizer report or timeout is a bug: bad models must
// only ever produce diagnostics.
//
//===----------------------------------------------------------------------===//

#include "kiln/Compiler/Pipeline.h"
#include "kiln/Frontend/ONNX/Importer.h"

#include "mlir/IR/Diagnostics.h"
#include "mlir/Pass/PassManager.h"

#include <cstdint>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  mlir::MLIRContext context(mlir::MLIRContext::Threading::DISABLED);
  mlir::ScopedDiagnosticHandler silence(
      &context, [](mlir::Diagnostic &) { return mlir::success(); });
  kiln::frontend::ImportOptions options;
  llvm::StringRef bytes(reinterpret_cast<const char *>(data), size);
  mlir::OwningOpRef<mlir::ModuleOp> module =
      kiln::frontend::importModelBytes(context, bytes, "", options);
  if (!module)
    return 0;
  mlir::PassManager pm(&context);
  kiln::buildGraphPipeline(pm);
  (void)pm.run(*module);
  return 0;
}
