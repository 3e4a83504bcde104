//===- Backend.h - kiln's x86-64 CPU backend --------------------*- C++ -*-===//
//
// From the shape-inferred kiln dialect to a shared library: lower to linalg,
// bufferize with outputs as out-parameters, lower to the LLVM dialect,
// translate to LLVM IR, add the model ABI (kiln/runtime.h), optimize for the
// target CPU, emit an object and link model.so with lld.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_TARGET_CPU_BACKEND_H
#define KILN_TARGET_CPU_BACKEND_H

#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/PassManager.h"

#include "llvm/ADT/SmallVector.h"
#include "llvm/IR/LLVMContext.h"
#include "llvm/IR/Module.h"
#include "llvm/Target/TargetMachine.h"

#include <memory>
#include <optional>
#include <string>

namespace kiln::cpu {

/// One input or output of the compiled model.
struct TensorSignature {
  std::string name;
  int32_t dtype; // kiln_dtype
  llvm::SmallVector<int64_t> shape;
};

/// A kernel as the profiling build describes it (kiln_kernel_info).
struct ProfiledKernel {
  std::string kind, ops;
  double flops = 0, bytes = 0, predictedSeconds = 0;
};

/// A CUDA model's device code (kiln/Target/CUDA), embedded in model.so by the
/// host ABI builder as a kiln_cuda_image.
struct DeviceImage {
  std::string arch, ptx, cubin;
  /// Entry names, by kernel index (kiln_launch_I launches kernel I).
  llvm::SmallVector<std::string> kernels;
  /// Where each constant global goes in the device weights buffer.
  struct Constant {
    std::string global;
    uint64_t offset = 0, bytes = 0;
  };
  llvm::SmallVector<Constant> constants;
  uint64_t weightsBytes = 0;
  /// The runtime GEMMs (kiln_cuda_gemm), by index: kiln_gemm_I runs GEMM I.
  struct Gemm {
    int64_t m, n, k, batch, lda, ldb, ldc, strideA, strideB, strideC;
    int32_t transA, transB, inType, outType, accumulate, tf32, epilogue;
  };
  llvm::SmallVector<Gemm> gemms;
};

struct ModelSignature {
  llvm::SmallVector<TensorSignature> inputs, outputs;
  /// The inputs and outputs the graph function still takes (by signature
  /// index): tensors with no elements are dropped, since there is nothing
  /// to read or write (and LLVM's bare-pointer convention rejects them).
  llvm::SmallVector<unsigned> graphInputs, graphOutputs;
  /// Scratch memory for intermediates (kiln-plan-memory), and what one
  /// allocation per intermediate would take.
  uint64_t arenaBytes = 0, intermediateBytes = 0;
  /// Small intermediates kept in stack slots instead of the arena.
  uint64_t stackBytes = 0;
  /// Set for a profiling build: one entry per kernel, in the order of the
  /// kiln_profile_begin/end indices.
  llvm::SmallVector<ProfiledKernel> profiledKernels;
  /// Threads the profiled kernels' predicted times assume
  /// (--roofline-threads); 0 if none.
  int32_t rooflineThreads = 0;
  /// Set for a CUDA model: the graph function takes device buffers, the
  /// weights buffer and a kiln_cuda_launcher.
  std::optional<DeviceImage> cuda;
  /// {"inputs": [...], "outputs": [...], "arena_bytes": N} as in
  /// kiln/runtime.h.
  std::string toJSON() const;
};

/// The name the model's graph function gets before lowering (`main` would
/// clash with a C program's main).
constexpr const char *kGraphFunctionName = "kiln_graph";

/// Reads the signature of the module's single public function (kiln level:
/// element types still carry signedness) and renames it to
/// kGraphFunctionName.
mlir::FailureOr<ModelSignature> prepareGraphFunction(mlir::ModuleOp module);

/// What kiln-inline-kernels{profile} brackets each kernel with.
enum class KernelHooks {
  None,
  /// Calls that kiln-record-fused-kernels reads (which kernels lowering
  /// merged, for --report) and then erases.
  Markers,
  /// The same calls, kept: per-kernel timers (--profile).
  Timers,
};

/// The choices the pipelines below make for a target.
struct CodegenOptions {
  /// Calls bracketing every kernel (buildLinalgPipeline), recorded after
  /// the passes that merge kernels (buildLLVMDialectPipeline).
  KernelHooks kernelHooks = KernelHooks::None;
  /// f32 lanes of a vector register and the matmul register tile
  /// (kiln-lower-matmul): AVX-512 by default.
  int64_t vectorLanes = 16, matmulRows = 8, matmulVectors = 2;
  /// Whether a matmul's shape and operands may change the target's tile
  /// (kiln-lower-matmul{shape-tiles}); off when the tile is given.
  bool matmulShapeTiles = true;
  /// Steps of k from which a matmul packs an operand it would read one row
  /// per step (longReductionSteps, kiln-lower-matmul{long-reduction}).
  int64_t matmulLongReduction = 1024;
  /// Ways of a core's L1 data cache, which decides whether A is packed
  /// (kiln-lower-matmul{l1-ways}).
  int64_t l1Ways = 8;
  /// Bytes of cache the matmuls' work items are ordered for: twice a
  /// core's L2, or more where L3 serves re-reads fast (matmulCacheBytes,
  /// kiln-lower-matmul{l2-bytes}).
  int64_t l2Bytes = 2 * 1024 * 1024;
  /// The smallest input the window ops' plane layouts prefetch; 0: none
  /// (windowPrefetchMinBytes, kiln-lower-window-ops{prefetch-min-bytes}).
  int64_t windowPrefetchMinBytes = 2 * 1024 * 1024;
  /// Steps of k per iteration of a matmul tile's k loop
  /// (kiln-lower-matmul{k-unroll}).
  int64_t matmulKUnroll = 1;
  /// A remark per lowered matmul describing its kernel
  /// (kiln-lower-matmul{explain}, kiln-compile --explain-matmuls).
  bool explainMatmuls = false;
  /// Whether the CPU has FMA; without it, fused multiply-adds are expanded
  /// into a multiply and an add rather than becoming fmaf calls.
  bool hasFMA = true;
  /// Whether FMAs on whole vectors run at half rate (Zen 4's AVX-512).
  bool halfRateVectors = false;
  /// Whether vector ldexp is one instruction (AVX-512 vscalefps): exp and
  /// exp2 scale by 2^n with it (kiln-approximate-math{ldexp}).
  bool hasNativeLdexp = true;
  /// Whether the CPU converts f32 to bf16 in one instruction (AVX512-BF16,
  /// AVX-NE-CONVERT); without it bf16 arithmetic runs in f32 and the
  /// conversions as integer ops (kiln-emulate-bf16).
  bool hasNativeBF16 = true;
  /// Tile reduction kernels by rows into thread-pool loops (kiln-tile-rows);
  /// off for device targets, which map loops to threads themselves.
  bool tileRows = true;
  /// Dense convolutions as implicit GEMMs (convert-kiln-to-linalg's
  /// implicit-gemm-convs): for the CPU, whose kiln-lower-matmul reads them.
  bool implicitGemmConvs = false;
  /// 3x3 stride-1 convolutions as Winograd F(2x2, 3x3) where that pays
  /// (convert-kiln-to-linalg's winograd-convs).
  bool winogradConvs = false;
  /// Read transposed operands through permuted maps (kiln-fold-transposes):
  /// for device targets, whose GEMMs take any strides.
  bool foldTransposes = false;
  /// Test mode: map loops to GPU threads as the CUDA target does
  /// (kiln-map-loops-to-gpu), then run the kernels as loops on this CPU
  /// (kiln-emulate-gpu-launches), with the CUDA target's memory plan.
  bool emulateGPU = false;
};

/// The code generation choices for `machine`'s CPU (AVX-512 or AVX2 tiles).
CodegenOptions codegenOptionsFor(const llvm::TargetMachine &machine);

/// kiln-fuse-kernels: groups the graph into kernel regions; before it, with
/// `splitBatchBytes` > 0, kiln-split-batch{min-image-bytes=splitBatchBytes
/// max-pieces=splitBatchPieces lanes=splitBatchLanes} runs a batch's large
/// first layers image by image, and with `splitGroupedConvs` (the CPU
/// target's kernels), kiln-split-grouped-convs makes a grouped convolution
/// one per group.
void buildKernelPipeline(mlir::OpPassManager &pm, int64_t splitBatchBytes = 0,
                         int64_t splitBatchPieces = 16,
                         bool splitGroupedConvs = false,
                         int64_t splitBatchLanes = 1);
/// Kernel regions -> linalg on tensors, fused into one loop nest per kernel,
/// the regions spliced back into the function.
void buildLinalgPipeline(mlir::OpPassManager &pm,
                         const CodegenOptions &options = {});
/// linalg on tensors -> LLVM dialect (outputs become out-parameters,
/// memrefs become bare pointers).
void buildLLVMDialectPipeline(mlir::OpPassManager &pm,
                              const CodegenOptions &options = {});

struct TargetOptions {
  /// A CPU name for LLVM (`znver4`, `x86-64-v3`, ...) or `native`.
  std::string cpu = "native";
};

/// An x86-64 TargetMachine for position-independent code, or an error.
llvm::Expected<std::unique_ptr<llvm::TargetMachine>>
createTargetMachine(const TargetOptions &options);

/// Translates the LLVM-dialect module, adds the model ABI entry points and
/// runs LLVM's -O3 pipeline for `machine`.
mlir::FailureOr<std::unique_ptr<llvm::Module>>
translateAndOptimize(mlir::ModuleOp module, ModelSignature &signature,
                     llvm::TargetMachine &machine, llvm::LLVMContext &context);

/// Assembly or an object file of `module`.
llvm::Error emitMachineCode(llvm::Module &module, llvm::TargetMachine &machine,
                            llvm::CodeGenFileType type,
                            llvm::raw_pwrite_stream &out);

/// Links an object into a shared library with lld (no C compiler needed).
llvm::Error linkSharedLibrary(llvm::StringRef objectPath,
                              llvm::StringRef outputPath);

} // namespace kiln::cpu

#endif // KILN_TARGET_CPU_BACKEND_H
