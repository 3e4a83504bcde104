//===- Backend.cpp - kiln's x86-64 CPU backend ----------------------------===//

#include "kiln/Target/CPU/Backend.h"
#include "kiln/Conversion/Passes.h"
#include "kiln/Dialect/Kiln/IR/KilnOps.h"
#include "kiln/Dialect/Kiln/Transforms/Passes.h"
#include "kiln/Target/CPU/InterleaveLoops.h"
#include "kiln/Target/CPU/TargetDescription.h"
#include "kiln/Transforms/Lanes.h"
#include "kiln/Transforms/Passes.h"
#include "kiln/Transforms/RuntimeDtype.h"
#include "kiln/runtime.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "mlir/Pass/PassRegistry.h"
#include "mlir/Target/LLVMIR/Dialect/Builtin/BuiltinToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Dialect/LLVMIR/LLVMToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Export.h"
#include "mlir/Transforms/Passes.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/IR/IRBuilder.h"
#include "llvm/IR/LegacyPassManager.h"
#include "llvm/MC/MCSubtargetInfo.h"
#include "llvm/MC/TargetRegistry.h"
#include "llvm/Passes/PassBuilder.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/TargetSelect.h"
#include "llvm/TargetParser/Host.h"

#include "lld/Common/Driver.h"

LLD_HAS_DRIVER(elf)

using namespace mlir;

