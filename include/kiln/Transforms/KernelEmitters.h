//===- KernelEmitters.h - shared by the passes that emit vector kernels ---===//
//
// kiln-lower-matmul and kiln-lower-window-ops replace linalg ops on buffers
// with their own vector loops; kiln-outline-parallel-loops then hands their
// parallel loops to the thread pool.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_TRANSFORMS_KERNELEMITTERS_H
#define KILN_TRANSFORMS_KERNELEMITTERS_H

#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Value.h"

namespace kiln {

/// The attribute an emitted scf.parallel states its work with (innermost
/// iterations), for kiln-outline-parallel-loops, where its inner loops'
/// bounds cannot tell (dynamic bounds, or unrolled vector code).
constexpr llvm::StringLiteral kWorkAttrName = "kiln.work";

/// Whether `value` is a statically shaped, dense (identity layout) f32
/// buffer: what the emitted kernels index directly.
inline bool isDenseF32Buffer(mlir::Value value) {
  auto type = mlir::dyn_cast<mlir::MemRefType>(value.getType());
  return type && type.hasStaticShape() && type.getLayout().isIdentity() &&
         type.getElementType().isF32();
}

} // namespace kiln

#endif // KILN_TRANSFORMS_KERNELEMITTERS_H
