//===- kiln-compile.cpp - the kiln compiler driver ------------------------===//
//
// kiln-compile MODEL.onnx [-o OUT]
//              [--emit=kiln|kernels|linalg|ptx|llvm|asm|obj|so]
//              [--target=cpu|cuda] [--gpu=sm_XX] [--cuda-path=DIR]
//              [--mcpu=CPU] [--report[=json]] [--machine=FILE.json]
//              [--roofline-threads=N] [--profile] [--explain-matmuls] [-v]
//              [--split-batch-lanes=K]
//              [--input-shape NAME=1x3x224x224] [--dim NAME=N]
//              [--const-input NAME=FILE.pb]
//
// Each --emit stage stops the pipeline after that stage and writes its
// output; the default builds model.so.
//
//===----------------------------------------------------------------------===//

#include "kiln/Compiler/KernelReport.h"
#include "kiln/Compiler/Pipeline.h"
#include "kiln/Frontend/ONNX/Importer.h"
#include "kiln/Target/CPU/Backend.h"
#include "kiln/Target/CPU/TargetDescription.h"
#include "kiln/Target/CUDA/Backend.h"
#include "kiln/Target/CUDA/TargetDescription.h"

#include "kiln/Conversion/Passes.h"
#include "kiln/Dialect/Kiln/Transforms/Passes.h"

#include "mlir/IR/AsmState.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/InitAllDialects.h"
#include "mlir/InitAllExtensions.h"
#include "mlir/InitAllPasses.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Support/FileUtilities.h"
#include "mlir/Support/Timing.h"
#include "mlir/Target/LLVMIR/Dialect/All.h"
#include "mlir/Transforms/Passes.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/CodeGen/CommandFlags.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"

#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/Threading.h"
#include "llvm/Support/ToolOutputFile.h"
#include <unistd.h>

using namespace mlir;
namespace cl = llvm::cl;