namespace kiln::cpu {

//===----------------------------------------------------------------------===//
// Signature
//===----------------------------------------------------------------------===//

namespace {

FailureOr<int32_t> dtypeOf(Type type, Location loc) {
  if (std::optional<int32_t> dtype = kiln::runtimeDtype(type))
    return *dtype;
  return emitError(loc) << "element type " << type
                        << " cannot cross the model boundary";
}

FailureOr<TensorSignature> tensorSignature(Type type, StringAttr name,
                                           std::string fallback, Location loc) {
  auto tensor = dyn_cast<RankedTensorType>(type);
  if (!tensor || !tensor.hasStaticShape())
    return emitError(loc) << "model inputs and outputs need static tensor "
                             "types, got "
                          << type;
  FailureOr<int32_t> dtype = dtypeOf(tensor.getElementType(), loc);
  if (failed(dtype))
    return failure();
  return TensorSignature{name ? name.str() : fallback, *dtype,
                         SmallVector<int64_t>(tensor.getShape())};
}

void appendJSONTensors(std::string &out, ArrayRef<TensorSignature> tensors) {
  out += "[";
  for (auto [i, t] : llvm::enumerate(tensors)) {
    out += i ? ", " : "";
    out += "{\"name\": \"";
    for (char c : t.name) {
      if (c == '"' || c == '\\')
        out += '\\';
      out += c;
    }
    out += "\", \"dtype\": \"" + std::string(kiln_dtype_name(t.dtype)) +
           "\", \"shape\": [";
    for (auto [j, d] : llvm::enumerate(t.shape))
      out += (j ? ", " : "") + std::to_string(d);
    out += "]}";
  }
  out += "]";
}

} // namespace

std::string ModelSignature::toJSON() const {
  std::string out = "{\"inputs\": ";
  appendJSONTensors(out, inputs);
  out += ", \"outputs\": ";
  appendJSONTensors(out, outputs);
  out += ", \"arena_bytes\": " + std::to_string(arenaBytes) + "}";
  return out;
}

namespace {

bool hasNoElements(Type type) {
  auto tensor = dyn_cast<RankedTensorType>(type);
  return tensor && tensor.hasStaticShape() && tensor.getNumElements() == 0;
}

/// Removes the inputs and outputs with no elements from the graph function
/// (an input becomes an empty constant; an output is never written) and
/// records which ones remain.
void dropEmptyTensors(func::FuncOp func, ModelSignature &signature) {
  OpBuilder builder(func.getBody());
  llvm::BitVector dropInputs(func.getNumArguments());
  for (BlockArgument arg : func.getArguments()) {
    if (!hasNoElements(arg.getType())) {
      signature.graphInputs.push_back(arg.getArgNumber());
      continue;
    }
    auto type = cast<RankedTensorType>(arg.getType());
    Value empty = kiln::ConstantOp::create(
        builder, arg.getLoc(),
        DenseElementsAttr::get(type, ArrayRef<Attribute>{}));
    arg.replaceAllUsesWith(empty);
    dropInputs.set(arg.getArgNumber());
  }
  (void)func.eraseArguments(dropInputs);
  auto ret = cast<func::ReturnOp>(func.getBody().back().getTerminator());
  llvm::BitVector dropOutputs(func.getNumResults());
  SmallVector<Value> kept;
  for (auto [i, value] : llvm::enumerate(ret.getOperands())) {
    if (hasNoElements(value.getType())) {
      dropOutputs.set(i);
      continue;
    }
    signature.graphOutputs.push_back(i);
    kept.push_back(value);
  }
  ret->setOperands(kept);
  (void)func.eraseResults(dropOutputs);
  // What computed only the dropped outputs is dead now.
  SmallVector<Operation *> ops;
  for (Operation &op : func.getBody().front().without_terminator())
    ops.push_back(&op);
  for (Operation *op : llvm::reverse(ops)) // users before their producers
    if (isOpTriviallyDead(op))
      op->erase();
}

} // namespace

FailureOr<ModelSignature> prepareGraphFunction(ModuleOp module) {
  SmallVector<func::FuncOp> functions;
  for (auto func : module.getOps<func::FuncOp>())
    if (!func.isExternal())
      functions.push_back(func);
  if (functions.size() != 1)
    return module.emitError("expected one model function, found ")
           << functions.size();
  func::FuncOp func = functions.front();
  ModelSignature signature;
  FunctionType type = func.getFunctionType();
  auto nameAttr = [](DictionaryAttr attrs) {
    return attrs ? attrs.getAs<StringAttr>("kiln.name") : StringAttr();
  };
  for (auto [i, input] : llvm::enumerate(type.getInputs())) {
    auto t = tensorSignature(input, nameAttr(func.getArgAttrDict(i)),
                             "input_" + std::to_string(i), func.getLoc());
    if (failed(t))
      return failure();
    signature.inputs.push_back(*t);
  }
  for (auto [i, output] : llvm::enumerate(type.getResults())) {
    auto t = tensorSignature(output, nameAttr(func.getResultAttrDict(i)),
                             "output_" + std::to_string(i), func.getLoc());
    if (failed(t))
      return failure();
    signature.outputs.push_back(*t);
  }
  dropEmptyTensors(func, signature);
  // Names live in the signature now; the lowered function needs none.
  for (unsigned i = 0; i < func.getNumArguments(); ++i)
    func.removeArgAttr(i, "kiln.name");
  for (unsigned i = 0; i < func.getNumResults(); ++i)
    func.removeResultAttr(i, StringAttr::get(module.getContext(), "kiln.name"));
  if (failed(SymbolTable::replaceAllSymbolUses(
          func, StringAttr::get(module.getContext(), kGraphFunctionName),
          module)))
    return failure();
  SymbolTable::setSymbolName(func, kGraphFunctionName);
  return signature;
}

//===----------------------------------------------------------------------===//
// Pass pipelines
//===----------------------------------------------------------------------===//

void buildKernelPipeline(OpPassManager &pm, int64_t splitBatchBytes,
                         int64_t splitBatchPieces, bool splitGroupedConvs,
                         int64_t splitBatchLanes) {
  if (splitBatchBytes > 0)
    pm.addNestedPass<func::FuncOp>(createKilnSplitBatch(
        {splitBatchBytes, splitBatchPieces, splitBatchLanes}));
  // After kiln-split-batch, which runs convolutions image by image but
  // stops at a split along the channels.
  if (splitGroupedConvs)
    pm.addNestedPass<func::FuncOp>(createKilnSplitGroupedConvs());
  pm.addNestedPass<func::FuncOp>(createKilnFuseKernels());
}

void buildLinalgPipeline(OpPassManager &pm, const CodegenOptions &options) {
  pm.addPass(createConvertKilnToLinalg(
      {options.implicitGemmConvs, options.winogradConvs, options.matmulRows,
       options.vectorLanes}));
  pm.addPass(createFuseElementwise());
  if (options.tileRows)
    pm.addPass(createTileRows());
  pm.addPass(createInlineKernels({options.kernelHooks != KernelHooks::None}));
  if (options.foldTransposes)
    pm.addPass(createFoldTransposes());
  pm.addPass(createCanonicalizerPass());
}

void buildLLVMDialectPipeline(OpPassManager &pm,
                              const CodegenOptions &options) {
  static bool registered = [] {
    registerKilnCodegenPasses();
    return true;
  }();
  (void)registered;
  std::string matmul = llvm::formatv(
      "kiln-lower-matmul{{lanes={0} rows={1} vectors={2} fma={3} "
      "half-rate-vectors={4} l1-ways={5} l2-bytes={6} k-unroll={7} "
      "explain={8} shape-tiles={9} long-reduction={10}}",
      options.vectorLanes, options.matmulRows, options.matmulVectors,
      options.hasFMA ? "true" : "false",
      options.halfRateVectors ? "true" : "false", options.l1Ways,
      options.l2Bytes, options.matmulKUnroll,
      options.explainMatmuls ? "true" : "false",
      options.matmulShapeTiles ? "true" : "false", options.matmulLongReduction);
  std::string windowOps =
      llvm::formatv("kiln-lower-window-ops{{lanes={0} prefetch-min-bytes={1}}",
                    options.vectorLanes, options.windowPrefetchMinBytes);
  std::string winograd = llvm::formatv(
      "kiln-lower-winograd-transforms{{lanes={0}}", options.vectorLanes);
  // After the passes that merge kernels (their rewrites drop the calls
  // between the kernels they merge).
  std::string recordFusion;
  if (options.kernelHooks != KernelHooks::None)
    recordFusion = llvm::formatv(
        "kiln-record-fused-kernels{{strip-hooks={0}},",
        options.kernelHooks == KernelHooks::Markers ? "true" : "false");
  std::string rowCopies = llvm::formatv("kiln-vectorize-row-copies{{lanes={0}}",
                                        options.vectorLanes);
  // The polynomial approximations use math.fma.
  std::string expandFMA = options.hasFMA ? "" : "math-expand-ops{ops=fma},";
  std::string approximateMath = options.hasNativeLdexp
                                    ? "kiln-approximate-math{ldexp=true},"
                                    : "kiln-approximate-math,";
  // eliminate-empty-tensors: a result built box by box (a resize's
  // periods and edges) is written in place: the boxes of a tensor.empty
  // would otherwise be buffers of their own, copied into the result.
  std::string pipeline =
      "eliminate-empty-tensors,"
      "one-shot-bufferize{bufferize-function-boundaries "
      "function-boundary-type-conversion=identity-layout-map},"
      "buffer-results-to-out-params{hoist-static-allocs "
      "modify-public-functions},"
      "func.func(kiln-elide-output-copies),canonicalize,cse," +
      (options.emulateGPU ? std::string()
                          : matmul + "," + windowOps + "," + winograd + ",") +
      recordFusion + "symbol-dce,canonicalize," +
      (options.emulateGPU
           ? "func.func(buffer-deallocation-pipeline),"
             "kiln-offload-gemms{emulate=true},kiln-map-reductions-to-gpu,"
             "kiln-plan-memory{alignment=256 max-stack-buffer-bytes=0},"
           : "kiln-form-lanes,kiln-plan-memory,"
             "func.func(buffer-deallocation-pipeline),") +
      "func.func(convert-memref-copy-to-linalg)," +
      (options.emulateGPU ? "" : rowCopies + ",") +
      "func.func(convert-linalg-to-parallel-loops)," +
      (options.emulateGPU ? "" : "kiln-unroll-small-loops,") +
      (options.emulateGPU
           ? "canonicalize,kiln-map-loops-to-gpu,kiln-emulate-gpu-launches,"
           : "") +
      "func.func(scf-forall-to-parallel),"
      "kiln-outline-parallel-loops,expand-strided-metadata,"
      "lower-affine,convert-scf-to-cf," +
      approximateMath + expandFMA +
      (options.hasNativeBF16 ? "" : "kiln-emulate-bf16,") +
      "math-expand-ops{ops=rsqrt},"
      "convert-math-to-funcs,convert-math-to-llvm,convert-math-to-libm,"
      "convert-vector-to-llvm,convert-arith-to-llvm,finalize-memref-to-llvm,"
      "convert-func-to-llvm{use-bare-ptr-memref-call-conv},"
      "convert-cf-to-llvm,reconcile-unrealized-casts";
  if (failed(parsePassPipeline(pipeline, pm, llvm::errs())))
    llvm::report_fatal_error("kiln: invalid built-in pass pipeline");
}

CodegenOptions codegenOptionsFor(const llvm::TargetMachine &machine) {
  CodegenOptions options;
  const llvm::MCSubtargetInfo *info = machine.getMCSubtargetInfo();
  options.hasFMA = info->checkFeatures("+fma");
  options.l1Ways = l1DataWays(machine);
  options.l2Bytes = matmulCacheBytes(machine);
  options.matmulLongReduction = longReductionSteps(machine);
  options.windowPrefetchMinBytes = windowPrefetchMinBytes(machine);
  options.hasNativeBF16 = hasNativeBF16(machine);
  if (info->checkFeatures("+avx512f")) {
    options.halfRateVectors = fmaLanes(machine) < options.vectorLanes;
    // Full-rate cores (Intel's two 512-bit FMA pipes) take 8 x 48 tiles:
    // 24 accumulators, 3 B vectors and a broadcast (28 of 32 registers).
    // A step is 24 FMAs, 12 cycles, against 8 x 32's 16 in 8, so the
    // broadcasts, B loads and the loop's own instructions (the next
    // panel's clamped prefetch, counter, branch) weigh less; 2 steps per
    // iteration halve the latter again. On a Granite Rapids-class core, 1
    // thread (kiln-gemm-benchmark, interleaved): 128 x 768 x 768 147 ->
    // 166 GFLOP/s, 1024^3 141 -> 163, 64 x 1024 x 4096 151 -> 166.
    // Implicit GEMMs had taken 3 vectors alone: ResNet's 3x3 stride-2
    // 64 -> 128 at 56x56 0.850 -> 0.806 ms on an Emerald Rapids core.
    // Zen 4's half-rate FMAs keep 8 x 32 (a step already 16 cycles).
    if (!options.halfRateVectors) {
      options.matmulVectors = 3;
      options.matmulKUnroll = 2;
    }
    return options;
  }
  options.hasNativeLdexp = false;
  if (info->checkFeatures("+avx")) {
    // 16 ymm registers: a 4 x 24 tile is 12 accumulators, 3 B vectors and a
    // broadcast: 7 loads per 12 FMAs, where 6 x 16 takes 8 (6 broadcasts),
    // which Zen 3's load ports felt: 512^3 68 -> 81 GFLOP/s on 1 thread.
    // Its step of k, 6 cycles, is short enough that the k loop's own
    // instructions slow it: 4 steps per iteration (Zen 3: +12-19%).
    options.vectorLanes = 8;
    options.matmulRows = 4;
    options.matmulVectors = 3;
    options.matmulKUnroll = 4;
  } else {
    // SSE: 16 xmm registers, a 4 x 8 tile.
    options.vectorLanes = 4;
    options.matmulRows = 4;
  }
  return options;
}

//===----------------------------------------------------------------------===//
// LLVM IR: the model ABI and optimization
//===----------------------------------------------------------------------===//

llvm::Expected<std::unique_ptr<llvm::TargetMachine>>
createTargetMachine(const TargetOptions &options) {
  static bool initialized = [] {
    llvm::InitializeNativeTarget();
    llvm::InitializeNativeTargetAsmPrinter();
    return true;
  }();
  (void)initialized;
  llvm::Triple triple(llvm::sys::getDefaultTargetTriple());
  std::string error;
  const llvm::Target *target =
      llvm::TargetRegistry::lookupTarget(triple, error);
  if (!target)
    return llvm::createStringError(error);
  std::string cpu = options.cpu;
  std::string features;
  if (cpu == "native") {
    cpu = llvm::sys::getHostCPUName().str();
    for (const auto &feature : llvm::sys::getHostCPUFeatures())
      features += (features.empty() ? "" : ",") +
                  std::string(feature.second ? "+" : "-") +
                  feature.first().str();
  }
  std::unique_ptr<llvm::TargetMachine> machine(target->createTargetMachine(
      triple, cpu, features, llvm::TargetOptions(), llvm::Reloc::PIC_,
      std::nullopt, llvm::CodeGenOptLevel::Aggressive));
  if (!machine)
    return llvm::createStringError("cannot create a target machine for " +
                                   triple.str() + " / " + cpu);
  if (!machine->getMCSubtargetInfo()->isCPUStringValid(cpu))
    return llvm::createStringError("unknown CPU '" + options.cpu + "' for " +
                                   triple.str());
  return machine;
}

namespace {

/// Emits the kiln_model_info tables and the exported entry points.
class ABIBuilder {
public:
  ABIBuilder(llvm::Module &module, const ModelSignature &signature,
             const llvm::TargetMachine &machine)
      : module(module), ctx(module.getContext()), signature(signature),
        machine(machine), ptr(llvm::PointerType::getUnqual(ctx)),
        i32(llvm::Type::getInt32Ty(ctx)), i64(llvm::Type::getInt64Ty(ctx)) {}

