//===- Backend.cpp - kiln's CUDA backend ----------------------------------===//

#include "kiln/Target/CUDA/Backend.h"
#include "kiln/Target/CUDA/TargetDescription.h"
#include "kiln/Transforms/Passes.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Pass/PassRegistry.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Program.h"

#include <cstdlib>

using namespace mlir;

namespace kiln::cuda {

namespace {

bool hasPtxas(llvm::StringRef toolkit) {
  llvm::SmallString<128> path(toolkit);
  llvm::sys::path::append(path, "bin", "ptxas");
  return llvm::sys::fs::can_execute(path);
}

void parseOrDie(llvm::StringRef pipeline, OpPassManager &pm) {
  static bool registered = [] {
    registerKilnCodegenPasses();
    return true;
  }();
  (void)registered;
  if (failed(parsePassPipeline(pipeline, pm, llvm::errs())))
    llvm::report_fatal_error("kiln: invalid built-in CUDA pass pipeline");
}

} // namespace

std::string findToolkit(const Options &options) {
  if (!options.toolkitPath.empty())
    return options.toolkitPath;
  for (const char *variable : {"KILN_CUDA_PATH", "CUDA_HOME", "CUDA_PATH"})
    if (const char *value = std::getenv(variable); value && hasPtxas(value))
      return value;
  if (hasPtxas("/usr/local/cuda"))
    return "/usr/local/cuda";
  if (llvm::ErrorOr<std::string> ptxas = llvm::sys::findProgramByName("ptxas"))
    return llvm::sys::path::parent_path(llvm::sys::path::parent_path(*ptxas))
        .str();
  return "";
}

void buildDevicePipeline(OpPassManager &pm, const Options &options,
                         llvm::StringRef toolkit) {
  int64_t blockSize = 256;
  if (std::optional<GPUDescription> gpu = describeGPU(options.chip))
    blockSize = std::min<int64_t>(blockSize, gpu->maxThreadsPerBlock);
  // The host stack is no place for device buffers: every intermediate goes
  // into the (device) arena, 256-byte aligned like cuMemAlloc's blocks.
  std::string toolkitOption =
      toolkit.empty() ? "" : (" toolkit=" + toolkit).str();
  std::string rowElementsOption =
      options.rowElementsPerThread > 0
          ? " elements-per-thread=" +
                std::to_string(options.rowElementsPerThread)
          : "";
  std::string pipeline = llvm::formatv(
      "one-shot-bufferize{{bufferize-function-boundaries "
      "function-boundary-type-conversion=identity-layout-map},"
      "buffer-results-to-out-params{{hoist-static-allocs "
      "modify-public-functions},"
      "func.func(kiln-elide-output-copies),canonicalize,cse,"
      "func.func(buffer-deallocation-pipeline),"
      "kiln-offload-gemms{{tf32={3}},"
      // Row kernels before the memory plan: the buffers a block per row
      // reads and writes must not share bytes, which the plan then sees.
      "kiln-map-reductions-to-gpu{{block-size={0}{4}},"
      "kiln-plan-memory{{alignment=256 max-stack-buffer-bytes=0},"
      "func.func(convert-memref-copy-to-linalg),"
      "func.func(convert-linalg-to-parallel-loops),"
      "canonicalize,"
      "kiln-externalize-constants,"
      // Integer powers become helper functions, which outlining copies
      // into the kernel module with the kernels that call them.
      "convert-math-to-funcs,"
      "kiln-map-loops-to-gpu{{block-size={0}},"
      "kiln-record-device-work,"
      "gpu-kernel-outlining,"
      "kiln-mark-kernel-buffers,"
      "kiln-approximate-math,"
      "nvvm-attach-target{{chip={1} O=3},"
      "gpu.module(expand-strided-metadata,lower-affine,convert-scf-to-cf,"
      "convert-gpu-to-nvvm{{use-bare-ptr-memref-call-conv},canonicalize,cse),"
      "reconcile-unrealized-casts,"
      "gpu-module-to-binary{{format=isa{2}}",
      blockSize, options.chip, toolkitOption, options.tf32 ? "true" : "false",
      rowElementsOption);
  parseOrDie(pipeline, pm);
}

llvm::Expected<std::string> assemblePTX(llvm::StringRef ptx,
                                        llvm::StringRef chip,
                                        llvm::StringRef toolkit, bool verbose,
                                        std::string *log) {
  llvm::SmallString<128> ptxas(toolkit);
  llvm::sys::path::append(ptxas, "bin", "ptxas");
  llvm::SmallString<128> ptxPath, cubinPath, logPath;
  int fd;
  if (std::error_code ec = llvm::sys::fs::createTemporaryFile(
          "kiln-kernels", "ptx", fd, ptxPath))
    return llvm::createStringError("cannot create a temporary file: " +
                                   ec.message());
  {
    llvm::raw_fd_ostream out(fd, /*shouldClose=*/true);
    out << ptx;
  }
  llvm::sys::fs::createTemporaryFile("kiln-kernels", "cubin", cubinPath);
  llvm::sys::fs::createTemporaryFile("kiln-ptxas", "log", logPath);
  std::string arch = ("-arch=" + chip).str();
  SmallVector<llvm::StringRef> args = {ptxas,   arch, "-O3",
                                       ptxPath, "-o", cubinPath};
  if (verbose)
    args.push_back("-v");
  std::optional<llvm::StringRef> redirects[] = {std::nullopt, logPath, logPath};
  std::string error;
  int status = llvm::sys::ExecuteAndWait(ptxas, args, std::nullopt, redirects,
                                         0, 0, &error);
  auto readFile = [](llvm::StringRef path) {
    auto buffer = llvm::MemoryBuffer::getFile(path, /*IsText=*/false,
                                              /*RequiresNullTerminator=*/false);
    return buffer ? (*buffer)->getBuffer().str() : std::string();
  };
  std::string messages = readFile(logPath);
  std::string cubin = readFile(cubinPath);
  for (llvm::StringRef path : {ptxPath, cubinPath, logPath})
    llvm::sys::fs::remove(path);
  if (log)
    *log = messages;
  if (status != 0 || cubin.empty())
    return llvm::createStringError(
        llvm::formatv("ptxas ({0}) failed for {1}: {2}{3}", ptxas, chip,
                      error.empty() ? "" : error + "\n", messages)
            .str());
  return cubin;
}

LogicalResult buildImage(ModuleOp module, const Options &options,
                         llvm::StringRef toolkit,
                         cpu::ModelSignature &signature) {
  cpu::DeviceImage image;
  image.arch = options.chip;
  auto binaries = llvm::to_vector(module.getOps<gpu::BinaryOp>());
  if (binaries.size() > 1)
    return module.emitError("the CUDA pipeline produced ")
           << binaries.size() << " kernel modules; kiln embeds one";
  for (gpu::BinaryOp binary : binaries) {
    for (Attribute attr : binary.getObjects()) {
      auto object = cast<gpu::ObjectAttr>(attr);
      if (object.getFormat() == gpu::CompilationTarget::Assembly)
        image.ptx = object.getObject().str();
    }
  }
  // A model that only moves no data (all its outputs empty) has no kernels.
  if (!image.ptx.empty() && !toolkit.empty()) {
    llvm::Expected<std::string> cubin =
        assemblePTX(image.ptx, options.chip, toolkit, false, nullptr);
    if (!cubin)
      return module.emitError(llvm::toString(cubin.takeError()));
    image.cubin = std::move(*cubin);
  }
  signature.cuda = std::move(image);
  return success();
}

void buildHostPipeline(OpPassManager &pm) {
  parseOrDie("kiln-lower-gpu-launches,canonicalize,cse,"
             "expand-strided-metadata,lower-affine,convert-scf-to-cf,"
             "convert-arith-to-llvm,finalize-memref-to-llvm,"
             "convert-func-to-llvm{use-bare-ptr-memref-call-conv},"
             "convert-cf-to-llvm,reconcile-unrealized-casts",
             pm);
}

LogicalResult recordDeviceLayout(ModuleOp module,
                                 cpu::ModelSignature &signature) {
  if (!signature.cuda)
    return module.emitError("no device image to record the layout in");
  cpu::DeviceImage &image = *signature.cuda;
  if (auto kernels = module->getAttrOfType<ArrayAttr>("kiln.gpu_kernels"))
    for (Attribute name : kernels)
      image.kernels.push_back(cast<StringAttr>(name).str());
  module->removeAttr("kiln.gpu_kernels");
  if (auto gemms = module->getAttrOfType<ArrayAttr>("kiln.gemms")) {
    for (Attribute entry : gemms) {
      auto fields = cast<DictionaryAttr>(entry);
      auto get = [&](StringRef name) {
        return cast<IntegerAttr>(fields.get(name)).getInt();
      };
      image.gemms.push_back(
          {get("m"), get("n"), get("k"), get("batch"), get("lda"), get("ldb"),
           get("ldc"), get("stride_a"), get("stride_b"), get("stride_c"),
           int32_t(get("trans_a")), int32_t(get("trans_b")),
           int32_t(get("in_dtype")), int32_t(get("out_dtype")),
           int32_t(get("accumulate")), int32_t(get("tf32")),
           int32_t(get("epilogue"))});
    }
  }
  module->removeAttr("kiln.gemms");
  Operation *graph =
      SymbolTable::lookupSymbolIn(module, cpu::kGraphFunctionName);
  if (!graph)
    return module.emitError("the model function was not lowered");
  if (auto bytes = graph->getAttrOfType<IntegerAttr>("kiln.weights_bytes"))
    image.weightsBytes = bytes.getInt();
  if (auto constants = graph->getAttrOfType<ArrayAttr>("kiln.constants")) {
    for (Attribute entry : constants) {
      auto fields = cast<ArrayAttr>(entry);
      image.constants.push_back(
          {cast<FlatSymbolRefAttr>(fields[0]).getValue().str(),
           uint64_t(cast<IntegerAttr>(fields[1]).getInt()),
           uint64_t(cast<IntegerAttr>(fields[2]).getInt())});
    }
  }
  graph->removeAttr("kiln.weights_bytes");
  graph->removeAttr("kiln.constants");
  return success();
}

} // namespace kiln::cuda
