//===- ImporterTest.cpp - C++ API tests for the ONNX importer -------------===//

#include "kiln/Frontend/ONNX/Importer.h"

#include "mlir/IR/Diagnostics.h"

#include "llvm/Support/MemoryBuffer.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"

using namespace mlir;
using kiln::frontend::ImportOptions;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

namespace {

/// Imports `bytes`, collecting the error messages.
OwningOpRef<ModuleOp> importCollecting(MLIRContext &context,
                                       llvm::StringRef bytes,
                                       std::string &errors) {
  ScopedDiagnosticHandler handler(&context, [&](Diagnostic &diag) {
    errors += diag.str() + "\n";
    return success();
  });
  return kiln::frontend::importModelBytes(context, bytes, "", ImportOptions());
}

TEST(ParseShape, Dims) {
  EXPECT_THAT(*kiln::frontend::parseShape("1x3x224x224"),
              ElementsAre(1, 3, 224, 224));
  EXPECT_THAT(*kiln::frontend::parseShape("7"), ElementsAre(7));
  EXPECT_TRUE(kiln::frontend::parseShape("scalar")->empty());
  EXPECT_FALSE(kiln::frontend::parseShape("1x-3"));
  EXPECT_FALSE(kiln::frontend::parseShape("1xx3"));
  EXPECT_FALSE(kiln::frontend::parseShape("a"));
}

TEST(ImportModelBytes, MalformedAndEmpty) {
  MLIRContext context;
  std::string errors;
  EXPECT_FALSE(importCollecting(context, "\x08\x07\x12\xff garbage", errors));
  EXPECT_THAT(errors, HasSubstr("malformed or truncated"));
  errors.clear();
  EXPECT_FALSE(importCollecting(context, "", errors));
  EXPECT_THAT(errors, HasSubstr("has no graph"));
}

TEST(ImportModelBytes, ImportsAdd) {
  auto buffer = llvm::MemoryBuffer::getFile(KILN_TEST_INPUTS "/add.onnx");
  ASSERT_TRUE(buffer);
  MLIRContext context;
  std::string errors;
  OwningOpRef<ModuleOp> module =
      importCollecting(context, (*buffer)->getBuffer(), errors);
  ASSERT_TRUE(module) << errors;
  int adds = 0;
  module->walk([&](Operation *op) {
    adds += op->getName().getStringRef() == "kiln.add";
  });
  EXPECT_EQ(adds, 1);
}

} // namespace
