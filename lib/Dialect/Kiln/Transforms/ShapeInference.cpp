//===- ShapeInference.cpp - kiln-shape-inference --------------------------===//
//
// Refines every kiln result type to what the op infers from its operands,
// visiting ops in order so refined operands feed their users, then makes the
// function's result types match its return.
//
//===----------------------------------------------------------------------===//

#include "kiln/Dialect/Kiln/IR/KilnOps.h"
#include "kiln/Dialect/Kiln/Transforms/Passes.h"

namespace kiln {
#define GEN_PASS_DEF_KILNSHAPEINFERENCE
#include "kiln/Dialect/Kiln/Transforms/Passes.h.inc"
} // namespace kiln

using namespace mlir;
using namespace kiln;

namespace {

/// The most refined type both `inferred` and `declared` describe, or null
/// when they conflict. Static sizes win over dynamic ones.
Type meetTypes(Type inferred, Type declared) {
  auto a = dyn_cast<RankedTensorType>(inferred);
  auto b = dyn_cast<RankedTensorType>(declared);
  if (!a || !b)
    return inferred == declared ? inferred : Type();
  if (a.getElementType() != b.getElementType() || a.getRank() != b.getRank())
    return {};
  SmallVector<int64_t> dims;
  for (auto [x, y] : llvm::zip_equal(a.getShape(), b.getShape())) {
    if (!ShapedType::isDynamic(x) && !ShapedType::isDynamic(y) && x != y)
      return {};
    dims.push_back(ShapedType::isDynamic(x) ? y : x);
  }
  return a.clone(dims);
}

/// Refines the results of one op; emits an error and fails on a conflict.
LogicalResult refineResults(InferTypeOpInterface op) {
  Operation *operation = op.getOperation();
  SmallVector<Type> inferred;
  if (failed(op.inferReturnTypes(operation->getContext(), operation->getLoc(),
                                 operation->getOperands(),
                                 operation->getRawDictionaryAttrs(),
                                 operation->getPropertiesStorage(),
                                 operation->getRegions(), inferred)))
    return operation->emitOpError("cannot infer its result types from "
                                  "operand types ")
           << operation->getOperandTypes();
  for (auto [index, result, type] :
       llvm::enumerate(operation->getResults(), inferred)) {
    Type refined = meetTypes(type, result.getType());
    if (!refined)
      return operation->emitOpError("result #")
             << index << " is declared as " << result.getType()
             << " but its operands " << operation->getOperandTypes() << " give "
             << type;
    result.setType(refined);
  }
  return success();
}

struct KilnShapeInferencePass
    : public kiln::impl::KilnShapeInferenceBase<KilnShapeInferencePass> {
  void runOnOperation() override {
    func::FuncOp func = getOperation();
    WalkResult walk = func.walk<WalkOrder::PreOrder>([](Operation *op) {
      auto inferable = dyn_cast<InferTypeOpInterface>(op);
      if (!inferable || !isa<KilnDialect>(op->getDialect()))
        return WalkResult::advance();
      return failed(refineResults(inferable)) ? WalkResult::interrupt()
                                              : WalkResult::advance();
    });
    if (walk.wasInterrupted())
      return signalPassFailure();
    updateFunctionResultTypes(func);
  }

  /// Makes the function type agree with the (refined) returned values.
  static void updateFunctionResultTypes(func::FuncOp func) {
    if (func.isExternal())
      return;
    auto ret = dyn_cast<func::ReturnOp>(func.getBody().back().getTerminator());
    if (!ret)
      return;
    func.setType(FunctionType::get(func.getContext(), func.getArgumentTypes(),
                                   ret.getOperandTypes()));
  }
};

} // namespace
