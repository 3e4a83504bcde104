//===- Backend.cpp - kiln's x86-64 CPU backend ----------------------------===//

#include "kiln/Target/CPU/Backend.h"
#include "kiln/Conversion/Passes.h"
#include "kiln/runtime.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/SymbolTable.h"
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
  if (type.isF32())
    return KILN_DTYPE_F32;
  if (type.isF16())
    return KILN_DTYPE_F16;
  if (type.isBF16())
    return KILN_DTYPE_BF16;
  if (type.isF64())
    return KILN_DTYPE_F64;
  if (type.isInteger(1))
    return KILN_DTYPE_BOOL;
  if (auto integer = dyn_cast<IntegerType>(type)) {
    bool u = integer.isUnsigned();
    switch (integer.getWidth()) {
    case 8:
      return u ? KILN_DTYPE_U8 : KILN_DTYPE_I8;
    case 16:
      return u ? KILN_DTYPE_U16 : KILN_DTYPE_I16;
    case 32:
      return u ? KILN_DTYPE_U32 : KILN_DTYPE_I32;
    case 64:
      return u ? KILN_DTYPE_U64 : KILN_DTYPE_I64;
    default:
      break;
    }
  }
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
  out += "}";
  return out;
}

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

void buildLinalgPipeline(OpPassManager &pm) {
  pm.addPass(createConvertKilnToLinalg());
  pm.addPass(createCanonicalizerPass());
}

void buildLLVMDialectPipeline(OpPassManager &pm) {
  // Naive loops for now: tiling, packing and vectorization come with the
  // fusion and contraction work (issues 6 and 7).
  static constexpr llvm::StringLiteral pipeline =
      "one-shot-bufferize{bufferize-function-boundaries "
      "function-boundary-type-conversion=identity-layout-map},"
      "buffer-results-to-out-params{hoist-static-allocs "
      "modify-public-functions},"
      "func.func(buffer-deallocation-pipeline),"
      "func.func(convert-memref-copy-to-linalg),"
      "func.func(convert-linalg-to-loops),expand-strided-metadata,"
      "lower-affine,convert-scf-to-cf,math-expand-ops{ops=rsqrt},"
      "convert-math-to-funcs,convert-math-to-libm,convert-math-to-llvm,"
      "convert-arith-to-llvm,finalize-memref-to-llvm,"
      "convert-func-to-llvm{use-bare-ptr-memref-call-conv},"
      "convert-cf-to-llvm,reconcile-unrealized-casts";
  if (failed(parsePassPipeline(pipeline, pm, llvm::errs())))
    llvm::report_fatal_error("kiln: invalid built-in pass pipeline");
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
  ABIBuilder(llvm::Module &module, const ModelSignature &signature)
      : module(module), ctx(module.getContext()), signature(signature),
        ptr(llvm::PointerType::getUnqual(ctx)),
        i32(llvm::Type::getInt32Ty(ctx)), i64(llvm::Type::getInt64Ty(ctx)) {}

  llvm::Error build() {
    llvm::Function *graph = module.getFunction(kGraphFunctionName);
    if (!graph)
      return llvm::createStringError("the model function was not lowered");
    // Everything but the ABI entry points stays inside the library.
    for (llvm::Function &f : module)
      if (!f.isDeclaration())
        f.setLinkage(llvm::GlobalValue::InternalLinkage);
    for (llvm::GlobalVariable &g : module.globals())
      if (!g.isDeclaration())
        g.setLinkage(llvm::GlobalValue::InternalLinkage);
    // kiln_run guarantees distinct, non-overlapping buffers (runtime.h), so
    // loops need no run-time alias checks.
    for (unsigned i = 0; i < graph->arg_size(); ++i)
      graph->addParamAttr(i, llvm::Attribute::NoAlias);
    buildInfo();
    buildRun(graph);
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

  /// const kiln_model_info *kiln_model_get_info(void).
  void buildInfo() {
    auto *infoType =
        llvm::StructType::get(ctx, {i32, i32, i32, i32, ptr, ptr, i64, ptr});
    auto *info = new llvm::GlobalVariable(
        module, infoType, true, llvm::GlobalValue::PrivateLinkage,
        llvm::ConstantStruct::get(
            infoType, {llvm::ConstantInt::get(i32, KILN_ABI_VERSION),
                       llvm::ConstantInt::get(i32, signature.inputs.size()),
                       llvm::ConstantInt::get(i32, signature.outputs.size()),
                       llvm::ConstantInt::get(i32, 0),
                       tensorInfos(signature.inputs, "inputs"),
                       tensorInfos(signature.outputs, "outputs"),
                       llvm::ConstantInt::get(i64, 0),
                       string(signature.toJSON(), "kiln.signature")}),
        "kiln.info");
    auto *getInfo = llvm::Function::Create(llvm::FunctionType::get(ptr, false),
                                           llvm::GlobalValue::ExternalLinkage,
                                           "kiln_model_get_info", module);
    llvm::IRBuilder<> b(llvm::BasicBlock::Create(ctx, "entry", getInfo));
    b.CreateRet(info);
  }

  /// int32_t kiln_model_run(void *const *in, void *const *out, void *arena)
  /// calls the graph function with the buffers as bare pointers.
  void buildRun(llvm::Function *graph) {
    auto *run = llvm::Function::Create(
        llvm::FunctionType::get(i32, {ptr, ptr, ptr}, false),
        llvm::GlobalValue::ExternalLinkage, "kiln_model_run", module);
    llvm::IRBuilder<> b(llvm::BasicBlock::Create(ctx, "entry", run));
    SmallVector<llvm::Value *> args;
    auto load = [&](llvm::Value *array, size_t index) {
      llvm::Value *slot = b.CreateConstGEP1_64(ptr, array, index);
      args.push_back(b.CreateLoad(ptr, slot));
    };
    for (size_t i = 0; i < signature.inputs.size(); ++i)
      load(run->getArg(0), i);
    for (size_t i = 0; i < signature.outputs.size(); ++i)
      load(run->getArg(1), i);
    b.CreateCall(graph, args);
    b.CreateRet(llvm::ConstantInt::get(i32, 0));
  }

  llvm::Module &module;
  llvm::LLVMContext &ctx;
  const ModelSignature &signature;
  llvm::PointerType *ptr;
  llvm::IntegerType *i32, *i64;
};

void optimize(llvm::Module &module, llvm::TargetMachine &machine) {
  llvm::LoopAnalysisManager lam;
  llvm::FunctionAnalysisManager fam;
  llvm::CGSCCAnalysisManager cgam;
  llvm::ModuleAnalysisManager mam;
  llvm::PassBuilder builder(&machine);
  builder.registerModuleAnalyses(mam);
  builder.registerCGSCCAnalyses(cgam);
  builder.registerFunctionAnalyses(fam);
  builder.registerLoopAnalyses(lam);
  builder.crossRegisterProxies(lam, fam, cgam, mam);
  builder.buildPerModuleDefaultPipeline(llvm::OptimizationLevel::O3)
      .run(module, mam);
}

} // namespace

FailureOr<std::unique_ptr<llvm::Module>>
translateAndOptimize(ModuleOp module, const ModelSignature &signature,
                     llvm::TargetMachine &machine, llvm::LLVMContext &context) {
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
  if (llvm::Error error = ABIBuilder(*llvmModule, signature).build())
    return module.emitError(llvm::toString(std::move(error)));
  for (llvm::Function &f : *llvmModule)
    if (!f.isDeclaration()) {
      f.addFnAttr("target-cpu", machine.getTargetCPU());
      f.addFnAttr("target-features", machine.getTargetFeatureString());
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