  llvm::Error build() {
    llvm::Function *graph = module.getFunction(kGraphFunctionName);
    if (!graph)
      return llvm::createStringError("the model function was not lowered");
    // Everything but the ABI entry points stays inside the library. The
    // kernels of a lanes task stay functions of their own (Lanes.h).
    for (llvm::Function &f : module)
      if (!f.isDeclaration()) {
        f.setLinkage(llvm::GlobalValue::InternalLinkage);
        if (f.getName().starts_with(kiln::kLaneKernelPrefix))
          f.addFnAttr(llvm::Attribute::NoInline);
      }
    for (llvm::GlobalVariable &g : module.globals())
      if (!g.isDeclaration())
        g.setLinkage(llvm::GlobalValue::InternalLinkage);
    // kiln_run guarantees distinct, non-overlapping buffers (runtime.h), so
    // loops need no run-time alias checks.
    for (unsigned i = 0; i < graph->arg_size(); ++i)
      graph->addParamAttr(i, llvm::Attribute::NoAlias);
    buildInfo();
    buildRun(graph);
    buildParallelLaunchers();
    if (signature.cuda) {
      buildCudaLaunchers();
      buildCudaGemms();
      buildCudaImage(*signature.cuda);
    }
    if (llvm::Function *begin = module.getFunction("kiln_profile_begin"))
      buildProfile(begin, module.getFunction("kiln_profile_end"));
    return llvm::Error::success();
  }

private:
  llvm::Constant *string(llvm::StringRef text, const llvm::Twine &name) {
    auto *init = llvm::ConstantDataArray::getString(ctx, text);
    return new llvm::GlobalVariable(module, init->getType(), true,
                                    llvm::GlobalValue::PrivateLinkage, init,
                                    name);
  }

