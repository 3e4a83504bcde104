//===- RuntimeDtype.cpp - MLIR element types as kiln_dtype ----------------===//

#include "kiln/Transforms/RuntimeDtype.h"
#include "kiln/runtime.h"

#include "mlir/IR/BuiltinTypes.h"

using namespace mlir;

std::optional<int32_t> kiln::runtimeDtype(Type type) {
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
  auto integer = dyn_cast<IntegerType>(type);
  if (!integer)
    return std::nullopt;
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
    return std::nullopt;
  }
}

bool kiln::isGemmDtype(int32_t dtype) {
  return dtype == KILN_DTYPE_F32 || dtype == KILN_DTYPE_F16 ||
         dtype == KILN_DTYPE_BF16;
}
