//===- InterleaveLoopsTest.cpp - kiln::cpu::interleaveLongLoops -----------===//

#include "kiln/Target/CPU/InterleaveLoops.h"

#include "llvm/AsmParser/Parser.h"
#include "llvm/IR/Constants.h"
#include "llvm/IR/Instructions.h"
#include "llvm/IR/LLVMContext.h"
#include "llvm/IR/Metadata.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/raw_ostream.h"

#include <gtest/gtest.h>

namespace {

/// `define void @NAME(ptr %p, i64 %n)`: a loop over p[0, TRIPS) (or to %n
/// when TRIPS is 0) whose body chains `ops` scalar multiply-adds on p[i]
/// (or, with `vector`, the same on <8 x float>).
std::string loopFunction(const std::string &name, unsigned trips, unsigned ops,
                         bool vector = false) {
  std::string type = vector ? "<8 x float>" : "float";
  std::string bound = trips ? std::to_string(trips) : "%n";
  std::string text;
  llvm::raw_string_ostream os(text);
  os << "define void @" << name << "(ptr %p, i64 %n) {\n"
     << "entry:\n  br label %loop\n"
     << "loop:\n  %i = phi i64 [ 0, %entry ], [ %next, %loop ]\n"
     << "  %at = getelementptr " << type << ", ptr %p, i64 %i\n"
     << "  %v0 = load " << type << ", ptr %at\n";
  for (unsigned k = 0; k < ops; k += 2) {
    os << "  %m" << k << " = fmul " << type << " %v" << k << ", %v" << k
       << "\n";
    os << "  %v" << k + 2 << " = fadd " << type << " %m" << k << ", %v0\n";
  }
  os << "  store " << type << " %v" << ops << ", ptr %at\n"
     << "  %next = add i64 %i, 1\n"
     << "  %done = icmp eq i64 %next, " << bound << "\n"
     << "  br i1 %done, label %exit, label %loop\n"
     << "exit:\n  ret void\n}\n";
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

TEST(InterleaveLoops, LongScalarLoopsOnly) {
  using kiln::cpu::kInterleaveMinOps;
  std::string text = loopFunction("unknown_trips", 0, kInterleaveMinOps) +
                     loopFunction("many_trips", 4096, kInterleaveMinOps) +
                     loopFunction("three_vectors", 24, kInterleaveMinOps) +
                     loopFunction("one_vector", 12, kInterleaveMinOps) +
                     loopFunction("short_body", 4096, kInterleaveMinOps - 2) +
                     loopFunction("vector_code", 4096, kInterleaveMinOps,
                                  /*vector=*/true);
  llvm::LLVMContext context;
  llvm::SMDiagnostic error;
  std::unique_ptr<llvm::Module> module =
      llvm::parseAssemblyString(text, error, context);
  ASSERT_TRUE(module) << error.getMessage().str();
  kiln::cpu::interleaveLongLoops(*module, /*lanes=*/8);
  EXPECT_EQ(interleaveCountOf(*module, "unknown_trips"),
            kiln::cpu::kInterleaveCount);
  EXPECT_EQ(interleaveCountOf(*module, "many_trips"),
            kiln::cpu::kInterleaveCount);
  // 3 vectors of 8: 2 interleaved, then one.
  EXPECT_EQ(interleaveCountOf(*module, "three_vectors"), 2);
  EXPECT_EQ(interleaveCountOf(*module, "one_vector"), 0);
  EXPECT_EQ(interleaveCountOf(*module, "short_body"), 0);
  EXPECT_EQ(interleaveCountOf(*module, "vector_code"), 0);
}

} // namespace