  /// An array of kiln_tensor_info {name, dtype, rank, dims}.
  llvm::Constant *tensorInfos(ArrayRef<TensorSignature> tensors,
                              llvm::StringRef kind) {
    auto *infoType = llvm::StructType::get(ctx, {ptr, i32, i32, ptr});
    SmallVector<llvm::Constant *> infos;
    for (auto [i, t] : llvm::enumerate(tensors)) {
      std::string prefix = ("kiln." + kind + "." + llvm::Twine(i)).str();
      auto *dimsInit = llvm::ConstantDataArray::get(ctx, ArrayRef(t.shape));
      auto *dims = new llvm::GlobalVariable(module, dimsInit->getType(), true,
                                            llvm::GlobalValue::PrivateLinkage,
                                            dimsInit, prefix + ".dims");
      infos.push_back(llvm::ConstantStruct::get(
          infoType, {string(t.name, prefix + ".name"),
                     llvm::ConstantInt::get(i32, t.dtype),
                     llvm::ConstantInt::get(i32, t.shape.size()), dims}));
    }
    auto *arrayType = llvm::ArrayType::get(infoType, infos.size());
    return new llvm::GlobalVariable(
        module, arrayType, true, llvm::GlobalValue::PrivateLinkage,
        llvm::ConstantArray::get(arrayType, infos), "kiln." + kind);
  }

  /// Gathers the weights kiln-lower-matmul packed into one section, and
  /// returns its bounds (the linker's __start_ and __stop_ symbols), or
  /// nulls without such weights: the range the runtime moves onto huge
  /// pages (kiln_model_info.streamed_weights_begin).
  std::pair<llvm::Constant *, llvm::Constant *> streamedWeights() {
    constexpr llvm::StringLiteral section = "kiln_weights";
    constexpr uint64_t hugePage = uint64_t(2) << 20;
    SmallVector<llvm::GlobalVariable *> packed;
    uint64_t bytes = 0;
    for (llvm::GlobalVariable &g : module.globals())
      if (g.isConstant() && g.hasInitializer() &&
          g.getName().ends_with(kiln::kPackedWeightSuffix)) {
        packed.push_back(&g);
        bytes += module.getDataLayout().getTypeAllocSize(g.getValueType());
      }
    auto *null = llvm::ConstantPointerNull::get(ptr);
    if (packed.empty() || signature.cuda)
      return {null, null};
    for (llvm::GlobalVariable *g : packed)
      g->setSection(section);
    // From two huge pages on, the section starts on a huge page boundary
    // (the linker keeps the globals in order), so none of it is left on
    // small pages; smaller models are not padded for it.
    if (bytes >= 2 * hugePage)
      packed.front()->setAlignment(llvm::Align(hugePage));
    // Weak: when LLVM folds every packed global away (a K = 1 product), the
    // section is empty and the bounds are null.
    auto bound = [&](llvm::StringRef prefix) {
      auto *symbol = new llvm::GlobalVariable(
          module, llvm::Type::getInt8Ty(ctx), true,
          llvm::GlobalValue::ExternalWeakLinkage, nullptr, prefix + section);
      symbol->setVisibility(llvm::GlobalValue::HiddenVisibility);
      return symbol;
    };
    return {bound("__start_"), bound("__stop_")};
  }

  /// const kiln_model_info *kiln_model_get_info(void).
  void buildInfo() {
    auto [weightsBegin, weightsEnd] = streamedWeights();
    auto *infoType = llvm::StructType::get(
        ctx, {i32, i32, i32, i32, ptr, ptr, i64, ptr, ptr, ptr, ptr, ptr});
    auto *info = new llvm::GlobalVariable(
        module, infoType, true, llvm::GlobalValue::PrivateLinkage,
        llvm::ConstantStruct::get(
            infoType,
            {llvm::ConstantInt::get(i32, KILN_ABI_VERSION),
             llvm::ConstantInt::get(i32, signature.inputs.size()),
             llvm::ConstantInt::get(i32, signature.outputs.size()),
             llvm::ConstantInt::get(i32, signature.cuda ? KILN_TARGET_CUDA
                                                        : KILN_TARGET_CPU),
             tensorInfos(signature.inputs, "inputs"),
             tensorInfos(signature.outputs, "outputs"),
             llvm::ConstantInt::get(i64, signature.arenaBytes),
             string(signature.toJSON(), "kiln.signature"), weightsBegin,
             weightsEnd, string(machine.getTargetCPU(), "kiln.cpu"),
             string(requiredCpuFeatures(machine), "kiln.cpu_features")}),
        "kiln.info");
    auto *getInfo = llvm::Function::Create(llvm::FunctionType::get(ptr, false),
                                           llvm::GlobalValue::ExternalLinkage,
                                           "kiln_model_get_info", module);
    llvm::IRBuilder<> b(llvm::BasicBlock::Create(ctx, "entry", getInfo));
    b.CreateRet(info);
  }

  /// int32_t kiln_model_run(void *const *in, void *const *out, void *arena,
  ///                        const void *rt)
  /// calls the graph function with the buffers as bare pointers (and, for a
  /// CUDA model, the launcher's weights buffer).
  void buildRun(llvm::Function *graph) {
    auto *run = llvm::Function::Create(
        llvm::FunctionType::get(i32, {ptr, ptr, ptr, ptr}, false),
        llvm::GlobalValue::ExternalLinkage, "kiln_model_run", module);
    llvm::IRBuilder<> b(llvm::BasicBlock::Create(ctx, "entry", run));
    SmallVector<llvm::Value *> args;
    auto load = [&](llvm::Value *array, size_t index) {
      llvm::Value *slot = b.CreateConstGEP1_64(ptr, array, index);
      args.push_back(b.CreateLoad(ptr, slot));
    };
    for (unsigned i : signature.graphInputs)
      load(run->getArg(0), i);
    for (unsigned i : signature.graphOutputs)
      load(run->getArg(1), i);
    // kiln-plan-memory and kiln-outline-parallel-loops appended the arena and
    // the parallel runtime, in that order; for CUDA kiln-externalize-constants
    // and kiln-lower-gpu-launches appended the weights and the launcher.
    args.push_back(run->getArg(2));
    if (signature.cuda)
      args.push_back(b.CreateLoad(
          ptr, b.CreateStructGEP(launcherType(), run->getArg(3), 2)));
    args.push_back(run->getArg(3));
    b.CreateCall(graph, args);
    b.CreateRet(llvm::ConstantInt::get(i32, 0));
  }

