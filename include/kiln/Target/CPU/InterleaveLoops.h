//===- InterleaveLoops.h - interleave long loop bodies ----------*- C++ -*-===//

#ifndef KILN_TARGET_CPU_INTERLEAVELOOPS_H
#define KILN_TARGET_CPU_INTERLEAVELOOPS_H

#include "llvm/IR/Module.h"

namespace kiln::cpu {

/// Scalar arithmetic instructions in a loop body from which the body is a
/// long dependency chain (a GELU, an exp) worth interleaving.
constexpr unsigned kInterleaveMinOps = 16;
/// The interleave count asked for such loops (LLVM's largest for x86).
constexpr unsigned kInterleaveCount = 4;

/// Asks LLVM's loop vectorizer to interleave `kInterleaveCount` vector
/// iterations of every innermost scalar loop of `module` whose body has at
/// least kInterleaveMinOps floating-point operations (fewer when its trip
/// count, a constant, leaves fewer whole vector iterations), by
/// `llvm.loop.interleave.count` metadata. `lanes`: f32 lanes of a vector.
void interleaveLongLoops(llvm::Module &module, unsigned lanes);

} // namespace kiln::cpu

#endif // KILN_TARGET_CPU_INTERLEAVELOOPS_H
