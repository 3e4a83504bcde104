//===- Backend.h - kiln's CUDA backend --------------------------*- C++ -*-===//
//
// From linalg on tensors to a model.so whose kernels run on an NVIDIA GPU:
// bufferize and plan memory as for the CPU, map each kernel's loop nest to
// GPU threads, outline the kernels into one gpu.module, lower it to NVVM and
// PTX (LLVM's NVPTX backend), assemble a cubin with ptxas when the CUDA
// toolkit is present, and lower the host side to calls into the runtime's
// launcher. The host code goes through the CPU backend's ABI builder, so a
// CUDA model has the same C API as a CPU one.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_TARGET_CUDA_BACKEND_H
#define KILN_TARGET_CUDA_BACKEND_H

#include "kiln/Target/CPU/Backend.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/PassManager.h"

#include <string>

namespace kiln::cuda {

struct Options {
  /// The GPU architecture, sm_XX (see TargetDescription.h).
  std::string chip = "sm_90";
  /// The CUDA toolkit (ptxas, libdevice); empty: $KILN_CUDA_PATH,
  /// $CUDA_HOME, /usr/local/cuda, or the directory above ptxas on PATH.
  std::string toolkitPath;
  /// Matrix products of f32 data on TF32 tensor cores (--precision=tf32).
  bool tf32 = false;
  /// Elements of a row per thread in row kernels (softmax, layer norm,
  /// reductions); 0: kiln-map-reductions-to-gpu's default.
  int64_t rowElementsPerThread = 0;
};

/// The CUDA toolkit directory `options` names or the first one found, or ""
/// when there is none (the model then embeds PTX only).
std::string findToolkit(const Options &options);

/// linalg on tensors -> bufferized, memory-planned device kernels in a
/// gpu.binary holding their PTX.
void buildDevicePipeline(mlir::OpPassManager &pm, const Options &options,
                         llvm::StringRef toolkit);

/// Moves the PTX out of the module's gpu.binary into `signature.cuda` and,
/// with a toolkit, assembles it into a cubin with ptxas (errors name the
/// ptxas message).
mlir::LogicalResult buildImage(mlir::ModuleOp module, const Options &options,
                               llvm::StringRef toolkit,
                               cpu::ModelSignature &signature);

/// The host side: launches through the runtime, lowered to the LLVM dialect.
void buildHostPipeline(mlir::OpPassManager &pm);

/// Reads the kernel table and the weights layout the host pipeline recorded
/// into `signature.cuda` (and removes them from the IR).
mlir::LogicalResult recordDeviceLayout(mlir::ModuleOp module,
                                       cpu::ModelSignature &signature);

/// Runs `ptxas -arch=chip` on `ptx`; returns the cubin, and ptxas' report in
/// `log` (with `verbose`, its -v resource usage).
llvm::Expected<std::string> assemblePTX(llvm::StringRef ptx,
                                        llvm::StringRef chip,
                                        llvm::StringRef toolkit, bool verbose,
                                        std::string *log);

} // namespace kiln::cuda

#endif // KILN_TARGET_CUDA_BACKEND_H
