//===- kiln-compile.cpp - the kiln compiler driver ------------------------===//
//
// kiln-compile MODEL.onnx [-o OUT] --emit=kiln [--input-shape NAME=1x3x224x224]
//                         [--dim NAME=VALUE] [--const-input NAME=FILE.pb] [-v]
//
// Each --emit stage stops the pipeline after that stage and writes its
// output. Today the pipeline ends at the shape-inferred kiln dialect.
//
//===----------------------------------------------------------------------===//

#include "kiln/Compiler/Pipeline.h"
#include "kiln/Frontend/ONNX/Importer.h"

#include "mlir/IR/AsmState.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Support/FileUtilities.h"
#include "mlir/Support/Timing.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/ToolOutputFile.h"

using namespace mlir;
namespace cl = llvm::cl;

namespace {

enum class EmitStage { Kiln };

cl::opt<std::string> inputFile(cl::Positional, cl::desc("<model.onnx>"),
                               cl::Required);
cl::opt<std::string> outputFile("o", cl::desc("Output file ('-' for stdout)"),
                                cl::value_desc("file"), cl::init("-"));
cl::opt<EmitStage>
    emit("emit", cl::desc("Stage to stop after"), cl::init(EmitStage::Kiln),
         cl::values(clEnumValN(EmitStage::Kiln, "kiln",
                               "shape-inferred kiln dialect (.mlir)")));
cl::list<std::string> inputShapes(
    "input-shape",
    cl::desc("Pin a whole input shape: NAME=D0xD1x... (repeatable, or "
             "comma-separated)"),
    cl::value_desc("NAME=SHAPE"), cl::CommaSeparated);
cl::list<std::string>
    dimValues("dim", cl::desc("Pin a symbolic dim: NAME=VALUE (repeatable)"),
              cl::value_desc("NAME=VALUE"), cl::CommaSeparated);
cl::list<std::string> constInputs(
    "const-input",
    cl::desc("Replace a graph input by the constant in an ONNX TensorProto "
             "file: NAME=FILE.pb (repeatable)"),
    cl::value_desc("NAME=FILE"), cl::CommaSeparated);
cl::opt<bool> verbose("v", cl::desc("Print the time of each stage"));

/// Peak resident memory of this process so far (VmHWM), in MiB; -1 where
/// /proc is not available.
int64_t peakResidentMiB() {
  // /proc files report size 0: read them as a stream.
  auto status = llvm::MemoryBuffer::getFileAsStream("/proc/self/status");
  if (!status)
    return -1;
  llvm::StringRef text = (*status)->getBuffer();
  size_t at = text.find("VmHWM:");
  if (at == llvm::StringRef::npos)
    return -1;
  int64_t kib;
  llvm::StringRef value = text.drop_front(at + 6).ltrim(" \t");
  if (value.take_while(llvm::isDigit).getAsInteger(10, kib))
    return -1;
  return kib / 1024;
}

/// With -v, reports the peak memory after each stage (next to its time).
void reportPeakMemory(llvm::StringRef stage) {
  if (verbose)
    llvm::errs() << "kiln-compile: peak memory after " << stage << ": "
                 << peakResidentMiB() << " MiB\n";
}

/// Reads --input-shape and --dim into import options.
LogicalResult parseOptions(kiln::frontend::ImportOptions &options) {
  for (const std::string &entry : inputShapes) {
    auto [name, shapeText] = llvm::StringRef(entry).split('=');
    std::optional<SmallVector<int64_t>> shape =
        kiln::frontend::parseShape(shapeText);
    if (name.empty() || !shape) {
      llvm::errs() << "error: --input-shape expects NAME=D0xD1x..., got '"
                   << entry << "'\n";
      return failure();
    }
    options.inputShapes[name] = *shape;
  }
  for (const std::string &entry : constInputs) {
    auto [name, path] = llvm::StringRef(entry).split('=');
    if (name.empty() || path.empty()) {
      llvm::errs() << "error: --const-input expects NAME=FILE.pb, got '"
                   << entry << "'\n";
      return failure();
    }
    options.constantInputs[name] = path.str();
  }
  for (const std::string &entry : dimValues) {
    auto [name, valueText] = llvm::StringRef(entry).split('=');
    int64_t value;
    if (name.empty() || valueText.getAsInteger(10, value) || value < 0) {
      llvm::errs() << "error: --dim expects NAME=VALUE, got '" << entry
                   << "'\n";
      return failure();
    }
    options.dimValues[name] = value;
  }
  return success();
}

} // namespace

int main(int argc, char **argv) {
  llvm::InitLLVM init(argc, argv);
  registerAsmPrinterCLOptions();
  registerMLIRContextCLOptions();
  registerPassManagerCLOptions();
  registerDefaultTimingManagerCLOptions();
  cl::ParseCommandLineOptions(argc, argv, "kiln ONNX compiler\n");

  kiln::frontend::ImportOptions options;
  if (failed(parseOptions(options)))
    return 1;

  MLIRContext context;
  kiln::frontend::registerImportDialects(context);
  llvm::SourceMgr sourceMgr;
  SourceMgrDiagnosticHandler diagnostics(sourceMgr, &context);

  DefaultTimingManager timing;
  applyDefaultTimingManagerCLOptions(timing);
  if (verbose)
    timing.setEnabled(true);
  TimingScope root = timing.getRootScope();

  OwningOpRef<ModuleOp> module;
  {
    TimingScope importTimer = root.nest("import");
    module = kiln::frontend::importModelFile(context, inputFile, options);
  }
  if (!module)
    return 1;
  reportPeakMemory("import");

  PassManager pm(&context);
  if (failed(applyPassManagerCLOptions(pm)))
    return 1;
  kiln::buildGraphPipeline(pm);
  {
    TimingScope passTimer = root.nest("graph passes");
    pm.enableTiming(passTimer);
    if (failed(pm.run(*module)) || failed(kiln::verifyStaticShapes(*module)))
      return 1;
  }
  reportPeakMemory("graph passes");

  std::string error;
  std::unique_ptr<llvm::ToolOutputFile> output =
      openOutputFile(outputFile, &error);
  if (!output) {
    llvm::errs() << "error: " << error << "\n";
    return 1;
  }
  {
    TimingScope printTimer = root.nest("emit");
    module->print(output->os());
    output->os() << "\n";
  }
  output->keep();
  reportPeakMemory("emit");
  return 0;
}
