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

#include "llvm/ADT/bit.h"
#include "llvm/Analysis/AssumptionCache.h"
#include "llvm/Analysis/LoopAccessAnalysis.h"
#include "llvm/Analysis/LoopInfo.h"
#include "llvm/Analysis/ScalarEvolution.h"
#include "llvm/Analysis/TargetLibraryInfo.h"
#include "llvm/IR/Dominators.h"
#include "llvm/IR/Instructions.h"
#include "llvm/IR/IntrinsicInst.h"
#include "llvm/IR/Module.h"
#include "llvm/Passes/PassBuilder.h"
#include "llvm/Transforms/Utils/LoopUtils.h"

#include <algorithm>

namespace kiln::cpu {
namespace {

/// Whether `inst` is scalar floating-point work (what a vector iteration
/// repeats lane by lane).
bool isScalarFloatOp(const llvm::Instruction &inst) {
  llvm::Type *type = inst.getType();
  if (auto *compare = llvm::dyn_cast<llvm::FCmpInst>(&inst))
    type = compare->getOperand(0)->getType();
  if (!type->isFloatingPointTy())
    return false;
  return llvm::isa<llvm::BinaryOperator, llvm::UnaryOperator, llvm::FCmpInst,
                   llvm::SelectInst, llvm::CastInst, llvm::IntrinsicInst>(inst);
}

/// Whether the loop vectorizer will widen `loop` rather than keep it scalar:
/// no vector code of its own (kiln's kernels), and every load and store
/// either loop-invariant or consecutive. An interleave count forces the
/// unrolling even of a loop kept scalar (a gather's, a resize's), which
/// the pipeline's unroller is kept from doing for good reasons.
bool widens(llvm::Loop &loop, llvm::ScalarEvolution &evolution,
            const llvm::DominatorTree &dominators) {
  llvm::PredicatedScalarEvolution predicated(evolution, loop);
  for (llvm::BasicBlock *block : loop.blocks())
    for (llvm::Instruction &inst : *block) {
      if (inst.getType()->isVectorTy())
        return false;
      llvm::Value *pointer = llvm::getLoadStorePointerOperand(&inst);
      if (!pointer ||
          evolution.isLoopInvariant(evolution.getSCEV(pointer), &loop))
        continue;
      // In elements of the accessed type, as the vectorizer reckons it.
      std::optional<int64_t> stride = llvm::getPtrStride(
          predicated, llvm::getLoadStoreType(&inst), pointer, &loop, dominators,
          llvm::DenseMap<llvm::Value *, const llvm::SCEV *>(),
          /*Assume=*/true,
          /*ShouldCheckWrap=*/false);
      if (stride != 1)
        return false;
    }
  return true;
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

void markLongLoops(llvm::LoopInfo &loops, llvm::ScalarEvolution &evolution,
                   const llvm::DominatorTree &dominators, unsigned lanes) {
  for (llvm::Loop *loop : loops.getLoopsInPreorder()) {
    if (!loop->isInnermost() || floatOps(*loop) < kInterleaveMinOps ||
        !widens(*loop, evolution, dominators))
      continue;
    unsigned count =
        interleaveCount(evolution.getSmallConstantTripCount(loop), lanes);
    if (count > 1)
      llvm::addStringMetadataToLoop(loop, "llvm.loop.interleave.count", count);
  }
}

/// Marks the loops of the function it runs on, right before the loop
/// vectorizer (after the simplifications that make addresses affine).
struct InterleaveLongLoopsPass
    : public llvm::PassInfoMixin<InterleaveLongLoopsPass> {
  explicit InterleaveLongLoopsPass(unsigned lanes) : lanes(lanes) {}

  llvm::PreservedAnalyses run(llvm::Function &function,
                              llvm::FunctionAnalysisManager &analyses) {
    markLongLoops(analyses.getResult<llvm::LoopAnalysis>(function),
                  analyses.getResult<llvm::ScalarEvolutionAnalysis>(function),
                  analyses.getResult<llvm::DominatorTreeAnalysis>(function),
                  lanes);
    // Only metadata changed.
    return llvm::PreservedAnalyses::all();
  }

  unsigned lanes;
};

} // namespace

void registerInterleaveLongLoops(llvm::PassBuilder &builder, unsigned lanes) {
  builder.registerVectorizerStartEPCallback(
      [lanes](llvm::FunctionPassManager &passes, llvm::OptimizationLevel) {
        passes.addPass(InterleaveLongLoopsPass(lanes));
      });
}

void interleaveLongLoops(llvm::Module &module, unsigned lanes) {
  llvm::TargetLibraryInfoImpl libraryInfo(module.getTargetTriple());
  for (llvm::Function &function : module) {
    if (function.isDeclaration())
      continue;
    llvm::DominatorTree dominators(function);
    llvm::LoopInfo loops(dominators);
    llvm::TargetLibraryInfo library(libraryInfo, &function);
    llvm::AssumptionCache assumptions(function);
    llvm::ScalarEvolution evolution(function, library, assumptions, dominators,
                                    loops);
    markLongLoops(loops, evolution, dominators, lanes);
  }
}

} // namespace kiln::cpu
