//===- KernelEmitters.h - shared by the passes that emit vector kernels ---===//
//
// kiln-lower-matmul, kiln-lower-window-ops and kiln-vectorize-row-copies
// replace linalg ops on buffers with their own vector loops;
// kiln-outline-parallel-loops then hands their parallel loops to the thread
// pool. kiln::Epilogue finds the elementwise op after such a kernel.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_TRANSFORMS_KERNELEMITTERS_H
#define KILN_TRANSFORMS_KERNELEMITTERS_H

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Value.h"
#include "mlir/Interfaces/ViewLikeInterface.h"

namespace kiln {

/// The attribute an emitted scf.parallel states its work with (innermost
/// iterations), for kiln-outline-parallel-loops, where its inner loops'
/// bounds cannot tell (dynamic bounds, or unrolled vector code).
constexpr llvm::StringLiteral kWorkAttrName = "kiln.work";

/// The attribute kiln-lower-matmul puts on a matmul's scf.parallel over work
/// items when they are numbered group-major over C's columns: [F, P, N, M],
/// items [g * F, (g + 1) * F) write C's M rows at columns [g * P, min((g +
/// 1) * P, N)), C is [M, N] with no batch, and the loop is the matmul's
/// only one (no per-call packing, no slices of k). kiln-lower-window-ops
/// runs such a loop band by band ahead of a window op that reads C as its
/// input planes (C's rows the channels, its columns the pixels).
constexpr llvm::StringLiteral kColumnGroupsAttrName = "kiln.column_groups";

/// The attribute convert-kiln-to-linalg tags the transforms of a Winograd
/// convolution with (WinogradConv.cpp), naming which one, for
/// kiln-lower-winograd-transforms.
constexpr llvm::StringLiteral kWinogradAttrName = "kiln.winograd";
constexpr llvm::StringLiteral kWinogradInput = "input";
constexpr llvm::StringLiteral kWinogradOutput = "output";

/// The unit attribute convert-kiln-to-linalg puts on a math.exp whose
/// operand is never positive (softmax's x - max; GELU's log tail, where it
/// is used), for kiln-approximate-math: the result is at most 1, so the
/// expansion leaves out the clamp and the select that make overflow inf.
constexpr llvm::StringLiteral kNonPositiveOperandAttrName =
    "kiln.nonpositive_operand";

/// Partial vectors (the first `count` lanes of a `type` access, the rest
/// `passthru` when loading). AVX-512 masks lanes natively, but AVX2's masked
/// loads and stores (vmaskmov) are microcoded on AMD cores: with 8 lanes or
/// fewer, a partial vector is a narrower plain access (7 lanes: 4 + 2 + 1).
inline mlir::Value loadPrefix(mlir::OpBuilder &b, mlir::Location loc,
                              mlir::VectorType type, mlir::Value buffer,
                              mlir::ValueRange at, int64_t count,
                              mlir::Value passthru) {
  int64_t lanes = type.getNumElements();
  if (lanes <= 8) {
    mlir::Value part = mlir::vector::LoadOp::create(
        b, loc, mlir::VectorType::get({count}, type.getElementType()), buffer,
        at);
    return mlir::vector::InsertStridedSliceOp::create(
        b, loc, part, passthru, llvm::ArrayRef<int64_t>{0},
        llvm::ArrayRef<int64_t>{1});
  }
  mlir::Value mask = mlir::vector::ConstantMaskOp::create(
      b, loc, mlir::VectorType::get({lanes}, b.getI1Type()),
      llvm::ArrayRef<int64_t>{count});
  return mlir::vector::MaskedLoadOp::create(b, loc, type, buffer, at, mask,
                                            passthru);
}
inline void storePrefix(mlir::OpBuilder &b, mlir::Location loc,
                        mlir::Value values, mlir::Value buffer,
                        mlir::ValueRange at, int64_t count) {
  auto type = mlir::cast<mlir::VectorType>(values.getType());
  int64_t lanes = type.getNumElements();
  if (lanes <= 8) {
    mlir::Value part = mlir::vector::ExtractStridedSliceOp::create(
        b, loc, values, llvm::ArrayRef<int64_t>{0},
        llvm::ArrayRef<int64_t>{count}, llvm::ArrayRef<int64_t>{1});
    mlir::vector::StoreOp::create(b, loc, part, buffer, at);
    return;
  }
  mlir::Value mask = mlir::vector::ConstantMaskOp::create(
      b, loc, mlir::VectorType::get({lanes}, b.getI1Type()),
      llvm::ArrayRef<int64_t>{count});
  mlir::vector::MaskedStoreOp::create(b, loc, buffer, at, mask, values);
}

/// Transposes `vectors` (a power of 2 of them, at most their lanes) in
/// place as a block of `vectors` rows x lanes columns: stage k swaps bit k
/// of the vector index with bit k of the lane index, by two 2-source
/// shuffles per pair of vectors. Afterwards element (r, c) is in vector
/// c mod n, lane (c / n) * n + r, for n vectors: each column's n values
/// are consecutive lanes (with n = lanes, column c is vector c).
inline void transposeBlock(mlir::OpBuilder &b, mlir::Location loc,
                           llvm::MutableArrayRef<mlir::Value> vectors) {
  int64_t n = vectors.size();
  int64_t lanes =
      mlir::cast<mlir::VectorType>(vectors.front().getType()).getNumElements();
  assert(llvm::isPowerOf2_64(n) && n <= lanes && "a power of 2 of vectors");
  for (int64_t step = 1; step < n; step *= 2) {
    llvm::SmallVector<int64_t> low, high;
    for (int64_t l = 0; l < lanes; ++l) {
      bool upper = l & step;
      low.push_back(upper ? lanes + l - step : l);
      high.push_back(upper ? lanes + l : l + step);
    }
    for (int64_t a = 0; a < n; ++a) {
      if (a & step)
        continue;
      mlir::Value x = vectors[a], y = vectors[a + step];
      vectors[a] = mlir::vector::ShuffleOp::create(b, loc, x, y, low);
      vectors[a + step] = mlir::vector::ShuffleOp::create(b, loc, x, y, high);
    }
  }
}

/// Whether `value` is a statically shaped, dense (identity layout) f32
/// buffer: what the emitted kernels index directly.
inline bool isDenseF32Buffer(mlir::Value value) {
  auto type = mlir::dyn_cast<mlir::MemRefType>(value.getType());
  return type && type.hasStaticShape() && type.getLayout().isIdentity() &&
         type.getElementType().isF32();
}

/// With kiln-compile --profile (timers) or --report (markers that
/// kiln-record-fused-kernels reads and erases), kiln-inline-kernels brackets
/// each kernel's ops with calls to these, the kernel's index their i32
/// argument.
constexpr llvm::StringLiteral kProfileBegin = "kiln_profile_begin";
constexpr llvm::StringLiteral kProfileEnd = "kiln_profile_end";

/// The module attribute kiln-record-fused-kernels leaves: the indices of the
/// kernels whose kiln_profile_begin call lowering kept (array<i32>).
constexpr llvm::StringLiteral kSeparateKernelsAttrName =
    "kiln.separate_kernels";

/// Whether `op` is a call to the function named `callee`.
inline bool isCallTo(mlir::Operation *op, llvm::StringRef callee) {
  auto call = mlir::dyn_cast<mlir::func::CallOp>(op);
  return call && call.getCallee() == callee;
}

/// Whether `op` is a call to kiln_profile_begin or kiln_profile_end named
/// `hook` (either, when empty).
inline bool isProfileHook(mlir::Operation *op, llvm::StringRef hook = "") {
  return hook.empty() ? isCallTo(op, kProfileBegin) || isCallTo(op, kProfileEnd)
                      : isCallTo(op, hook);
}

/// The op after `op` in its block, past the allocations, constants and
/// views bufferization puts between a producer and its consumer, and the
/// profiling build's kernel boundaries (null at the block's end): a
/// --profile build fuses across kernels as the build without it does.
inline mlir::Operation *nextComputeOp(mlir::Operation *op) {
  mlir::Operation *next = op->getNextNode();
  while (next &&
         (mlir::isa<mlir::memref::AllocOp, mlir::memref::AllocaOp,
                    mlir::arith::ConstantOp>(next) ||
          mlir::isa<mlir::ViewLikeOpInterface>(next) || isProfileHook(next)))
    next = next->getNextNode();
  return next;
}

/// The nearest profile hook named `hook` before (`forward` false) or after
/// `op` in its block, or null.
inline mlir::func::CallOp
nearestProfileHook(mlir::Operation *op, llvm::StringRef hook, bool forward) {
  for (mlir::Operation *at = forward ? op->getNextNode() : op->getPrevNode();
       at; at = forward ? at->getNextNode() : at->getPrevNode())
    if (isProfileHook(at))
      return isProfileHook(at, hook) ? mlir::cast<mlir::func::CallOp>(at)
                                     : mlir::func::CallOp();
  return {};
}

/// When a rewrite runs the work of the kernels from `first`'s to `last`'s
/// (ops of one block, `first` first) as one (a matmul storing through the
/// transpose after it, a 1x1 convolution's items run band by band inside
/// the depthwise convolution after it), makes them one kernel of the
/// profiling build: the hooks between them go, and `last`'s end hook counts
/// the time for `first`'s kernel. The kernels whose hooks went are called
/// no more (kiln-run --profile shows them fused into the first). Nothing
/// to do without hooks.
inline void fuseProfiledKernels(mlir::Operation *first, mlir::Operation *last) {
  mlir::func::CallOp begin = nearestProfileHook(first, kProfileBegin, false);
  mlir::func::CallOp end = nearestProfileHook(last, kProfileEnd, true);
  if (!begin || !end || first->getBlock() != last->getBlock())
    return;
  llvm::SmallVector<mlir::Operation *> between;
  for (mlir::Operation *at = first->getNextNode(); at && at != last;
       at = at->getNextNode())
    if (isProfileHook(at))
      between.push_back(at);
  if (between.empty())
    return;
  for (mlir::Operation *hook : between)
    hook->erase();
  end->setOperand(0, begin->getOperand(0));
}

/// Whether `op` is a copy on buffers: one input, one output, every loop
/// parallel, and a body that yields the input element.
inline bool isBufferCopy(mlir::linalg::LinalgOp op) {
  if (!op.hasPureBufferSemantics() || op.getNumDpsInputs() != 1 ||
      op.getNumDpsInits() != 1 || op.getNumLoops() == 0 ||
      op.getNumLoops() != op.getNumParallelLoops())
    return false;
  mlir::Block *body = op.getBlock();
  mlir::Operation *yield = body->getTerminator();
  return body->getOperations().size() == 1 && yield->getNumOperands() == 1 &&
         yield->getOperand(0) == body->getArgument(0);
}

/// Whether `op`'s body is `out + lhs * rhs` (f32, in either order of the
/// add and the multiply): a matmul or a convolution as convert-kiln-to-linalg
/// writes them, whichever their maps, for kiln-lower-matmul to match.
inline bool isMultiplyAccumulate(mlir::linalg::LinalgOp op) {
  mlir::Block *body = op.getBlock();
  if (body->getNumArguments() != 3 || body->getOperations().size() != 3)
    return false;
  auto mul = mlir::dyn_cast<mlir::arith::MulFOp>(&body->front());
  auto add = mlir::dyn_cast_or_null<mlir::arith::AddFOp>(
      mul ? mul->getNextNode() : nullptr);
  mlir::Operation *yield = body->getTerminator();
  if (!mul || !add || yield->getNumOperands() != 1 ||
      yield->getOperand(0) != add.getResult())
    return false;
  mlir::Value a = body->getArgument(0), b = body->getArgument(1),
              c = body->getArgument(2);
  bool mulOk = (mul.getLhs() == a && mul.getRhs() == b) ||
               (mul.getLhs() == b && mul.getRhs() == a);
  bool addOk = (add.getLhs() == c && add.getRhs() == mul.getResult()) ||
               (add.getRhs() == c && add.getLhs() == mul.getResult());
  return mulOk && addOk;
}

} // namespace kiln

#endif // KILN_TRANSFORMS_KERNELEMITTERS_H