  /// Defines each kiln_parallel_N(rt, count, captures...) that
  /// kiln-outline-parallel-loops declared: the captures go into a struct on
  /// the stack, and rt->parallel_for(rt->pool, count, trampoline, &struct)
  /// runs kiln_task_N(begin, end, captures...) on the pool's threads.
  void buildParallelLaunchers() {
    constexpr llvm::StringLiteral prefix = "kiln_parallel_";
    SmallVector<llvm::Function *> launchers;
    for (llvm::Function &f : module)
      if (f.isDeclaration() && f.getName().starts_with(prefix))
        launchers.push_back(&f);
    auto *runtimeType = llvm::StructType::get(ctx, {ptr, ptr, i32, i32});
    auto *parallelForType = llvm::FunctionType::get(
        llvm::Type::getVoidTy(ctx), {ptr, i64, ptr, ptr}, false);
    for (llvm::Function *launcher : launchers) {
      llvm::StringRef id = launcher->getName().drop_front(prefix.size());
      llvm::Function *task = module.getFunction(("kiln_task_" + id).str());
      SmallVector<llvm::Type *> captureTypes;
      for (llvm::Argument &arg : llvm::drop_begin(launcher->args(), 2))
        captureTypes.push_back(arg.getType());
      auto *captures = llvm::StructType::get(ctx, captureTypes);

      auto *trampoline = llvm::Function::Create(
          llvm::FunctionType::get(llvm::Type::getVoidTy(ctx), {ptr, i64, i64},
                                  false),
          llvm::GlobalValue::InternalLinkage, "kiln.trampoline." + id, module);
      {
        llvm::IRBuilder<> b(llvm::BasicBlock::Create(ctx, "entry", trampoline));
        SmallVector<llvm::Value *> args = {trampoline->getArg(1),
                                           trampoline->getArg(2)};
        for (auto [i, type] : llvm::enumerate(captureTypes))
          args.push_back(b.CreateLoad(
              type, b.CreateStructGEP(captures, trampoline->getArg(0), i)));
        b.CreateCall(task, args);
        b.CreateRetVoid();
      }
      llvm::IRBuilder<> b(llvm::BasicBlock::Create(ctx, "entry", launcher));
      llvm::Value *frame = b.CreateAlloca(captures);
      for (auto [i, arg] :
           llvm::enumerate(llvm::drop_begin(launcher->args(), 2)))
        b.CreateStore(&arg, b.CreateStructGEP(captures, frame, i));
      llvm::Value *rt = launcher->getArg(0);
      llvm::Value *pool =
          b.CreateLoad(ptr, b.CreateStructGEP(runtimeType, rt, 0));
      llvm::Value *parallelFor =
          b.CreateLoad(ptr, b.CreateStructGEP(runtimeType, rt, 1));
      b.CreateCall(parallelForType, parallelFor,
                   {pool, launcher->getArg(1), trampoline, frame});
      b.CreateRetVoid();
      launcher->setLinkage(llvm::GlobalValue::InternalLinkage);
    }
  }

  /// kiln_cuda_launcher {handle, launch, weights, gemm}.
  llvm::StructType *launcherType() {
    return llvm::StructType::get(ctx, {ptr, ptr, ptr, ptr});
  }

  /// Defines each kiln_gemm_I(launcher, a, b, c[, bias]) that
  /// kiln-offload-gemms declared as launcher->gemm(handle, I, a, b, c, bias)
  /// (bias null when the GEMM has none).
  void buildCudaGemms() {
    constexpr llvm::StringLiteral prefix = kiln::kGemmCallPrefix;
    auto *gemmType =
        llvm::FunctionType::get(i32, {ptr, i32, ptr, ptr, ptr, ptr}, false);
    for (llvm::Function &f : module) {
      if (!f.isDeclaration() || !f.getName().starts_with(prefix))
        continue;
      unsigned index = 0;
      (void)f.getName().drop_front(prefix.size()).getAsInteger(10, index);
      llvm::IRBuilder<> b(llvm::BasicBlock::Create(ctx, "entry", &f));
      llvm::Value *rt = f.getArg(0);
      b.CreateCall(gemmType,
                   b.CreateLoad(ptr, b.CreateStructGEP(launcherType(), rt, 3)),
                   {b.CreateLoad(ptr, b.CreateStructGEP(launcherType(), rt, 0)),
                    llvm::ConstantInt::get(i32, index), f.getArg(1),
                    f.getArg(2), f.getArg(3),
                    f.arg_size() > 4 ? static_cast<llvm::Value *>(f.getArg(4))
                                     : llvm::ConstantPointerNull::get(ptr)});
      b.CreateRetVoid();
      f.setLinkage(llvm::GlobalValue::InternalLinkage);
    }
  }

  /// The kiln_cuda_gemm table.
  llvm::Constant *gemmTable(const DeviceImage &image) {
    auto *gemmType = llvm::StructType::get(ctx, {i64, i64, i64, i64, i64, i64,
                                                 i64, i64, i64, i64, i32, i32,
                                                 i32, i32, i32, i32, i32, i32});
    SmallVector<llvm::Constant *> gemms;
    for (const DeviceImage::Gemm &g : image.gemms) {
      SmallVector<llvm::Constant *> fields;
      for (int64_t v : {g.m, g.n, g.k, g.batch, g.lda, g.ldb, g.ldc, g.strideA,
                        g.strideB, g.strideC})
        fields.push_back(llvm::ConstantInt::get(i64, v));
      for (int32_t v : {g.transA, g.transB, g.inType, g.outType, g.accumulate,
                        g.tf32, g.epilogue, 0})
        fields.push_back(llvm::ConstantInt::get(i32, v));
      gemms.push_back(llvm::ConstantStruct::get(gemmType, fields));
    }
    auto *tableType = llvm::ArrayType::get(gemmType, gemms.size());
    return new llvm::GlobalVariable(
        module, tableType, true, llvm::GlobalValue::PrivateLinkage,
        llvm::ConstantArray::get(tableType, gemms), "kiln.gemms");
  }

