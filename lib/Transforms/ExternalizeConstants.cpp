//===- ExternalizeConstants.cpp - kiln-externalize-constants --------------===//
//
// A GPU kernel cannot read the host library's read-only data, and embedding
// hundreds of megabytes of weights in PTX text is no option: the weights
// are laid out in one buffer that the runtime copies to the device once per
// context, and kernels read them through views of it.
//
//===----------------------------------------------------------------------===//

#include "kiln/Transforms/Passes.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/SymbolTable.h"

#include "llvm/ADT/MapVector.h"

namespace kiln {
#define GEN_PASS_DEF_EXTERNALIZECONSTANTS
#include "kiln/Transforms/Passes.h.inc"
} // namespace kiln

using namespace mlir;

namespace {

/// Bytes a constant global occupies (i1 takes a byte per element, as in the
/// LLVM global that holds it).
int64_t globalBytes(memref::GlobalOp global) {
  MemRefType type = global.getType();
  int64_t elementBytes =
      llvm::divideCeil(type.getElementType().getIntOrFloatBitWidth(), 8);
  return type.getNumElements() * elementBytes;
}

struct ExternalizeConstantsPass
    : public kiln::impl::ExternalizeConstantsBase<ExternalizeConstantsPass> {
  using ExternalizeConstantsBase::ExternalizeConstantsBase;

  void runOnOperation() override {
    SymbolTable symbols(getOperation());
    for (auto func : getOperation().getOps<func::FuncOp>())
      if (!func.isExternal() && func.isPublic())
        if (failed(externalize(func, symbols)))
          return signalPassFailure();
  }

  LogicalResult externalize(func::FuncOp func, SymbolTable &symbols) {
    // Offsets in order of first use, so the layout is deterministic.
    llvm::MapVector<memref::GlobalOp, int64_t> offsets;
    SmallVector<memref::GetGlobalOp> reads;
    int64_t bytes = 0;
    WalkResult result = func.walk([&](memref::GetGlobalOp read) {
      auto global = symbols.lookup<memref::GlobalOp>(read.getName());
      if (!global || !global.getConstant() || !global.getInitialValue() ||
          !global.getType().hasStaticShape() ||
          !global.getType().getElementType().isIntOrFloat()) {
        read.emitOpError("kiln-externalize-constants: only statically shaped "
                         "constant globals of numbers can move to the device");
        return WalkResult::interrupt();
      }
      reads.push_back(read);
      if (offsets.count(global))
        return WalkResult::advance();
      int64_t offset = llvm::alignTo(bytes, alignment);
      offsets[global] = offset;
      bytes = offset + globalBytes(global);
      return WalkResult::advance();
    });
    if (result.wasInterrupted())
      return failure();

    MLIRContext *ctx = func.getContext();
    auto weightsType = MemRefType::get({std::max<int64_t>(bytes, 1)},
                                       IntegerType::get(ctx, 8));
    if (failed(func.insertArgument(func.getNumArguments(), weightsType,
                                   DictionaryAttr::get(ctx), func.getLoc())))
      return failure();
    Value weights = func.getArgument(func.getNumArguments() - 1);
    for (memref::GetGlobalOp read : reads) {
      OpBuilder b(read);
      auto global = symbols.lookup<memref::GlobalOp>(read.getName());
      Value offset =
          arith::ConstantIndexOp::create(b, read.getLoc(), offsets[global]);
      Value view = memref::ViewOp::create(b, read.getLoc(), read.getType(),
                                          weights, offset, ValueRange());
      read.replaceAllUsesWith(view);
      read.erase();
    }

    Builder b(ctx);
    SmallVector<Attribute> layout;
    for (auto [global, offset] : offsets)
      layout.push_back(
          b.getArrayAttr({FlatSymbolRefAttr::get(global.getSymNameAttr()),
                          b.getI64IntegerAttr(offset),
                          b.getI64IntegerAttr(globalBytes(global))}));
    func->setAttr("kiln.constants", b.getArrayAttr(layout));
    func->setAttr("kiln.weights_bytes", b.getI64IntegerAttr(bytes));
    return success();
  }
};

} // namespace
