//===- LowerGPULaunches.cpp - kiln-lower-gpu-launches ---------------------===//
//
// The host side of a device target launches kernels through the runtime
// (kiln_cuda_launcher in runtime.h) rather than through a GPU runtime library
// linked into model.so: the runtime owns the driver, the module, the stream
// and the CUDA graph, and a CPU-only program never loads any of them.
//
//===----------------------------------------------------------------------===//

#include "kiln/Transforms/Passes.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/SymbolTable.h"

#include "llvm/ADT/MapVector.h"

namespace kiln {
#define GEN_PASS_DEF_LOWERGPULAUNCHES
#include "kiln/Transforms/Passes.h.inc"
} // namespace kiln

using namespace mlir;

namespace {

struct LowerGPULaunchesPass
    : public kiln::impl::LowerGPULaunchesBase<LowerGPULaunchesPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    MLIRContext *ctx = module.getContext();
    auto launcherType = MemRefType::get({1}, IntegerType::get(ctx, 8));
    llvm::MapVector<StringAttr, func::FuncOp> launchers;
    for (auto func : llvm::to_vector(module.getOps<func::FuncOp>())) {
      if (func.isExternal() || !func.isPublic())
        continue;
      if (failed(func.insertArgument(func.getNumArguments(), launcherType,
                                     DictionaryAttr::get(ctx), func.getLoc())))
        return signalPassFailure();
      Value launcher = func.getArgument(func.getNumArguments() - 1);
      func.walk([&](gpu::LaunchFuncOp launch) {
        func::FuncOp callee = declareLauncher(module, launch, launchers);
        OpBuilder b(launch);
        SmallVector<Value> operands = {launcher};
        gpu::KernelDim3 grid = launch.getGridSizeOperandValues();
        gpu::KernelDim3 block = launch.getBlockSizeOperandValues();
        operands.append({grid.x, grid.y, grid.z, block.x, block.y, block.z});
        llvm::append_range(operands, launch.getKernelOperands());
        func::CallOp::create(b, launch.getLoc(), callee, operands);
        launch.erase();
      });
      // Runtime calls (kiln_gemm_I) take the launcher first as well.
      func.walk([&](func::CallOp call) {
        if (!call.getCallee().starts_with(kiln::kGemmCallPrefix))
          return;
        SmallVector<Value> operands = {launcher};
        llvm::append_range(operands, call.getOperands());
        call->setOperands(operands);
        auto decl = module.lookupSymbol<func::FuncOp>(call.getCallee());
        if (decl && decl.getNumArguments() + 1 == operands.size())
          decl.setType(
              FunctionType::get(ctx, ValueRange(operands).getTypes(), {}));
      });
    }
    SmallVector<Attribute> names;
    for (StringAttr name : launchers.keys())
      names.push_back(name);
    module->setAttr("kiln.gpu_kernels", ArrayAttr::get(ctx, names));
    for (Operation &op : llvm::make_early_inc_range(module.getOps()))
      if (isa<gpu::BinaryOp, gpu::GPUModuleOp>(op))
        op.erase();
    module->removeAttr(gpu::GPUDialect::getContainerModuleAttrName());
  }

  /// `kiln_launch_I(launcher, gx, gy, gz, bx, by, bz, args...)` for the
  /// kernel `launch` runs, declared once per kernel.
  func::FuncOp
  declareLauncher(ModuleOp module, gpu::LaunchFuncOp launch,
                  llvm::MapVector<StringAttr, func::FuncOp> &launchers) {
    StringAttr kernel = launch.getKernelName();
    auto [it, inserted] = launchers.insert({kernel, nullptr});
    if (!inserted)
      return it->second;
    MLIRContext *ctx = module.getContext();
    SmallVector<Type> inputs = {MemRefType::get({1}, IntegerType::get(ctx, 8))};
    inputs.append(6, IndexType::get(ctx));
    llvm::append_range(inputs, launch.getKernelOperands().getTypes());
    OpBuilder b = OpBuilder::atBlockEnd(module.getBody());
    auto decl = func::FuncOp::create(b, launch.getLoc(),
                                     "kiln_launch_" +
                                         std::to_string(launchers.size() - 1),
                                     FunctionType::get(ctx, inputs, {}));
    decl.setPrivate();
    it->second = decl;
    return decl;
  }
};

} // namespace