  /// Defines each kiln_launch_I(launcher, gx, gy, gz, bx, by, bz, args...)
  /// that kiln-lower-gpu-launches declared: the arguments go into stack
  /// slots, and launcher->launch(handle, I, grid, block, params) gets an
  /// array of pointers to them (cuLaunchKernel's kernelParams).
  void buildCudaLaunchers() {
    constexpr llvm::StringLiteral prefix = "kiln_launch_";
    constexpr unsigned kDims = 6;
    SmallVector<llvm::Function *> launchers;
    for (llvm::Function &f : module)
      if (f.isDeclaration() && f.getName().starts_with(prefix))
        launchers.push_back(&f);
    auto *launchType = llvm::FunctionType::get(
        i32, {ptr, i32, i32, i32, i32, i32, i32, i32, ptr}, false);
    for (llvm::Function *launcher : launchers) {
      unsigned kernel = 0;
      (void)launcher->getName()
          .drop_front(prefix.size())
          .getAsInteger(10, kernel);
      llvm::IRBuilder<> b(llvm::BasicBlock::Create(ctx, "entry", launcher));
      unsigned numParams = launcher->arg_size() - 1 - kDims;
      auto *paramsType = llvm::ArrayType::get(ptr, std::max(numParams, 1u));
      llvm::Value *params = b.CreateAlloca(paramsType);
      for (auto [i, arg] :
           llvm::enumerate(llvm::drop_begin(launcher->args(), 1 + kDims))) {
        llvm::Value *slot = b.CreateAlloca(arg.getType());
        b.CreateStore(&arg, slot);
        b.CreateStore(slot, b.CreateConstGEP2_32(paramsType, params, 0, i));
      }
      llvm::Value *rt = launcher->getArg(0);
      SmallVector<llvm::Value *> args = {
          b.CreateLoad(ptr, b.CreateStructGEP(launcherType(), rt, 0)),
          llvm::ConstantInt::get(i32, kernel)};
      for (unsigned d = 0; d < kDims; ++d)
        args.push_back(b.CreateTrunc(launcher->getArg(1 + d), i32));
      args.push_back(params);
      b.CreateCall(launchType,
                   b.CreateLoad(ptr, b.CreateStructGEP(launcherType(), rt, 1)),
                   args);
      b.CreateRetVoid();
      launcher->setLinkage(llvm::GlobalValue::InternalLinkage);
    }
  }

  /// const kiln_cuda_image *kiln_model_get_cuda_image(void).
  void buildCudaImage(const DeviceImage &image) {
    auto *constantType = llvm::StructType::get(ctx, {ptr, i64, i64});
    SmallVector<llvm::Constant *> constants;
    for (const DeviceImage::Constant &c : image.constants) {
      llvm::GlobalVariable *data = module.getGlobalVariable(c.global, true);
      constants.push_back(llvm::ConstantStruct::get(
          constantType, {data ? static_cast<llvm::Constant *>(data)
                              : llvm::ConstantPointerNull::get(ptr),
                         llvm::ConstantInt::get(i64, c.offset),
                         llvm::ConstantInt::get(i64, c.bytes)}));
    }
    auto *constantsType = llvm::ArrayType::get(constantType, constants.size());
    auto *constantTable = new llvm::GlobalVariable(
        module, constantsType, true, llvm::GlobalValue::PrivateLinkage,
        llvm::ConstantArray::get(constantsType, constants), "kiln.constants");
    SmallVector<llvm::Constant *> names;
    for (auto [i, name] : llvm::enumerate(image.kernels))
      names.push_back(string(name, "kiln.kernel_name." + llvm::Twine(i)));
    auto *namesType = llvm::ArrayType::get(ptr, names.size());
    auto *nameTable = new llvm::GlobalVariable(
        module, namesType, true, llvm::GlobalValue::PrivateLinkage,
        llvm::ConstantArray::get(namesType, names), "kiln.kernel_names");
    // The cubin is an ELF file: a byte array aligned for the driver.
    llvm::Constant *cubin = llvm::ConstantPointerNull::get(ptr);
    if (!image.cubin.empty()) {
      auto *bytes = llvm::ConstantDataArray::get(
          ctx,
          llvm::ArrayRef(reinterpret_cast<const uint8_t *>(image.cubin.data()),
                         image.cubin.size()));
      auto *global = new llvm::GlobalVariable(module, bytes->getType(), true,
                                              llvm::GlobalValue::PrivateLinkage,
                                              bytes, "kiln.cubin");
      global->setAlignment(llvm::Align(64));
      cubin = global;
    }
    auto *imageType = llvm::StructType::get(
        ctx, {ptr, ptr, i64, ptr, i64, i32, i32, ptr, ptr, i64, i32, i32, ptr});
    auto *imageGlobal = new llvm::GlobalVariable(
        module, imageType, true, llvm::GlobalValue::PrivateLinkage,
        llvm::ConstantStruct::get(
            imageType,
            {string(image.arch, "kiln.arch"), string(image.ptx, "kiln.ptx"),
             llvm::ConstantInt::get(i64, image.ptx.size()), cubin,
             llvm::ConstantInt::get(i64, image.cubin.size()),
             llvm::ConstantInt::get(i32, image.kernels.size()),
             llvm::ConstantInt::get(i32, image.constants.size()), nameTable,
             constantTable, llvm::ConstantInt::get(i64, image.weightsBytes),
             llvm::ConstantInt::get(i32, image.gemms.size()),
             llvm::ConstantInt::get(i32, 0), gemmTable(image)}),
        "kiln.cuda_image");
    auto *getImage = llvm::Function::Create(
        llvm::FunctionType::get(ptr, false), llvm::GlobalValue::ExternalLinkage,
        "kiln_model_get_cuda_image", module);
    llvm::IRBuilder<> b(llvm::BasicBlock::Create(ctx, "entry", getImage));
    b.CreateRet(imageGlobal);
  }

