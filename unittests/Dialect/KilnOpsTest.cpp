//===- KilnOpsTest.cpp - C++ API tests for the kiln dialect ---------------===//
//
// The frontend builds kiln ops through their C++ builders; these tests check
// that result types are inferred there and that integer evaluation works.
//
//===----------------------------------------------------------------------===//

#include "kiln/Dialect/Kiln/IR/KilnOps.h"
#include "kiln/Dialect/Kiln/IR/ConstantEvaluator.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/Matchers.h"
#include "mlir/IR/Verifier.h"

#include "gtest/gtest.h"

using namespace mlir;
using namespace kiln;

namespace {

class KilnOpsTest : public ::testing::Test {
protected:
  KilnOpsTest() : builder(&context) {
    context.loadDialect<KilnDialect, func::FuncDialect>();
    module = ModuleOp::create(builder.getUnknownLoc());
    builder.setInsertionPointToEnd(module->getBody());
  }

  Value constantI64(ArrayRef<int64_t> values) {
    auto type = RankedTensorType::get({static_cast<int64_t>(values.size())},
                                      builder.getI64Type());
    return ConstantOp::create(builder, builder.getUnknownLoc(),
                              DenseIntElementsAttr::get(type, values));
  }

  Value placeholder(ArrayRef<int64_t> shape) {
    auto type = RankedTensorType::get(shape, builder.getF32Type());
    return ConstantOp::create(builder, builder.getUnknownLoc(),
                              DenseElementsAttr::get(type, 0.0f));
  }

  MLIRContext context;
  OpBuilder builder;
  OwningOpRef<ModuleOp> module;
};

TEST_F(KilnOpsTest, BuildersInferBroadcastShape) {
  Value a = placeholder({4, 1, 3});
  Value b = placeholder({5, 1});
  auto add = AddOp::create(builder, builder.getUnknownLoc(), a, b);
  EXPECT_EQ(add.getType(),
            RankedTensorType::get({4, 5, 3}, builder.getF32Type()));
  EXPECT_TRUE(succeeded(verify(*module)));
}

TEST_F(KilnOpsTest, BuildersInferMatmulAndReshape) {
  Value a = placeholder({2, 8, 16});
  Value b = placeholder({16, 4});
  auto matmul = MatmulOp::create(builder, builder.getUnknownLoc(), a, b);
  EXPECT_EQ(matmul.getType().getShape(), ArrayRef<int64_t>({2, 8, 4}));
  auto reshape =
      ReshapeOp::create(builder, builder.getUnknownLoc(), matmul.getResult(),
                        ArrayRef<int64_t>{-1, 4});
  EXPECT_EQ(reshape.getType().getShape(), ArrayRef<int64_t>({16, 4}));
}

TEST_F(KilnOpsTest, EvaluatesShapeArithmetic) {
  // shape_of(x)[1] * 2 for x : 3x5 -> [10]
  Value x = placeholder({3, 5});
  auto shape = ShapeOfOp::create(builder, builder.getUnknownLoc(), x);
  auto index = ConstantOp::create(
      builder, builder.getUnknownLoc(),
      DenseIntElementsAttr::get(
          RankedTensorType::get({1}, builder.getI64Type()), int64_t(1)));
  auto gather = GatherOp::create(builder, builder.getUnknownLoc(),
                                 shape.getResult(), index.getResult(), 0);
  auto two = constantI64({2});
  auto mul =
      MulOp::create(builder, builder.getUnknownLoc(), gather.getResult(), two);

  Attribute shapeValue = evaluateIntegerOp(shape, {nullptr}, 64);
  ASSERT_TRUE(shapeValue);
  Attribute gathered =
      evaluateIntegerOp(gather, {shapeValue, index.getValue()}, 64);
  ASSERT_TRUE(gathered);
  Attribute twoValue;
  ASSERT_TRUE(matchPattern(two, m_Constant(&twoValue)));
  auto product = dyn_cast_or_null<DenseIntElementsAttr>(
      evaluateIntegerOp(mul, {gathered, twoValue}, 64));
  ASSERT_TRUE(product);
  EXPECT_EQ((*product.getValues<APInt>().begin()).getSExtValue(), 10);
}

TEST_F(KilnOpsTest, EvaluationRespectsLimitsAndFloats) {
  Value big = constantI64(SmallVector<int64_t>(100, 7));
  auto neg = NegOp::create(builder, builder.getUnknownLoc(), big);
  Attribute operand;
  ASSERT_TRUE(matchPattern(big, m_Constant(&operand)));
  EXPECT_FALSE(evaluateIntegerOp(neg, {operand}, /*maxElements=*/99));
  EXPECT_TRUE(evaluateIntegerOp(neg, {operand}, /*maxElements=*/100));

  Value f = placeholder({2});
  auto negF = NegOp::create(builder, builder.getUnknownLoc(), f);
  Attribute floatOperand;
  ASSERT_TRUE(matchPattern(f, m_Constant(&floatOperand)));
  EXPECT_FALSE(evaluateIntegerOp(negF, {floatOperand}, 64));
}

TEST_F(KilnOpsTest, DivisionByZeroIsNotFolded) {
  Value a = constantI64({4, 6});
  Value zero = constantI64({0});
  auto div = DivOp::create(builder, builder.getUnknownLoc(), a, zero);
  Attribute lhs, rhs;
  ASSERT_TRUE(matchPattern(a, m_Constant(&lhs)));
  ASSERT_TRUE(matchPattern(zero, m_Constant(&rhs)));
  EXPECT_FALSE(evaluateIntegerOp(div, {lhs, rhs}, 64));
}

} // namespace
