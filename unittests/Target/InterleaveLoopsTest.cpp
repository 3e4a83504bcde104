//===- InterleaveLoopsTest.cpp - kiln::cpu::interleaveLongLoops -----------===//

#include "kiln/Target/CPU/InterleaveLoops.h"

#include "llvm/AsmParser/Parser.h"
#include "llvm/IR/Constants.h"
#include "llvm/IR/Instructions.h"
#include "llvm/IR/LLVMContext.h"
#include "llvm/IR/Metadata.h"
#include "llvm/IR/Module.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/raw_ostream.h"

#include <gtest/gtest.h>

#include <tuple>

namespace {

/// How loopFunction's loop is shaped.
struct LoopShape {
  unsigned trips = 0; // 0: %n
  unsigned ops = kiln::cpu::kInterleaveMinOps;
  bool vector = false;    // <8 x float> instead of float
  unsigned stride = 1;    // elements between iterations' accesses
  bool mlirStyle = false; // latch `icmp slt` with a metadata node already
};

/// `define void @NAME(ptr %p, i64 %n)`: a loop over p[0, trips) (to %n
/// when trips is 0) whose body chains `ops` scalar multiplies and adds on
/// p[i * stride].
std::string loopFunction(const std::string &name, LoopShape shape) {
  std::string type = shape.vector ? "<8 x float>" : "float";
  std::string bound = shape.trips ? std::to_string(shape.trips) : "%n";
  std::string text;
  llvm::raw_string_ostream os(text);
  os << "define void @" << name << "(ptr %p, i64 %n) {\n"
     << "entry:\n  br label %loop\n"
     << "loop:\n  %i = phi i64 [ 0, %entry ], [ %next, %loop ]\n"
     << "  %e = mul i64 %i, " << shape.stride << "\n"
     << "  %at = getelementptr " << type << ", ptr %p, i64 %e\n"
     << "  %v0 = load " << type << ", ptr %at\n";
  for (unsigned k = 0; k < shape.ops; k += 2) {
    os << "  %m" << k << " = fmul " << type << " %v" << k << ", %v" << k
       << "\n";
    os << "  %v" << k + 2 << " = fadd " << type << " %m" << k << ", %v0\n";
  }
  os << "  store " << type << " %v" << shape.ops << ", ptr %at\n"
     << "  %next = add i64 %i, 1\n";
  if (shape.mlirStyle)
    os << "  %more = icmp slt i64 %next, " << bound << "\n"
       << "  br i1 %more, label %loop, label %exit, !llvm.loop !0\n";
  else
    os << "  %done = icmp eq i64 %next, " << bound << "\n"
       << "  br i1 %done, label %exit, label %loop\n";
  os << "exit:\n  ret void\n}\n";
  return text;
}

/// `function`'s loop metadata, printed.
std::string loopMetadataText(llvm::Module &module, llvm::StringRef function) {
  std::string text;
  llvm::raw_string_ostream os(text);
  for (llvm::BasicBlock &block : *module.getFunction(function))
    if (llvm::MDNode *loop =
            block.getTerminator()->getMetadata(llvm::LLVMContext::MD_loop))
      for (const llvm::MDOperand &operand : loop->operands())
        if (operand && operand.get() != loop)
          operand->print(os, &module);
  return text;
}

/// The llvm.loop.interleave.count of `function`'s loop, 0 if none.
int64_t interleaveCountOf(llvm::Module &module, llvm::StringRef function) {
  for (llvm::BasicBlock &block : *module.getFunction(function))
    if (llvm::MDNode *loop =
            block.getTerminator()->getMetadata(llvm::LLVMContext::MD_loop))
      for (const llvm::MDOperand &operand : loop->operands()) {
        auto *entry = llvm::dyn_cast<llvm::MDNode>(operand);
        if (!entry || entry->getNumOperands() != 2)
          continue;
        auto *key = llvm::dyn_cast<llvm::MDString>(entry->getOperand(0));
        if (key && key->getString() == "llvm.loop.interleave.count")
          return llvm::mdconst::extract<llvm::ConstantInt>(entry->getOperand(1))
              ->getSExtValue();
      }
  return 0;
}

/// The loops of `functions` ({name, shape}), marked for vectors of `lanes`.
std::unique_ptr<llvm::Module>
markedModule(llvm::LLVMContext &context,
             llvm::ArrayRef<std::pair<std::string, LoopShape>> functions,
             unsigned lanes) {
  std::string text;
  for (const auto &[name, shape] : functions)
    text += loopFunction(name, shape);
  text += "!0 = distinct !{!0, !1}\n!1 = !{!\"llvm.loop.mustprogress\"}\n";
  llvm::SMDiagnostic error;
  std::unique_ptr<llvm::Module> module =
      llvm::parseAssemblyString(text, error, context);
  EXPECT_TRUE(module) << error.getMessage().str();
  if (module)
    kiln::cpu::interleaveLongLoops(*module, lanes);
  return module;
}

TEST(InterleaveLoops, LongConsecutiveScalarLoopsOnly) {
  using kiln::cpu::kInterleaveCount;
  using kiln::cpu::kInterleaveMinOps;
  llvm::LLVMContext context;
  std::unique_ptr<llvm::Module> module = markedModule(
      context,
      {{"unknown_trips", {}},
       {"many_trips", {4096}},
       {"short_body", {4096, kInterleaveMinOps - 2}},
       {"vector_code", {4096, kInterleaveMinOps, /*vector=*/true}},
       {"strided", {4096, kInterleaveMinOps, false, /*stride=*/2}},
       {"mlir_style", {4096, kInterleaveMinOps, false, 1, /*mlirStyle=*/true}}},
      /*lanes=*/8);
  ASSERT_TRUE(module);
  EXPECT_EQ(interleaveCountOf(*module, "unknown_trips"), kInterleaveCount);
  EXPECT_EQ(interleaveCountOf(*module, "many_trips"), kInterleaveCount);
  EXPECT_EQ(interleaveCountOf(*module, "short_body"), 0);
  // kiln's own vector kernels, and loops the vectorizer keeps scalar (an
  // interleave count would unroll them), are left alone.
  EXPECT_EQ(interleaveCountOf(*module, "vector_code"), 0);
  EXPECT_EQ(interleaveCountOf(*module, "strided"), 0);
  // A loop with metadata of its own keeps it and gets the count.
  EXPECT_EQ(interleaveCountOf(*module, "mlir_style"), kInterleaveCount);
  EXPECT_TRUE(llvm::StringRef(loopMetadataText(*module, "mlir_style"))
                  .contains("llvm.loop.mustprogress"));
}

TEST(InterleaveLoops, CountFromTripCount) {
  // As many vectors as the loop has, in powers of two up to
  // kInterleaveCount; none below two vectors.
  llvm::LLVMContext context;
  for (auto [lanes, trips, count] :
       std::initializer_list<std::tuple<unsigned, unsigned, int64_t>>{
           {8, 12, 0},
           {8, 16, 2},
           {8, 24, 2},
           {8, 40, 4},
           {16, 24, 0},
           {16, 48, 2},
           {16, 64, 4},
           {4, 16, 4}}) {
    std::unique_ptr<llvm::Module> module =
        markedModule(context, {{"loop", {trips}}}, lanes);
    ASSERT_TRUE(module);
    EXPECT_EQ(interleaveCountOf(*module, "loop"), count)
        << trips << " trips of " << lanes << " lanes";
  }
}

} // namespace
