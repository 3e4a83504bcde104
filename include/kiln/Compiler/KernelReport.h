//===- KernelReport.h - per-kernel cost and roofline ------------*- C++ -*-===//
//
// For every kernel region (kiln.kernel) of a fused graph: the ops it holds,
// its FLOPs and the bytes it must move (inputs read once, outputs written
// once), and where that puts it on the target's roofline.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_COMPILER_KERNELREPORT_H
#define KILN_COMPILER_KERNELREPORT_H

#include "kiln/Target/Roofline.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"

#include "llvm/Support/raw_ostream.h"

#include <optional>
#include <string>
#include <vector>

namespace kiln {

/// Kernels shorter than this are dominated by fixed costs (loop setup, the
/// call), whatever their FLOPs and bytes.
constexpr double kOverheadBoundSeconds = 2e-6;

struct KernelCost {
  std::string kind;             // contraction, reduction, elementwise, ...
  std::vector<std::string> ops; // kiln op names, in order
  double flops = 0;
  double bytes = 0;
  /// The FLOPs the generated code performs, when an algorithm does fewer
  /// than `flops` (a Winograd convolution's matmuls); the predictions use
  /// it.
  double executedFlops = 0;
  /// Inputs that an earlier kernel writes and only this one reads: (that
  /// kernel's index, bytes). When lowering merges the two, the value does
  /// not pass through memory.
  std::vector<std::pair<size_t, double>> producedInputs;
  /// Set when lowering runs this kernel's work inside an earlier one (its
  /// index; mergeLoweredKernels): its FLOPs and bytes are counted there.
  std::optional<size_t> fusedInto;

  double intensity() const { return bytes > 0 ? flops / bytes : 0; }
  double predictedSeconds(const Roofline &roofline) const;
  /// "compute", "memory" or "overhead".
  const char *bound(const Roofline &roofline) const;
};

/// FLOPs of one kiln op by the convention in docs/fusion.md (2 per
/// multiply-add, 1 per simple elementwise op, a polynomial's worth per
/// transcendental, 1 per reduced element).
double flopsOf(mlir::Operation *op);

/// One entry per kiln.kernel of `func`, in program order. With
/// `winogradConvs` (the CPU target), the convolutions that run as Winograd
/// F(2x2, 3x3) are listed as `conv(winograd)` and predicted from the
/// multiplies its matmuls perform.
std::vector<KernelCost> analyzeKernels(mlir::func::FuncOp func,
                                       bool winogradConvs = false);

/// Bytes of all tensors the graph's unfused ops would read and write: what
/// memory traffic would be without fusion.
double unfusedBytes(mlir::func::FuncOp func);

/// The kernels kiln-record-fused-kernels found still apart after lowering
/// (the kiln.separate_kernels attribute, removed from `module`), or none
/// when the pass did not run.
std::optional<std::vector<int32_t>> takeSeparateKernels(mlir::ModuleOp module);

/// Makes `kernels` describe the code as lowered: each kernel not in
/// `separate` runs inside the nearest one before it that is (a matmul
/// storing through the transpose after it, a 1x1 convolution run band by
/// band inside the depthwise layer after it). Its FLOPs and bytes move to
/// that kernel, less twice the bytes of each value passed between the two
/// (no longer written and read back), and it gets `fusedInto`.
void mergeLoweredKernels(std::vector<KernelCost> &kernels,
                         llvm::ArrayRef<int32_t> separate);

/// Whole-model numbers printed under the per-kernel table.
struct ModelTotals {
  double unfusedBytes = 0;
  /// The planned arena and the sum of all intermediates (0 when the
  /// compilation stopped before memory planning).
  uint64_t arenaBytes = 0, intermediateBytes = 0, stackBytes = 0;
  /// --target=cuda: what runs on the GPU once lowered, in launch order
  /// (kiln-record-device-work): GEMMs (kind "gemm") and generated kernels
  /// ("row", "loops"), ops holding the name and how it runs.
  std::vector<KernelCost> device;
};

/// The kiln.device_work list kiln-record-device-work left on `module`, as
/// rows of the report (removed from the module).
std::vector<KernelCost> takeDeviceWork(mlir::ModuleOp module);

void printReportText(llvm::raw_ostream &os, llvm::ArrayRef<KernelCost> kernels,
                     const Roofline &roofline, const ModelTotals &totals);
void printReportJSON(llvm::raw_ostream &os, llvm::ArrayRef<KernelCost> kernels,
                     const Roofline &roofline, const ModelTotals &totals);

} // namespace kiln

#endif // KILN_COMPILER_KERNELREPORT_H
