//===- InterleaveLoops.h - interleave long loop bodies ----------*- C++ -*-===//

#ifndef KILN_TARGET_CPU_INTERLEAVELOOPS_H
#define KILN_TARGET_CPU_INTERLEAVELOOPS_H

namespace llvm {
class Module;
class PassBuilder;
} // namespace llvm

namespace kiln::cpu {

/// Scalar floating-point operations in a loop body (arithmetic, compares,
/// selects, casts and intrinsics with a float result; not the integer work
/// of an exp's exponent bits) from which the body is a long dependency chain
/// (a GELU, an exp) worth interleaving: softmax's exp and sum over a row
/// are 15 (94 -> 90 us over [1536, 128] on Zen 3), layer norm's 3 and 4.
constexpr unsigned kInterleaveMinOps = 12;
/// The interleave count asked for such loops (the most LLVM's x86 cost
/// model allows with AVX).
constexpr unsigned kInterleaveCount = 4;

/// Makes `builder`'s pipelines ask LLVM's loop vectorizer to interleave
/// `kInterleaveCount` vector iterations of every innermost scalar loop whose
/// body has at least kInterleaveMinOps floating-point operations and whose
/// loads and stores are consecutive or loop-invariant (fewer iterations when
/// a constant trip count holds fewer `lanes`-wide vectors), by
/// `llvm.loop.interleave.count` metadata added right before the vectorizer
/// runs (where the simplifications before it have made addresses affine).
/// `lanes`: f32 lanes of a vector.
void registerInterleaveLongLoops(llvm::PassBuilder &builder, unsigned lanes);

/// The same marking on `module` as it is (for tests: loops already in the
/// simplified form the vectorizer sees).
void interleaveLongLoops(llvm::Module &module, unsigned lanes);

} // namespace kiln::cpu

#endif // KILN_TARGET_CPU_INTERLEAVELOOPS_H