  /// Nanoseconds of CLOCK_MONOTONIC, through libc's clock_gettime (vDSO).
  llvm::Function *buildClock() {
    auto *clockGetTime = llvm::Function::Create(
        llvm::FunctionType::get(i32, {i32, ptr}, false),
        llvm::GlobalValue::ExternalLinkage, "clock_gettime", module);
    auto *now = llvm::Function::Create(llvm::FunctionType::get(i64, false),
                                       llvm::GlobalValue::InternalLinkage,
                                       "kiln.profile.now", module);
    llvm::IRBuilder<> b(llvm::BasicBlock::Create(ctx, "entry", now));
    auto *timespec = llvm::StructType::get(ctx, {i64, i64});
    llvm::Value *ts = b.CreateAlloca(timespec);
    constexpr int kClockMonotonic = 1;
    b.CreateCall(clockGetTime,
                 {llvm::ConstantInt::get(i32, kClockMonotonic), ts});
    llvm::Value *sec = b.CreateLoad(i64, b.CreateStructGEP(timespec, ts, 0));
    llvm::Value *nsec = b.CreateLoad(i64, b.CreateStructGEP(timespec, ts, 1));
    b.CreateRet(b.CreateAdd(
        b.CreateMul(sec, llvm::ConstantInt::get(i64, 1000000000)), nsec));
    return now;
  }

  llvm::GlobalVariable *counters(size_t count, const llvm::Twine &name) {
    auto *type = llvm::ArrayType::get(i64, count);
    return new llvm::GlobalVariable(module, type, false,
                                    llvm::GlobalValue::InternalLinkage,
                                    llvm::Constant::getNullValue(type), name);
  }

  /// Defines kiln_profile_begin/end(i32 kernel) as timers into per-kernel
  /// counters, and exports kiln_model_get_profile.
  void buildProfile(llvm::Function *begin, llvm::Function *end) {
    size_t n = std::max<size_t>(signature.profiledKernels.size(), 1);
    llvm::GlobalVariable *start = counters(n, "kiln.profile.start");
    llvm::GlobalVariable *nanoseconds = counters(n, "kiln.profile.ns");
    llvm::GlobalVariable *calls = counters(n, "kiln.profile.calls");
    llvm::Function *now = buildClock();
    auto slot = [&](llvm::IRBuilder<> &b, llvm::GlobalVariable *array,
                    llvm::Value *index) {
      return b.CreateGEP(
          array->getValueType(), array,
          {llvm::ConstantInt::get(i64, 0), b.CreateZExt(index, i64)});
    };
    {
      llvm::IRBuilder<> b(llvm::BasicBlock::Create(ctx, "entry", begin));
      b.CreateStore(b.CreateCall(now), slot(b, start, begin->getArg(0)));
      b.CreateRetVoid();
    }
    {
      llvm::IRBuilder<> b(llvm::BasicBlock::Create(ctx, "entry", end));
      llvm::Value *index = end->getArg(0);
      llvm::Value *elapsed = b.CreateSub(
          b.CreateCall(now), b.CreateLoad(i64, slot(b, start, index)));
      llvm::Value *total = slot(b, nanoseconds, index);
      b.CreateStore(b.CreateAdd(b.CreateLoad(i64, total), elapsed), total);
      llvm::Value *count = slot(b, calls, index);
      b.CreateStore(
          b.CreateAdd(b.CreateLoad(i64, count), llvm::ConstantInt::get(i64, 1)),
          count);
      b.CreateRetVoid();
    }
    for (llvm::Function *hook : {begin, end})
      hook->setLinkage(llvm::GlobalValue::InternalLinkage);

    auto *f64 = llvm::Type::getDoubleTy(ctx);
    auto *kernelType = llvm::StructType::get(ctx, {ptr, ptr, f64, f64, f64});
    SmallVector<llvm::Constant *> kernels;
    for (auto [i, k] : llvm::enumerate(signature.profiledKernels)) {
      std::string prefix = ("kiln.kernel." + llvm::Twine(i)).str();
      kernels.push_back(llvm::ConstantStruct::get(
          kernelType,
          {string(k.kind, prefix + ".kind"), string(k.ops, prefix + ".ops"),
           llvm::ConstantFP::get(f64, k.flops),
           llvm::ConstantFP::get(f64, k.bytes),
           llvm::ConstantFP::get(f64, k.predictedSeconds)}));
    }
    auto *kernelsType = llvm::ArrayType::get(kernelType, kernels.size());
    auto *kernelTable = new llvm::GlobalVariable(
        module, kernelsType, true, llvm::GlobalValue::PrivateLinkage,
        llvm::ConstantArray::get(kernelsType, kernels), "kiln.kernels");
    auto *profileType = llvm::StructType::get(ctx, {i32, i32, ptr, ptr, ptr});
    auto *profile = new llvm::GlobalVariable(
        module, profileType, true, llvm::GlobalValue::PrivateLinkage,
        llvm::ConstantStruct::get(
            profileType,
            {llvm::ConstantInt::get(i32, signature.profiledKernels.size()),
             llvm::ConstantInt::get(i32, signature.rooflineThreads),
             kernelTable, nanoseconds, calls}),
        "kiln.profile");
    auto *getProfile = llvm::Function::Create(
        llvm::FunctionType::get(ptr, false), llvm::GlobalValue::ExternalLinkage,
        "kiln_model_get_profile", module);
    llvm::IRBuilder<> b(llvm::BasicBlock::Create(ctx, "entry", getProfile));
    b.CreateRet(profile);
  }

