//===- RecordDeviceWork.cpp - kiln-record-device-work ---------------------===//
//
// The kernel report's regions are what fusion grouped; on the GPU they
// become something else: a product and its bias in one cuBLASLt call, a
// softmax with the op before it in one row kernel, a transpose folded into
// its reader. What actually runs, and what each piece moves, is known only
// once the launches and library calls exist.
//
//===----------------------------------------------------------------------===//

#include "kiln/Transforms/Passes.h"
#include "kiln/runtime.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

namespace kiln {
#define GEN_PASS_DEF_RECORDDEVICEWORK
#include "kiln/Transforms/Passes.h.inc"
} // namespace kiln

using namespace mlir;

namespace {

double bytesOf(Value buffer) {
  auto type = dyn_cast<MemRefType>(buffer.getType());
  if (!type || !type.hasStaticShape())
    return 0;
  return double(type.getNumElements()) *
         llvm::divideCeil(type.getElementTypeBitWidth(), 8);
}

struct RecordDeviceWorkPass
    : public kiln::impl::RecordDeviceWorkBase<RecordDeviceWorkPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    Builder b(module.getContext());
    auto gemms = module->getAttrOfType<ArrayAttr>("kiln.gemms");
    SmallVector<Attribute> work;
    for (auto func : module.getOps<func::FuncOp>()) {
      if (func.isExternal() || !func.isPublic())
        continue;
      func.walk([&](Operation *op) {
        if (auto call = dyn_cast<func::CallOp>(op))
          if (std::optional<DictionaryAttr> entry =
                  describeGemm(b, call, gemms))
            work.push_back(*entry);
        if (auto launch = dyn_cast<gpu::LaunchOp>(op))
          work.push_back(describeKernel(b, launch));
      });
    }
    module->setAttr("kiln.device_work", b.getArrayAttr(work));
  }

  static DictionaryAttr entry(Builder &b, StringRef name, StringRef kind,
                              StringRef how, double flops, double bytes) {
    return b.getDictionaryAttr(
        {b.getNamedAttr("name", b.getStringAttr(name)),
         b.getNamedAttr("kind", b.getStringAttr(kind)),
         b.getNamedAttr("how", b.getStringAttr(how)),
         b.getNamedAttr("flops", b.getF64FloatAttr(flops)),
         b.getNamedAttr("bytes", b.getF64FloatAttr(bytes))});
  }

  /// A GEMM: 2 m n k FLOPs per batch element; its operands' bytes (C read
  /// too when it accumulates).
  static std::optional<DictionaryAttr>
  describeGemm(Builder &b, func::CallOp call, ArrayAttr gemms) {
    StringRef callee = call.getCallee();
    unsigned index;
    if (!gemms || !callee.consume_front(kiln::kGemmCallPrefix) ||
        callee.getAsInteger(10, index) || index >= gemms.size())
      return std::nullopt;
    auto fields = cast<DictionaryAttr>(gemms[index]);
    auto get = [&](StringRef name) {
      return cast<IntegerAttr>(fields.get(name)).getInt();
    };
    double flops = 2.0 * get("m") * get("n") * get("k") * double(get("batch"));
    double bytes = 0;
    for (Value operand : call.getOperands())
      bytes += bytesOf(operand);
    if (get("accumulate"))
      bytes += bytesOf(call.getOperand(2));
    int64_t epilogue = get("epilogue");
    std::string how = epilogue == KILN_GEMM_EPILOGUE_NONE ? "cuBLAS"
                      : epilogue & KILN_GEMM_EPILOGUE_RELU
                          ? "cuBLASLt, bias + ReLU epilogue"
                          : "cuBLASLt, bias epilogue";
    return entry(b, ("gemm_" + llvm::Twine(index)).str(), "gemm", how, flops,
                 bytes);
  }

  /// A generated kernel: the buffers it touches, each read or written once
  /// (its arithmetic is negligible next to them on a GPU).
  static DictionaryAttr describeKernel(Builder &b, gpu::LaunchOp launch) {
    // The global buffers its loads and stores address (views of the arena
    // and weights, recomputed in the kernel; not shared memory).
    llvm::SetVector<Value> buffers;
    launch.getBody().walk([&](MemoryEffectOpInterface op) {
      SmallVector<MemoryEffects::EffectInstance> effects;
      op.getEffects(effects);
      for (const MemoryEffects::EffectInstance &effect : effects) {
        Value buffer = effect.getValue();
        auto type = buffer ? dyn_cast<MemRefType>(buffer.getType()) : nullptr;
        if (type && !type.getMemorySpace())
          buffers.insert(buffer);
      }
    });
    double bytes = 0;
    for (Value buffer : buffers)
      bytes += bytesOf(buffer);
    StringRef name = launch.getFunction().value_or("kernel");
    bool rows = name.starts_with("rows_") || name.starts_with("reduce_");
    std::string how = rows ? "block per row" : "thread per element";
    return entry(b, name, rows ? "row" : "loops", how, 0, bytes);
  }
};

} // namespace
