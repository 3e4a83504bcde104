//===- InterleaveLoops.cpp - interleave long loop bodies ------------------===//
//
// LLVM's loop vectorizer interleaves (unrolls, with the copies' instructions
// interleaved) only loops it deems small: a long body is assumed to have
// enough parallelism of its own. A transcendental's body is one long chain
// of dependent operations instead (a GELU: a polynomial, an exp, selects;
// ~35 vector operations, ~60 cycles of latency per 8 outputs), and the
// out-of-order core cannot look far enough ahead to overlap more than about
// two iterations: on Zen 3 such a loop ran at 26 cycles per vector against
// ~11 of throughput. Interleaved, each stretch of the body holds independent
// operations of 4 iterations.
//
//===----------------------------------------------------------------------===//

#include "kiln/Target/CPU/InterleaveLoops.h"

#include "llvm/Analysis/AssumptionCache.h"
#include "llvm/Analysis/LoopInfo.h"
#include "llvm/Analysis/ScalarEvolution.h"
#include "llvm/Analysis/TargetLibraryInfo.h"
#include "llvm/IR/Dominators.h"
#include "llvm/IR/Instructions.h"
#include "llvm/IR/IntrinsicInst.h"
#include "llvm/Transforms/Utils/LoopUtils.h"

namespace kiln::cpu {
namespace {

/// Whether `inst` is scalar floating-point arithmetic (the work a vector
/// iteration repeats lane by lane).
bool isScalarFloatOp(const llvm::Instruction &inst) {
  llvm::Type *type = inst.getType();
  if (auto *compare = llvm::dyn_cast<llvm::FCmpInst>(&inst))
    type = compare->getOperand(0)->getType();
  if (!type->isFloatingPointTy())
    return false;
  if (llvm::isa<llvm::BinaryOperator, llvm::UnaryOperator, llvm::FCmpInst,
                llvm::SelectInst, llvm::CastInst>(inst))
    return true;
  auto *intrinsic = llvm::dyn_cast<llvm::IntrinsicInst>(&inst);
  return intrinsic != nullptr;
}

/// Whether any instruction of `loop` is already a vector operation (kiln's
/// own kernels): the loop vectorizer leaves those loops alone.
bool hasVectorCode(const llvm::Loop &loop) {
  for (llvm::BasicBlock *block : loop.blocks())
    for (llvm::Instruction &inst : *block)
      if (inst.getType()->isVectorTy())
        return true;
  return false;
}

unsigned floatOps(const llvm::Loop &loop) {
  unsigned count = 0;
  for (llvm::BasicBlock *block : loop.blocks())
    for (llvm::Instruction &inst : *block)
      count += isScalarFloatOp(inst);
  return count;
}

/// The interleave count for a loop of `tripCount` iterations (0: unknown):
/// kInterleaveCount, or as many vectors as the loop has, in whole powers of
/// two; 1 when it has fewer than two.
unsigned interleaveCount(unsigned tripCount, unsigned lanes) {
  if (tripCount == 0)
    return kInterleaveCount;
  unsigned vectors = tripCount / lanes;
  if (vectors < 2)
    return 1;
  return std::min(kInterleaveCount, llvm::bit_floor(vectors));
}

void interleaveLongLoops(llvm::Function &function,
                         const llvm::TargetLibraryInfoImpl &libraryInfo,
                         unsigned lanes) {
  llvm::DominatorTree dominators(function);
  llvm::LoopInfo loops(dominators);
  llvm::TargetLibraryInfo library(libraryInfo, &function);
  llvm::AssumptionCache assumptions(function);
  llvm::ScalarEvolution evolution(function, library, assumptions, dominators,
                                  loops);
  for (llvm::Loop *loop : loops.getLoopsInPreorder()) {
    if (!loop->isInnermost() || hasVectorCode(*loop) ||
        floatOps(*loop) < kInterleaveMinOps)
      continue;
    unsigned count =
        interleaveCount(evolution.getSmallConstantTripCount(loop), lanes);
    if (count > 1)
      llvm::addStringMetadataToLoop(loop, "llvm.loop.interleave.count", count);
  }
}

} // namespace

void interleaveLongLoops(llvm::Module &module, unsigned lanes) {
  llvm::TargetLibraryInfoImpl libraryInfo(module.getTargetTriple());
  for (llvm::Function &function : module)
    if (!function.isDeclaration())
      interleaveLongLoops(function, libraryInfo, lanes);
}

} // namespace kiln::cpu
