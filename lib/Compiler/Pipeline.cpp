//===- Pipeline.cpp - kiln's compilation pipeline -------------------------===//

#include "kiln/Compiler/Pipeline.h"
#include "kiln/Dialect/Kiln/IR/KilnDialect.h"
#include "kiln/Dialect/Kiln/Transforms/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Transforms/Passes.h"

using namespace mlir;

namespace kiln {

void buildGraphPipeline(OpPassManager &pm) {
  OpPassManager &func = pm.nest<func::FuncOp>();
  func.addPass(createKilnShapeInference());
  func.addPass(createKilnFoldConstants());
  func.addPass(createKilnShapeInference());
  pm.addPass(createCanonicalizerPass());
  pm.addPass(createCSEPass());
  // After canonicalization: x^3 is x * x * x by then.
  pm.addNestedPass<func::FuncOp>(createKilnRecomposeOps());
}

LogicalResult verifyStaticShapes(ModuleOp module) {
  WalkResult result = module.walk([](Operation *op) {
    if (!isa<KilnDialect>(op->getDialect()))
      return WalkResult::advance();
    for (Value value : op->getResults()) {
      auto type = dyn_cast<RankedTensorType>(value.getType());
      if (type && !type.hasStaticShape()) {
        op->emitOpError("result has a dynamic shape ")
            << type << " after shape inference; pin the model's dynamic "
            << "input dims (--input-shape / --dim)";
        return WalkResult::interrupt();
      }
    }
    return WalkResult::advance();
  });
  return failure(result.wasInterrupted());
}

} // namespace kiln
