//===- KilnTraits.h - kiln op traits ----------------------------*- C++ -*-===//

#ifndef KILN_DIALECT_KILN_IR_KILNTRAITS_H
#define KILN_DIALECT_KILN_IR_KILNTRAITS_H

#include "mlir/IR/OpDefinition.h"

namespace kiln::OpTrait {

/// Each output element depends only on the same-index elements of the
/// (broadcast) operands. Fusion groups chains of such ops.
template <typename ConcreteType>
class Elementwise : public mlir::OpTrait::TraitBase<ConcreteType, Elementwise> {
};

} // namespace kiln::OpTrait

#endif // KILN_DIALECT_KILN_IR_KILNTRAITS_H
