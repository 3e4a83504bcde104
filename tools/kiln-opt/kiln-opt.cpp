//===- kiln-opt.cpp - kiln's mlir-opt -------------------------------------===//
//
// Runs kiln and upstream passes over .mlir files; the driver of the lit tests.
//
//===----------------------------------------------------------------------===//

#include "kiln/Conversion/Passes.h"
#include "kiln/Dialect/Kiln/IR/KilnDialect.h"
#include "kiln/Dialect/Kiln/Transforms/Passes.h"
#include "kiln/Transforms/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/InitAllDialects.h"
#include "mlir/InitAllExtensions.h"
#include "mlir/InitAllPasses.h"
#include "mlir/Tools/mlir-opt/MlirOptMain.h"
#include "mlir/Transforms/Passes.h"

int main(int argc, char **argv) {
  // kiln's dialect and passes plus every upstream one, so kiln-opt can run
  // any stage of kiln's pipeline (bufferization, lowering to LLVM, ...).
  mlir::DialectRegistry registry;
  registry.insert<kiln::KilnDialect>();
  mlir::registerAllDialects(registry);
  mlir::registerAllExtensions(registry);
  kiln::registerKilnPasses();
  kiln::registerKilnConversionPasses();
  kiln::registerKilnCodegenPasses();
  mlir::registerAllPasses();
  return mlir::asMainReturnCode(
      mlir::MlirOptMain(argc, argv, "kiln optimizer driver\n", registry));
}