namespace {

enum class EmitStage { Kiln, Kernels, Linalg, PTX, LLVM, Asm, Obj, So };
enum class Target { CPU, CUDA };

cl::opt<std::string> inputFile(cl::Positional, cl::desc("<model.onnx>"),
                               cl::Required);
cl::opt<std::string> outputFile(
    "o",
    cl::desc("Output file ('-' for stdout; default: <model>.so for "
             "--emit=so, <model>.o for --emit=obj, stdout otherwise)"),
    cl::value_desc("file"));
cl::opt<EmitStage> emit(
    "emit", cl::desc("Stage to stop after"), cl::init(EmitStage::So),
    cl::values(
        clEnumValN(EmitStage::Kiln, "kiln", "shape-inferred kiln dialect"),
        clEnumValN(EmitStage::Kernels, "kernels",
                   "kiln dialect grouped into fused kernel regions"),
        clEnumValN(EmitStage::Linalg, "linalg", "linalg on tensors"),
        clEnumValN(EmitStage::PTX, "ptx",
                   "the device kernels as PTX (--target=cuda)"),
        clEnumValN(EmitStage::LLVM, "llvm", "optimized LLVM IR (.ll)"),
        clEnumValN(EmitStage::Asm, "asm", "assembly (.s)"),
        clEnumValN(EmitStage::Obj, "obj", "object file (.o)"),
        clEnumValN(EmitStage::So, "so", "shared library model.so (default)")));
cl::opt<Target> target(
    "target", cl::desc("Where the model's kernels run"), cl::init(Target::CPU),
    cl::values(clEnumValN(Target::CPU, "cpu", "this x86-64 CPU (default)"),
               clEnumValN(Target::CUDA, "cuda",
                          "an NVIDIA GPU (--gpu), through the CUDA driver")));
cl::opt<std::string> gpuChip("gpu",
                             cl::desc("GPU architecture for --target=cuda: "
                                      "sm_80, sm_90 (default), sm_100, sm_120"),
                             cl::init("sm_90"), cl::value_desc("sm_XX"));
cl::opt<std::string> cudaPath(
    "cuda-path",
    cl::desc("CUDA toolkit for ptxas and libdevice (default: $KILN_CUDA_PATH, "
             "$CUDA_HOME, /usr/local/cuda, ptxas on PATH); without one a CUDA "
             "model embeds PTX only"),
    cl::value_desc("DIR"));
enum class Precision { FP32, TF32, FP16, BF16 };
cl::opt<Precision> precision(
    "precision",
    cl::desc("Arithmetic of the CUDA target's matrix products (the rest, "
             "reductions and the model's inputs and outputs stay f32)"),
    cl::init(Precision::FP32),
    cl::values(clEnumValN(Precision::FP32, "fp32", "f32 everywhere (default)"),
               clEnumValN(Precision::TF32, "tf32",
                          "f32 data, TF32 tensor cores for matrix products"),
               clEnumValN(Precision::FP16, "fp16",
                          "f16 matrix products (f32 accumulation)"),
               clEnumValN(Precision::BF16, "bf16",
                          "bf16 matrix products (f32 accumulation)")));
cl::opt<int64_t> gpuRowElements(
    "gpu-row-elements",
    cl::desc("Tuning: elements of a row per thread in the CUDA target's row "
             "kernels (softmax, layer norm, reductions); 0: the default"),
    cl::init(0), cl::Hidden);
cl::opt<std::string> matmulTile(
    "matmul-tile",
    cl::desc("Tuning: the CPU matmul kernel's register tile, ROWSxVECTORS "
             "(e.g. 8x2: 8 rows of 2 vector registers); default: the "
             "target's"),
    cl::value_desc("RxV"), cl::Hidden);
cl::opt<int64_t> matmulKUnroll(
    "matmul-k-unroll",
    cl::desc("Tuning: steps of k per iteration of the CPU matmul kernel's "
             "k loop; default: the target's"),
    cl::init(0), cl::Hidden);
cl::opt<int64_t> l1Ways(
    "l1-ways",
    cl::desc("Tuning: ways of a core's L1 data cache, which decide whether "
             "the CPU matmul kernels pack A; default: the target's"),
    cl::init(0), cl::Hidden);
cl::opt<int64_t> longReduction(
    "long-reduction",
    cl::desc("Tuning: steps of k from which the CPU matmul kernels pack an "
             "operand they would read one row per step; default: the "
             "target's (128 on Zen 1-3, else 1024)"),
    cl::init(0), cl::Hidden);
cl::opt<int64_t> l2Bytes(
    "l2-bytes",
    cl::desc("Tuning: bytes of cache the CPU matmul kernels order their "
             "work items for; default: the target's (twice a core's L2; "
             "16 MiB on Zen 5)"),
    cl::init(0), cl::Hidden);
cl::opt<int64_t> splitBatchBytes(
    "split-batch-bytes",
    cl::desc("Tuning: the smallest per-image input or result of a "
             "convolution or pool that a batched model runs image by image "
             "(kiln-split-batch); 0: none; default: the target's (half of a "
             "core's L2)"),
    cl::init(-1), cl::Hidden);
cl::opt<int64_t> splitBatchPieces(
    "split-batch-pieces",
    cl::desc("Tuning: the most pieces (copies of the layers' code) "
             "kiln-split-batch cuts a batch into"),
    cl::init(16), cl::Hidden);
cl::opt<int64_t> splitBatchLanes(
    "split-batch-lanes",
    cl::desc("Run the layers kiln-split-batch runs image by image as this "
             "many lanes of images, each lane on one thread, the lanes in "
             "parallel (1: the images one after another, each kernel across "
             "the threads); default: with --mcpu=native (the default), the "
             "CPUs kiln-compile may run on, else 1; at most one lane per "
             "piece"),
    cl::init(0));
cl::opt<bool> emulateGPU(
    "emulate-gpu",
    cl::desc("Test mode: compile for the CPU through the CUDA target's "
             "loop-to-thread mapping, running each kernel's blocks and "
             "threads as loops"),
    cl::Hidden);
// --mcpu is LLVM's codegen flag: lld (linked in) registers the same flags,
// so kiln reuses them rather than defining a clashing option.
llvm::codegen::RegisterCodeGenFlags codegenFlags;

/// The target CPU: --mcpu (znver4, skylake-avx512, x86-64-v3, ...) or the
/// host's.
std::string targetCPU() {
  std::string cpu = llvm::codegen::getMCPU();
  return cpu.empty() ? "native" : cpu;
}
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
cl::opt<bool> winograd(
    "winograd",
    cl::desc("3x3 stride-1 convolutions as Winograd F(2x2, 3x3) where that "
             "pays (CPU target; default on)"),
    cl::init(true), cl::Hidden);

cl::opt<bool> verbose(
    "v", cl::desc("Print the time of each stage and the peak memory after it"));
cl::opt<bool> explainMatmuls(
    "explain-matmuls",
    cl::desc("Print a remark for each matmul kernel of the CPU target "
             "(dense convolutions included): its shape, register tile, how "
             "each operand is read, and how its work is split across "
             "threads"));

enum class ReportFormat { None, Text, JSON };
cl::opt<ReportFormat> reportFormat(
    "report",
    cl::desc("Print each kernel's ops, FLOPs, bytes, arithmetic intensity, "
             "predicted time and bound (compute/memory/overhead)"),
    cl::init(ReportFormat::None), cl::ValueOptional,
    cl::values(clEnumValN(ReportFormat::Text, "", "a table (default)"),
               clEnumValN(ReportFormat::Text, "text", "a table"),
               clEnumValN(ReportFormat::JSON, "json", "JSON")));
cl::opt<std::string>
    machineFile("machine",
                cl::desc("Measured peaks for the report's roofline (JSON from "
                         "bench/probe); default: estimated from the CPU"),
                cl::value_desc("FILE.json"));
cl::opt<int> threads("roofline-threads",
                     cl::desc("Threads the report's roofline assumes"),
                     cl::init(1));

cl::opt<bool>
    profile("profile",
            cl::desc("Compile per-kernel timers into the model (read them "
                     "with kiln-run --profile)"));

/// The report's settings, read before lld resets LLVM's options.
struct ReportRequest {
  ReportFormat format = ReportFormat::None;
  std::string cpu;
  std::string machineFile;
  int threads = 1;
  /// Set for --target=cuda: the report uses the GPU's description.
  std::string gpu;
  Precision precision = Precision::FP32;
} report;

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

/// -v as parsed: lld (linked in) resets LLVM's command-line options when it
/// runs, so the flag itself cannot be read after linking.
bool verboseOutput = false;

/// With -v, reports the peak memory after each stage (next to its time).
void reportPeakMemory(llvm::StringRef stage) {
  if (verboseOutput)
    llvm::errs() << "kiln-compile: peak memory after " << stage << ": "
                 << peakResidentMiB() << " MiB\n";
}

/// The output path: -o, or a default next to nothing (cwd) derived from the
/// model's name for binary outputs, or stdout.
std::string outputPath() {
  if (!outputFile.empty())
    return outputFile;
  llvm::StringRef stem = llvm::sys::path::stem(inputFile);
  if (emit == EmitStage::So)
    return (stem + ".so").str();
  if (emit == EmitStage::Obj)
    return (stem + ".o").str();
  return "-";
}

/// Writes `print`'s text to the output; returns the exit status.
int emitText(TimingScope &root,
             llvm::function_ref<void(llvm::raw_ostream &)> print) {
  std::string error;
  std::unique_ptr<llvm::ToolOutputFile> output =
      openOutputFile(outputPath(), &error);
  if (!output) {
    llvm::errs() << "error: " << error << "\n";
    return 1;
  }
  {
    TimingScope printTimer = root.nest("emit");
    print(output->os());
    output->os() << "\n";
  }
  output->keep();
  reportPeakMemory("emit");
  return 0;
}

/// The GPU's datasheet ceilings: DRAM bandwidth, and the matrix peak of the
/// precision the products run in (tensor cores for tf32/fp16/bf16).
llvm::Expected<kiln::Roofline> gpuRoofline() {
  std::optional<kiln::cuda::GPUDescription> gpu =
      kiln::cuda::describeGPU(report.gpu);
  if (!gpu)
    return llvm::createStringError("unknown GPU architecture '" + report.gpu +
                                   "'");
  double peak = gpu->fp32Flops;
  const char *kind = "FP32";
  if (report.precision == Precision::TF32) {
    peak = gpu->tensorTf32Flops;
    kind = "TF32 tensor";
  } else if (report.precision != Precision::FP32) {
    peak = gpu->tensorFp16Flops;
    kind = "FP16/BF16 tensor";
  }
  kiln::Roofline roofline;
  roofline.peakGflops = peak / 1e9;
  roofline.bandwidthGBs = gpu->memoryBandwidth / 1e9;
  roofline.source = (llvm::Twine("datasheet of the ") + gpu->referencePart +
                     " (" + gpu->chip + "), " + kind + " peak")
                        .str();
  return roofline;
}

/// The roofline of the report and the profile table, worked out once (the
/// check before compiling, the profile table and the report all ask).
llvm::Expected<kiln::Roofline> reportRoofline() {
  static std::optional<kiln::Roofline> computed;
  if (computed)
    return *computed;
  llvm::Expected<kiln::Roofline> roofline = [] {
    if (!report.gpu.empty())
      return gpuRoofline();
    auto machine = kiln::cpu::createTargetMachine({report.cpu});
    if (!machine)
      return llvm::Expected<kiln::Roofline>(machine.takeError());
    return kiln::cpu::describeRoofline(**machine, report.threads,
                                       report.machineFile);
  }();
  if (roofline)
    computed = *roofline;
  return roofline;
}

/// What the profiling build records about each kernel.
LogicalResult
describeKernelsForProfile(llvm::ArrayRef<kiln::KernelCost> kernels,
                          kiln::cpu::ModelSignature &signature) {
  llvm::Expected<kiln::Roofline> roofline = reportRoofline();
  if (!roofline) {
    llvm::errs() << "error: " << llvm::toString(roofline.takeError()) << "\n";
    return failure();
  }
  signature.rooflineThreads = roofline->threads;
  for (const kiln::KernelCost &kernel : kernels)
    signature.profiledKernels.push_back(
        {kernel.kind, llvm::join(kernel.ops, " "), kernel.flops, kernel.bytes,
         kernel.predictedSeconds(*roofline)});
  return success();
}

/// Prints --report to stdout, or to stderr when the output went to stdout.
int printReport(llvm::ArrayRef<kiln::KernelCost> kernels,
                const kiln::ModelTotals &totals) {
  if (report.format == ReportFormat::None)
    return 0;
  llvm::Expected<kiln::Roofline> roofline = reportRoofline();
  if (!roofline) {
    llvm::errs() << "error: " << llvm::toString(roofline.takeError()) << "\n";
    return 1;
  }
  llvm::raw_ostream &os = outputPath() == "-" ? llvm::errs() : llvm::outs();
  if (report.format == ReportFormat::JSON)
    kiln::printReportJSON(os, kernels, *roofline, totals);
  else
    kiln::printReportText(os, kernels, *roofline, totals);
  return 0;
}

/// linalg on tensors -> device kernels (PTX, cubin) in `signature` and host
/// code in the LLVM dialect that launches them.
template <typename RunPipeline>
int lowerForCuda(ModuleOp module, kiln::cpu::ModelSignature &signature,
                 kiln::ModelTotals &totals, TimingScope &root,
                 RunPipeline &runPipeline) {
  if (!kiln::cuda::describeGPU(gpuChip)) {
    llvm::errs() << "error: unknown GPU architecture '" << gpuChip
                 << "' (--gpu): kiln knows";
    for (const kiln::cuda::GPUDescription &gpu : kiln::cuda::knownGPUs())
      llvm::errs() << " " << gpu.chip;
    llvm::errs() << "\n";
    return 1;
  }
  kiln::cuda::Options options{gpuChip, cudaPath};
  options.tf32 = precision == Precision::TF32;
  options.rowElementsPerThread = gpuRowElements;
  std::string toolkit = kiln::cuda::findToolkit(options);
  if (failed(runPipeline("device code", [&](OpPassManager &pm) {
        kiln::cuda::buildDevicePipeline(pm, options, toolkit);
      })))
    return 1;
  totals.device = kiln::takeDeviceWork(module);
  {
    TimingScope timer = root.nest("ptxas");
    // --emit=ptx stops before the cubin: ptxas would only be run twice.
    std::string assembler = emit == EmitStage::PTX ? "" : toolkit;
    if (failed(kiln::cuda::buildImage(module, options, assembler, signature)))
      return 1;
  }
  if (emit == EmitStage::PTX)
    return 0;
  if (failed(runPipeline("host code", kiln::cuda::buildHostPipeline)) ||
      failed(kiln::cuda::recordDeviceLayout(module, signature)))
    return 1;
  return 0;
}

/// The calls kiln-inline-kernels brackets kernels with: timers for
/// --profile; for --report, markers that tell which kernels the CPU
/// target's lowering merged (erased after it, so the code is the same) when
/// the compilation gets that far.
kiln::cpu::KernelHooks kernelHooks() {
  if (profile)
    return kiln::cpu::KernelHooks::Timers;
  bool lowersForCPU = target == Target::CPU && !emulateGPU &&
                      emit != EmitStage::Kiln && emit != EmitStage::Kernels &&
                      emit != EmitStage::Linalg;
  return report.format != ReportFormat::None && lowersForCPU
             ? kiln::cpu::KernelHooks::Markers
             : kiln::cpu::KernelHooks::None;
}

/// kiln dialect -> linalg -> LLVM -> assembly / object / shared library.
int compileToMachineCode(MLIRContext &context, ModuleOp module,
                         TimingScope &root) {
  FailureOr<kiln::cpu::ModelSignature> signature =
      kiln::cpu::prepareGraphFunction(module);
  if (failed(signature))
    return 1;
  // A bad --machine file is reported before the compilation, not after it.
  if (profile || report.format != ReportFormat::None) {
    llvm::Expected<kiln::Roofline> roofline = reportRoofline();
    if (!roofline) {
      llvm::errs() << "error: " << llvm::toString(roofline.takeError()) << "\n";
      return 1;
    }
  }
  auto runPipeline = [&](llvm::StringRef name,
                         llvm::function_ref<void(OpPassManager &)> build) {
    PassManager pm(&context, ModuleOp::getOperationName(),
                   OpPassManager::Nesting::Implicit);
    build(pm);
    TimingScope timer = root.nest(name);
    pm.enableTiming(timer);
    return pm.run(module);
  };
  auto machine = kiln::cpu::createTargetMachine({targetCPU()});
  if (!machine) {
    llvm::errs() << "error: " << llvm::toString(machine.takeError()) << "\n";
    return 1;
  }
  if ((splitBatchBytes.getNumOccurrences() && splitBatchBytes < 0) ||
      splitBatchPieces < 1) {
    llvm::errs() << "error: --split-batch-bytes=" << splitBatchBytes
                 << " --split-batch-pieces=" << splitBatchPieces
                 << ": expected bytes >= 0 (0: no split) and pieces >= 1 "
                    "(1: the batch whole)\n";
    return 1;
  }
  if (splitBatchLanes.getNumOccurrences() && splitBatchLanes < 1) {
    llvm::errs() << "error: --split-batch-lanes=" << splitBatchLanes
                 << ": expected at least 1 lane\n";
    return 1;
  }
  // The CPU target's kernels run a batch's large first layers image by
  // image, and a grouped convolution group by group; the CUDA target's have
  // the whole batch to spread over the GPU (and grouped convolutions were
  // not measured there).
  bool cpuKernels = target == Target::CPU && !emulateGPU;
  int64_t splitBytes = 0;
  if (cpuKernels)
    splitBytes = splitBatchBytes >= 0
                     ? int64_t(splitBatchBytes)
                     : kiln::cpu::splitBatchMinImageBytes(**machine);
  // Built for this machine (--mcpu=native), as many lanes as the threads a
  // context on it would run; for another CPU, whose core count is unknown,
  // each image's kernels across the threads as before.
  int64_t lanes = 1;
  if (splitBatchLanes.getNumOccurrences())
    lanes = splitBatchLanes;
  else if (targetCPU() == "native")
    lanes = llvm::hardware_concurrency().compute_thread_count();
  if (failed(runPipeline("form kernels", [&](OpPassManager &pm) {
        kiln::cpu::buildKernelPipeline(pm, splitBytes, splitBatchPieces,
                                       /*splitGroupedConvs=*/cpuKernels, lanes);
      })))
    return 1;
  std::vector<kiln::KernelCost> kernels;
  kiln::ModelTotals totals;
  if (auto graph =
          module.lookupSymbol<func::FuncOp>(kiln::cpu::kGraphFunctionName)) {
    kernels = kiln::analyzeKernels(graph, target == Target::CPU &&
                                              !emulateGPU && winograd);
    totals.unfusedBytes = kiln::unfusedBytes(graph);
  }
  if (emit == EmitStage::Kernels) {
    int status =
        emitText(root, [&](llvm::raw_ostream &os) { module.print(os); });
    return status ? status : printReport(kernels, totals);
  }
  if (profile && target == Target::CUDA) {
    llvm::errs() << "error: --profile is not supported for --target=cuda\n";
    return 1;
  }
  // The CUDA target (and its CPU emulation) runs matmuls through cuBLAS or
  // as mapped loops: there is no kiln-lower-matmul plan to explain.
  if (explainMatmuls && (target == Target::CUDA || emulateGPU)) {
    llvm::errs() << "error: --explain-matmuls describes the CPU target's "
                    "matmul kernels; it is not supported with "
                 << (emulateGPU ? "--emulate-gpu" : "--target=cuda") << "\n";
    return 1;
  }
  // The target's choices (its register tile decides how convolutions are
  // lowered), read once for both pipelines.
  const kiln::cpu::CodegenOptions targetOptions =
      kiln::cpu::codegenOptionsFor(**machine);
  kiln::cpu::CodegenOptions codegen = targetOptions;
  codegen.kernelHooks = kernelHooks();
  codegen.tileRows = target == Target::CPU && !emulateGPU;
  codegen.foldTransposes = !codegen.tileRows;
  codegen.implicitGemmConvs = codegen.tileRows;
  codegen.winogradConvs = codegen.tileRows && winograd;
  if (failed(runPipeline("lower to linalg", [&](OpPassManager &pm) {
        kiln::cpu::buildLinalgPipeline(pm, codegen);
      })))
    return 1;
  if (emit == EmitStage::Linalg) {
    int status =
        emitText(root, [&](llvm::raw_ostream &os) { module.print(os); });
    return status ? status : printReport(kernels, totals);
  }
  if (target == Target::CUDA) {
    if (int status =
            lowerForCuda(module, *signature, totals, root, runPipeline))
      return status;
    if (emit == EmitStage::PTX)
      return emitText(
          root, [&](llvm::raw_ostream &os) { os << signature->cuda->ptx; });
  } else if (emit == EmitStage::PTX) {
    llvm::errs() << "error: --emit=ptx needs --target=cuda\n";
    return 1;
  } else {
    kiln::cpu::CodegenOptions cpuOptions = targetOptions;
    cpuOptions.emulateGPU = emulateGPU;
    cpuOptions.explainMatmuls = explainMatmuls;
    cpuOptions.kernelHooks = codegen.kernelHooks;
    if (!matmulTile.empty()) {
      // The given tile for every matmul, whatever its shape.
      cpuOptions.matmulShapeTiles = false;
      auto [rows, vectors] = llvm::StringRef(matmulTile).split('x');
      if (rows.getAsInteger(10, cpuOptions.matmulRows) ||
          vectors.getAsInteger(10, cpuOptions.matmulVectors) ||
          cpuOptions.matmulRows < 1 || cpuOptions.matmulVectors < 1) {
        llvm::errs() << "error: --matmul-tile=" << matmulTile
                     << ": expected ROWSxVECTORS, both positive (e.g. 8x2)\n";
        return 1;
      }
    }
    // The tuning overrides, when given, must be positive.
    auto takePositiveOption = [](const cl::opt<int64_t> &option,
                                 llvm::StringRef unit, int64_t &into) {
      if (!option.getNumOccurrences())
        return true;
      if (option < 1) {
        llvm::errs() << "error: --" << option.ArgStr << "=" << option
                     << ": expected a positive number of " << unit << "\n";
        return false;
      }
      into = option;
      return true;
    };
    if (!takePositiveOption(matmulKUnroll, "steps", cpuOptions.matmulKUnroll) ||
        !takePositiveOption(l1Ways, "ways", cpuOptions.l1Ways) ||
        !takePositiveOption(longReduction, "steps",
                            cpuOptions.matmulLongReduction) ||
        !takePositiveOption(l2Bytes, "bytes", cpuOptions.l2Bytes))
      return 1;
    if (failed(runPipeline("lower to LLVM dialect", [&](OpPassManager &pm) {
          kiln::cpu::buildLLVMDialectPipeline(pm, cpuOptions);
        })))
      return 1;
    if (std::optional<std::vector<int32_t>> separate =
            kiln::takeSeparateKernels(module))
      kiln::mergeLoweredKernels(kernels, *separate);
    if (profile && failed(describeKernelsForProfile(kernels, *signature)))
      return 1;
  }
  llvm::LLVMContext llvmContext;
  FailureOr<std::unique_ptr<llvm::Module>> llvmModule;
  {
    TimingScope timer = root.nest("LLVM IR + -O3");
    llvmModule = kiln::cpu::translateAndOptimize(module, *signature, **machine,
                                                 llvmContext);
  }
  if (failed(llvmModule))
    return 1;
  reportPeakMemory("LLVM");
  if (emit == EmitStage::LLVM) {
    int status = emitText(root, [&](llvm::raw_ostream &os) {
      (*llvmModule)->print(os, nullptr);
    });
    totals.arenaBytes = signature->arenaBytes;
    totals.intermediateBytes = signature->intermediateBytes;
    totals.stackBytes = signature->stackBytes;
    return status ? status : printReport(kernels, totals);
  }

  TimingScope codegenTimer = root.nest("machine code");
  std::string path = outputPath();
  llvm::SmallString<128> objectPath(path);
  int objectFd = -1;
  if (emit == EmitStage::So && llvm::sys::fs::createTemporaryFile(
                                   "kiln-model", "o", objectFd, objectPath)) {
    llvm::errs() << "error: cannot create a temporary object file\n";
    return 1;
  }
  if (objectFd >= 0)
    ::close(objectFd);
  {
    std::string error;
    auto output = openOutputFile(objectPath, &error);
    if (!output) {
      llvm::errs() << "error: " << error << "\n";
      return 1;
    }
    auto type = emit == EmitStage::Asm ? llvm::CodeGenFileType::AssemblyFile
                                       : llvm::CodeGenFileType::ObjectFile;
    if (llvm::Error e = kiln::cpu::emitMachineCode(**llvmModule, **machine,
                                                   type, output->os())) {
      llvm::errs() << "error: " << llvm::toString(std::move(e)) << "\n";
      return 1;
    }
    output->keep();
  }
  if (emit == EmitStage::So) {
    llvm::Error linked = kiln::cpu::linkSharedLibrary(objectPath, path);
    llvm::sys::fs::remove(objectPath);
    if (linked) {
      llvm::errs() << "error: " << llvm::toString(std::move(linked)) << "\n";
      return 1;
    }
  }
  reportPeakMemory("machine code");
  totals.arenaBytes = signature->arenaBytes;
  totals.intermediateBytes = signature->intermediateBytes;
  totals.stackBytes = signature->stackBytes;
  return printReport(kernels, totals);
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
  registerAllPasses();
  kiln::registerKilnConversionPasses();
  registerAsmPrinterCLOptions();
  registerMLIRContextCLOptions();
  registerPassManagerCLOptions();
  registerDefaultTimingManagerCLOptions();
  cl::ParseCommandLineOptions(argc, argv, "kiln ONNX compiler\n");

  verboseOutput = verbose;
  report = {reportFormat,
            targetCPU(),
            machineFile,
            threads,
            target == Target::CUDA ? std::string(gpuChip) : std::string(),
            precision};
  kiln::frontend::ImportOptions options;
  if (failed(parseOptions(options)))
    return 1;

  DialectRegistry registry;
  registerAllDialects(registry);
  registerAllExtensions(registry);
  registerAllToLLVMIRTranslations(registry);
  MLIRContext context(registry);
  kiln::frontend::registerImportDialects(context);
  llvm::SourceMgr sourceMgr;
  SourceMgrDiagnosticHandler diagnostics(sourceMgr, &context);

  DefaultTimingManager timing;
  applyDefaultTimingManagerCLOptions(timing);
  if (verboseOutput)
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

  PassManager pm(&context, ModuleOp::getOperationName(),
                 OpPassManager::Nesting::Implicit);
  if (failed(applyPassManagerCLOptions(pm)))
    return 1;
  kiln::buildGraphPipeline(pm);
  if (precision != Precision::FP32 && target != Target::CUDA && !emulateGPU) {
    llvm::errs() << "error: --precision needs --target=cuda\n";
    return 1;
  }
  if (precision == Precision::FP16 || precision == Precision::BF16) {
    kiln::KilnAutocastOptions autocast;
    autocast.type = precision == Precision::FP16 ? "f16" : "bf16";
    pm.addNestedPass<func::FuncOp>(kiln::createKilnAutocast(autocast));
    pm.addPass(createCanonicalizerPass());
  }
  {
    TimingScope passTimer = root.nest("graph passes");
    pm.enableTiming(passTimer);
    if (failed(pm.run(*module)) || failed(kiln::verifyStaticShapes(*module)))
      return 1;
  }
  reportPeakMemory("graph passes");
  if (emit == EmitStage::Kiln)
    return emitText(root, [&](llvm::raw_ostream &os) { module->print(os); });
  return compileToMachineCode(context, *module, root);
}
