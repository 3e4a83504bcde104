//===- KernelReport.cpp - per-kernel cost and roofline --------------------===//

#include "kiln/Compiler/KernelReport.h"
#include "kiln/Conversion/KilnToLinalg/KilnToLinalg.h"
#include "kiln/Dialect/Kiln/IR/KilnOps.h"
#include "kiln/Transforms/KernelEmitters.h"

#include "llvm/ADT/DenseSet.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/JSON.h"

using namespace mlir;

namespace kiln {
namespace {

double elementsOf(Value value) {
  auto type = dyn_cast<RankedTensorType>(value.getType());
  return type && type.hasStaticShape() ? double(type.getNumElements()) : 0;
}

double bytesOf(Value value) {
  auto type = cast<RankedTensorType>(value.getType());
  unsigned bits = type.getElementType().getIntOrFloatBitWidth();
  return elementsOf(value) * double(llvm::divideCeil(bits, 8));
}

/// Arithmetic cost per element of a transcendental, as the polynomial
/// approximations kiln generates compute it (FMAs and a few selects).
constexpr double kTranscendentalFlops = 10;

} // namespace

double flopsOf(Operation *op) {
  if (op->getNumResults() == 0)
    return 0;
  double out = elementsOf(op->getResult(0));
  if (auto matmul = dyn_cast<MatmulOp>(op)) {
    auto lhs = cast<RankedTensorType>(matmul.getLhs().getType());
    return 2 * out * double(lhs.getShape().back());
  }
  if (auto conv = dyn_cast<ConvOp>(op)) {
    auto filter = cast<RankedTensorType>(conv.getFilter().getType());
    double perOutput = 1;
    for (int64_t d : filter.getShape().drop_front())
      perOutput *= double(d); // input channels per group x kernel window
    return 2 * out * perOutput;
  }
  if (isa<ExpOp, LogOp, TanhOp, SigmoidOp, ErfOp, PowOp>(op))
    return out * kTranscendentalFlops;
  if (isa<GeluOp>(op))
    return out * (kTranscendentalFlops + 4);
  if (isa<SoftmaxOp, LogSoftmaxOp>(op))
    return out * (kTranscendentalFlops + 4);
  if (isa<ReduceSumOp, ReduceMeanOp, ReduceMaxOp, ReduceMinOp, ReduceProdOp,
          ArgMaxOp, ArgMinOp, AvgPoolOp, MaxPoolOp>(op))
    return elementsOf(op->getOperand(0));
  if (op->hasTrait<OpTrait::Elementwise>())
    return out;
  return 0; // data movement
}

double KernelCost::predictedSeconds(const Roofline &roofline) const {
  return std::max(executedFlops / (roofline.peakGflops * 1e9),
                  bytes / (roofline.bandwidthGBs * 1e9));
}

const char *KernelCost::bound(const Roofline &roofline) const {
  if (predictedSeconds(roofline) < kOverheadBoundSeconds)
    return "overhead";
  return executedFlops / (roofline.peakGflops * 1e9) >
                 bytes / (roofline.bandwidthGBs * 1e9)
             ? "compute"
             : "memory";
}

namespace {

/// The kernel that writes `input` of `reader`, if `reader` is the value's
/// only reader (through reshapes, each the only reader of its input).
KernelOp soleReaderProducer(Value input, KernelOp reader) {
  if (!llvm::all_of(input.getUsers(),
                    [&](Operation *user) { return user == reader; }))
    return nullptr;
  while (auto reshape = input.getDefiningOp<ReshapeOp>()) {
    input = reshape.getInput();
    if (!input.hasOneUse())
      return nullptr;
  }
  return input.getDefiningOp<KernelOp>();
}

} // namespace

std::vector<KernelCost> analyzeKernels(func::FuncOp func, bool winogradConvs) {
  std::vector<KernelCost> kernels;
  llvm::DenseMap<Operation *, size_t> indexOf;
  func.walk([&](KernelOp kernel) {
    KernelCost cost;
    cost.kind = kernel.getKind().str();
    for (Value input : kernel.getInputs()) {
      cost.bytes += bytesOf(input);
      if (KernelOp producer = soleReaderProducer(input, kernel))
        if (auto it = indexOf.find(producer); it != indexOf.end())
          cost.producedInputs.push_back({it->second, bytesOf(input)});
    }
    indexOf[kernel] = kernels.size();
    for (Value output : kernel.getOutputs())
      cost.bytes += bytesOf(output);
    for (Operation &op : kernel.getBody().front().without_terminator()) {
      if (isa<ConstantOp>(op))
        continue;
      double flops = flopsOf(&op);
      std::optional<double> share =
          winogradConvs ? winogradShareOfWork(&op) : std::nullopt;
      cost.ops.push_back(op.getName().stripDialect().str() +
                         (share ? "(winograd)" : ""));
      cost.flops += flops;
      cost.executedFlops += share ? flops * *share : flops;
    }
    kernels.push_back(std::move(cost));
  });
  return kernels;
}

std::optional<std::vector<int32_t>> takeSeparateKernels(ModuleOp module) {
  auto separate =
      module->getAttrOfType<DenseI32ArrayAttr>(kSeparateKernelsAttrName);
  if (!separate)
    return std::nullopt;
  std::vector<int32_t> indices(separate.asArrayRef().begin(),
                               separate.asArrayRef().end());
  module->removeAttr(kSeparateKernelsAttrName);
  return indices;
}

void mergeLoweredKernels(std::vector<KernelCost> &kernels,
                         ArrayRef<int32_t> separate) {
  assert(llvm::all_of(
             separate,
             [&](int32_t k) { return k >= 0 && size_t(k) < kernels.size(); }) &&
         "kiln.separate_kernels names a kernel the report does not have");
  llvm::SmallDenseSet<int32_t> apart(separate.begin(), separate.end());
  std::vector<size_t> owner(kernels.size());
  for (size_t k = 0; k < kernels.size(); ++k) {
    owner[k] = k == 0 || apart.contains(int32_t(k)) ? k : owner[k - 1];
    if (owner[k] == k)
      continue;
    KernelCost &into = kernels[owner[k]], &fused = kernels[k];
    into.flops += fused.flops;
    into.executedFlops += fused.executedFlops;
    into.bytes += fused.bytes;
    for (auto [producer, bytes] : fused.producedInputs)
      if (owner[producer] == owner[k])
        into.bytes -= 2 * bytes;
    fused.flops = fused.executedFlops = fused.bytes = 0;
    fused.fusedInto = owner[k];
  }
}

double unfusedBytes(func::FuncOp func) {
  double bytes = 0;
  func.walk([&](Operation *op) {
    if (!isa_and_nonnull<KilnDialect>(op->getDialect()) ||
        isa<KernelOp, YieldOp, ConstantOp, ReshapeOp, ShapeOfOp>(op))
      return;
    for (Value operand : op->getOperands())
      bytes += bytesOf(operand);
    for (Value result : op->getResults())
      bytes += bytesOf(result);
  });
  return bytes;
}

namespace {

std::string joinOps(const KernelCost &kernel, size_t limit) {
  std::string text;
  for (const std::string &op : kernel.ops)
    text += (text.empty() ? "" : " ") + op;
  if (text.size() > limit)
    text = text.substr(0, limit - 3) + "...";
  return text;
}

} // namespace

namespace {

/// Sums of one table's rows.
struct TableTotals {
  double flops = 0, bytes = 0, seconds = 0;
  /// Rows that lowering merged into an earlier kernel.
  size_t fused = 0;
};

TableTotals printTable(llvm::raw_ostream &os, ArrayRef<KernelCost> kernels,
                       const Roofline &roofline, const char *opsHeader) {
  os << llvm::format("%4s  %-11s %10s %10s %7s %10s  %-8s  %s\n", "#", "kind",
                     "MFLOP", "MB", "FLOP/B", "pred. us", "bound", opsHeader);
  TableTotals totals;
  for (auto [i, kernel] : llvm::enumerate(kernels)) {
    if (kernel.fusedInto) {
      os << llvm::format("%4zu  %-11s %10s %10s %7s %10s  %-8s  %s (fused "
                         "into #%zu)\n",
                         i, kernel.kind.c_str(), "-", "-", "-", "-", "-",
                         joinOps(kernel, 60).c_str(), *kernel.fusedInto);
      ++totals.fused;
      continue;
    }
    double predicted = kernel.predictedSeconds(roofline);
    os << llvm::format("%4zu  %-11s %10.3f %10.3f %7.2f %10.2f  %-8s  %s\n", i,
                       kernel.kind.c_str(), kernel.flops / 1e6,
                       kernel.bytes / 1e6, kernel.intensity(), predicted * 1e6,
                       kernel.bound(roofline), joinOps(kernel, 60).c_str());
    totals.flops += kernel.flops;
    totals.bytes += kernel.bytes;
    totals.seconds += predicted;
  }
  return totals;
}

llvm::json::Array jsonEntries(ArrayRef<KernelCost> kernels,
                              const Roofline &roofline) {
  llvm::json::Array entries;
  for (const KernelCost &kernel : kernels) {
    llvm::json::Array ops;
    for (const std::string &op : kernel.ops)
      ops.push_back(op);
    if (kernel.fusedInto) {
      entries.push_back(
          llvm::json::Object{{"kind", kernel.kind},
                             {"ops", std::move(ops)},
                             {"fused_into", int64_t(*kernel.fusedInto)}});
      continue;
    }
    entries.push_back(llvm::json::Object{
        {"kind", kernel.kind},
        {"ops", std::move(ops)},
        {"flops", kernel.flops},
        {"executed_flops", kernel.executedFlops},
        {"bytes", kernel.bytes},
        {"intensity", kernel.intensity()},
        {"predicted_us", kernel.predictedSeconds(roofline) * 1e6},
        {"bound", kernel.bound(roofline)}});
  }
  return entries;
}

} // namespace

std::vector<KernelCost> takeDeviceWork(mlir::ModuleOp module) {
  std::vector<KernelCost> work;
  auto entries = module->getAttrOfType<ArrayAttr>("kiln.device_work");
  if (!entries)
    return work;
  for (Attribute attr : entries) {
    auto fields = cast<DictionaryAttr>(attr);
    auto text = [&](StringRef name) {
      return cast<StringAttr>(fields.get(name)).str();
    };
    auto number = [&](StringRef name) {
      return cast<FloatAttr>(fields.get(name)).getValueAsDouble();
    };
    KernelCost cost;
    cost.kind = text("kind");
    cost.ops = {text("name") + ":", text("how")};
    cost.flops = cost.executedFlops = number("flops");
    cost.bytes = number("bytes");
    work.push_back(std::move(cost));
  }
  module->removeAttr("kiln.device_work");
  return work;
}

void printReportText(llvm::raw_ostream &os, ArrayRef<KernelCost> kernels,
                     const Roofline &roofline, const ModelTotals &totals) {
  os << llvm::format("roofline: %.1f GFLOP/s, %.1f GB/s (%d thread%s; %s)\n",
                     roofline.peakGflops, roofline.bandwidthGBs,
                     roofline.threads, roofline.threads == 1 ? "" : "s",
                     roofline.source.c_str());
  TableTotals sums = printTable(os, kernels, roofline, "ops");
  size_t separate = kernels.size() - sums.fused;
  os << llvm::format("total: %zu kernel%s", separate, separate == 1 ? "" : "s");
  if (sums.fused)
    os << llvm::format(" (and %zu merged into %s by lowering)", sums.fused,
                       separate == 1 ? "it" : "them");
  os << llvm::format(", %.3f MFLOP, %.3f MB moved (%.3f MB unfused), "
                     "predicted %.2f us\n",
                     sums.flops / 1e6, sums.bytes / 1e6,
                     totals.unfusedBytes / 1e6, sums.seconds * 1e6);
  if (totals.intermediateBytes || totals.stackBytes)
    os << llvm::format("arena: %llu bytes for %llu bytes of intermediates; "
                       "%llu bytes of small buffers on the stack\n",
                       (unsigned long long)totals.arenaBytes,
                       (unsigned long long)totals.intermediateBytes,
                       (unsigned long long)totals.stackBytes);
  if (totals.device.empty())
    return;
  os << "on the GPU, as lowered (GEMMs in the library, generated kernels):\n";
  TableTotals device = printTable(os, totals.device, roofline, "what");
  size_t gemms = llvm::count_if(
      totals.device, [](const KernelCost &k) { return k.kind == "gemm"; });
  os << llvm::format("device total: %zu GEMMs, %zu kernels, %.3f MB moved, "
                     "predicted %.2f us\n",
                     gemms, totals.device.size() - gemms, device.bytes / 1e6,
                     device.seconds * 1e6);
}

void printReportJSON(llvm::raw_ostream &os, ArrayRef<KernelCost> kernels,
                     const Roofline &roofline, const ModelTotals &totals) {
  llvm::json::Object report{
      {"roofline", llvm::json::Object{{"peak_gflops", roofline.peakGflops},
                                      {"bandwidth_gbs", roofline.bandwidthGBs},
                                      {"threads", roofline.threads},
                                      {"source", roofline.source}}},
      {"kernels", jsonEntries(kernels, roofline)},
      {"unfused_bytes", totals.unfusedBytes},
      {"arena_bytes", int64_t(totals.arenaBytes)},
      {"intermediate_bytes", int64_t(totals.intermediateBytes)},
      {"stack_bytes", int64_t(totals.stackBytes)}};
  if (!totals.device.empty())
    report["device"] = jsonEntries(totals.device, roofline);
  os << llvm::formatv("{0:2}", llvm::json::Value(std::move(report))) << "\n";
}

} // namespace kiln