  llvm::Module &module;
  llvm::LLVMContext &ctx;
  const ModelSignature &signature;
  const llvm::TargetMachine &machine;
  llvm::PointerType *ptr;
  llvm::IntegerType *i32, *i64;
};

/// Defines compiler-rt's f32 -> bf16 rounding, `__truncsfbf2`, inside the
/// library (hidden), for targets without a bf16 instruction.
/// kiln-emulate-bf16 leaves no bf16 arithmetic for LLVM to promote, but bf16
/// values that live in registers (a select, a reduction's loop-carried
/// maximum) are still legalized as f32 and rounded back through this call,
/// which model.so would otherwise leave undefined. Round to nearest even; a
/// NaN becomes the quiet NaN 0x7fc0.
void defineBF16Rounding(llvm::Module &module) {
  llvm::LLVMContext &ctx = module.getContext();
  auto *f32 = llvm::Type::getFloatTy(ctx);
  auto *i32 = llvm::Type::getInt32Ty(ctx);
  auto *i16 = llvm::Type::getInt16Ty(ctx);
  auto *rounding = llvm::Function::Create(
      llvm::FunctionType::get(llvm::Type::getBFloatTy(ctx), {f32}, false),
      llvm::GlobalValue::ExternalLinkage, "__truncsfbf2", module);
  rounding->setVisibility(llvm::GlobalValue::HiddenVisibility);
  llvm::IRBuilder<> b(llvm::BasicBlock::Create(ctx, "entry", rounding));
  llvm::Value *value = rounding->getArg(0);
  llvm::Value *bits = b.CreateBitCast(value, i32);
  llvm::Value *lowestKept = b.CreateAnd(b.CreateLShr(bits, 16), 1);
  llvm::Value *rounded = b.CreateAdd(
      bits, b.CreateAdd(lowestKept, llvm::ConstantInt::get(i32, 0x7fff)));
  llvm::Value *high = b.CreateTrunc(b.CreateLShr(rounded, 16), i16);
  llvm::Value *result = b.CreateSelect(
      b.CreateFCmpUNO(value, value), llvm::ConstantInt::get(i16, 0x7fc0), high);
  b.CreateRet(b.CreateBitCast(result, rounding->getReturnType()));
}

void optimize(llvm::Module &module, llvm::TargetMachine &machine) {
  llvm::LoopAnalysisManager lam;
  llvm::FunctionAnalysisManager fam;
  llvm::CGSCCAnalysisManager cgam;
  llvm::ModuleAnalysisManager mam;
  // Small constant-trip loops (a 56-pixel row) would be fully unrolled into
  // scalar code before the loop vectorizer sees them; kiln's own kernels
  // are already shaped, so LLVM's unroller only gets in the way.
  llvm::PipelineTuningOptions tuning;
  tuning.LoopUnrolling = false;
  llvm::PassBuilder builder(&machine, tuning);
  registerInterleaveLongLoops(builder, codegenOptionsFor(machine).vectorLanes);
  builder.registerModuleAnalyses(mam);
  builder.registerCGSCCAnalyses(cgam);
  builder.registerFunctionAnalyses(fam);
  builder.registerLoopAnalyses(lam);
  builder.crossRegisterProxies(lam, fam, cgam, mam);
  builder.buildPerModuleDefaultPipeline(llvm::OptimizationLevel::O3)
      .run(module, mam);
}

} // namespace

LogicalResult recordMemoryPlan(ModuleOp module, ModelSignature &signature) {
  Operation *graph = SymbolTable::lookupSymbolIn(module, kGraphFunctionName);
  if (!graph)
    return module.emitError("the model function was not lowered");
  auto take = [&](StringRef name, uint64_t &into) {
    if (auto bytes = graph->getAttrOfType<IntegerAttr>(name))
      into = bytes.getInt();
    graph->removeAttr(name);
  };
  take("kiln.arena_bytes", signature.arenaBytes);
  take("kiln.intermediate_bytes", signature.intermediateBytes);
  take("kiln.stack_bytes", signature.stackBytes);
  return success();
}

FailureOr<std::unique_ptr<llvm::Module>>
translateAndOptimize(ModuleOp module, ModelSignature &signature,
                     llvm::TargetMachine &machine, llvm::LLVMContext &context) {
  if (failed(recordMemoryPlan(module, signature)))
    return failure();
  DialectRegistry registry;
  registerBuiltinDialectTranslation(registry);
  registerLLVMDialectTranslation(registry);
  module->getContext()->appendDialectRegistry(registry);
  std::unique_ptr<llvm::Module> llvmModule =
      translateModuleToLLVMIR(module, context, "kiln_model");
  if (!llvmModule)
    return module.emitError("translation to LLVM IR failed");
  llvmModule->setTargetTriple(machine.getTargetTriple());
  llvmModule->setDataLayout(machine.createDataLayout());
  if (llvm::Error error = ABIBuilder(*llvmModule, signature, machine).build())
    return module.emitError(llvm::toString(std::move(error)));
  if (!hasNativeBF16(machine))
    defineBF16Rounding(*llvmModule);
  bool hasAVX512 = machine.getMCSubtargetInfo()->checkFeatures("+avx512f");
  for (llvm::Function &f : *llvmModule)
    if (!f.isDeclaration()) {
      f.addFnAttr("target-cpu", machine.getTargetCPU());
      f.addFnAttr("target-features", machine.getTargetFeatureString());
      // LLVM's own vectorizer (reductions: softmax, layer norm; elementwise
      // loops) prefers 256-bit vectors on Intel's AVX-512 CPUs, for the
      // clock drop of 512-bit code on early ones; kiln's kernels use 512
      // bits throughout, so its loops should too: softmax over [1536, 128]
      // 113 -> 79 us, layer norm 22 -> 18 us, a GELU chain 2.03 -> 1.49 ms
      // (Emerald Rapids, 1 thread).
      if (hasAVX512)
        f.addFnAttr("prefer-vector-width", "512");
    }
  optimize(*llvmModule, machine);
  return llvmModule;
}

llvm::Error emitMachineCode(llvm::Module &module, llvm::TargetMachine &machine,
                            llvm::CodeGenFileType type,
                            llvm::raw_pwrite_stream &out) {
  llvm::legacy::PassManager pm;
  if (machine.addPassesToEmitFile(pm, out, nullptr, type))
    return llvm::createStringError("the target cannot emit this file type");
  pm.run(module);
  return llvm::Error::success();
}

llvm::Error linkSharedLibrary(llvm::StringRef objectPath,
                              llvm::StringRef outputPath) {
  std::string object = objectPath.str(), output = outputPath.str();
  // libm, libc and libgcc_s (half-precision conversion helpers) by soname,
  // so model.so needs no development files; --as-needed keeps only the
  // ones the code uses.
  std::vector<const char *> args = {"ld.lld",
                                    "-shared",
                                    "--no-undefined",
                                    "--as-needed",
                                    "-L/lib/x86_64-linux-gnu",
                                    "-L/usr/lib/x86_64-linux-gnu",
                                    "-o",
                                    output.c_str(),
                                    object.c_str(),
                                    "-l:libm.so.6",
                                    "-l:libc.so.6",
                                    "-l:libgcc_s.so.1"};
  std::string messages;
  llvm::raw_string_ostream stream(messages);
  lld::Result result =
      lld::lldMain(args, stream, stream, {{lld::Gnu, &lld::elf::link}});
  if (result.retCode != 0)
    return llvm::createStringError("linking " + output + " failed:\n" +
                                   messages);
  return llvm::Error::success();
}

} // namespace kiln::cpu
