//===- ShapeUtilsTest.cpp - unit tests for kiln's shape arithmetic --------===//

#include "kiln/Support/ShapeUtils.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"

using namespace kiln::shape;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

namespace {

constexpr int64_t D = kDynamic;

/// The value of `result`, failing the test with its message on error.
template <typename T> T valueOf(llvm::Expected<T> result) {
  if (!result) {
    ADD_FAILURE() << llvm::toString(result.takeError());
    return T();
  }
  return std::move(*result);
}

/// The error message of `result`, failing the test if it succeeded.
template <typename T> std::string errorOf(llvm::Expected<T> result) {
  if (result) {
    ADD_FAILURE() << "expected an error";
    return "";
  }
  return llvm::toString(result.takeError());
}

TEST(Broadcast, TrailingDimsAlign) {
  EXPECT_THAT(valueOf(broadcast({{2, 3, 4}, {4}})), ElementsAre(2, 3, 4));
  EXPECT_THAT(valueOf(broadcast({{5, 1, 4}, {3, 1}})), ElementsAre(5, 3, 4));
}

TEST(Broadcast, ScalarsAndEmptyDims) {
  EXPECT_THAT(valueOf(broadcast({{}, {2, 2}})), ElementsAre(2, 2));
  EXPECT_THAT(valueOf(broadcast({{0, 3}, {1, 3}})), ElementsAre(0, 3));
  EXPECT_TRUE(valueOf(broadcast({{}, {}})).empty());
}

TEST(Broadcast, ThreeOperands) {
  EXPECT_THAT(valueOf(broadcast({{2, 1, 1}, {1, 3, 1}, {4}})),
              ElementsAre(2, 3, 4));
}

TEST(Broadcast, DynamicDims) {
  // ? vs 1 stays unknown; ? vs 5 must be 5; ? vs ? stays unknown.
  EXPECT_THAT(valueOf(broadcast({{D, D, 1}, {1, 5, D}})), ElementsAre(D, 5, D));
}

TEST(Broadcast, IncompatibleNamesDim) {
  std::string message = errorOf(broadcast({{2, 3}, {4, 3}}));
  EXPECT_THAT(message, HasSubstr("2x3 vs 4x3"));
  EXPECT_THAT(message, HasSubstr("dim 0"));
}

TEST(Reshape, InfersMinusOne) {
  EXPECT_THAT(valueOf(reshape({2, 3, 4}, {-1, 4})), ElementsAre(6, 4));
  EXPECT_THAT(valueOf(reshape({2, 3, 4}, {2, -1})), ElementsAre(2, 12));
  EXPECT_THAT(valueOf(reshape({24}, {2, 3, 4})), ElementsAre(2, 3, 4));
}

TEST(Reshape, DynamicInputLeavesMinusOneUnknown) {
  EXPECT_THAT(valueOf(reshape({D, 4}, {-1, 2})), ElementsAre(D, 2));
}

TEST(Reshape, Errors) {
  EXPECT_THAT(errorOf(reshape({2, 3}, {-1, -1})),
              HasSubstr("more than one -1"));
  EXPECT_THAT(errorOf(reshape({2, 3}, {4, -1})), HasSubstr("do not divide"));
  EXPECT_THAT(errorOf(reshape({2, 3}, {7})), HasSubstr("6 elements"));
  EXPECT_THAT(errorOf(reshape({2, 3}, {-2, 3})), HasSubstr("-2"));
}

TEST(Matmul, BroadcastsBatchDims) {
  EXPECT_THAT(valueOf(matmul({8, 1, 4, 5}, {3, 5, 6})),
              ElementsAre(8, 3, 4, 6));
  EXPECT_THAT(valueOf(matmul({4, 5}, {5, 6})), ElementsAre(4, 6));
}

TEST(Matmul, Errors) {
  EXPECT_THAT(errorOf(matmul({4, 5}, {6, 7})), HasSubstr("K = 5 vs 6"));
  EXPECT_THAT(errorOf(matmul({4}, {4, 2})), HasSubstr("rank >= 2"));
  EXPECT_THAT(errorOf(matmul({2, 4, 5}, {3, 5, 6})), HasSubstr("batch"));
}

TEST(WindowOutputSize, Floor) {
  // 224 input, 7x7 kernel, stride 2, pads 3: ResNet's stem -> 112.
  EXPECT_EQ(valueOf(windowOutputSize(224, 7, 2, 1, 3, 3)), 112);
  EXPECT_EQ(valueOf(windowOutputSize(5, 3, 1, 1, 0, 0)), 3);
  EXPECT_EQ(valueOf(windowOutputSize(7, 3, 1, 2, 0, 0)), 3); // dilation 2
}

TEST(WindowOutputSize, CeilMode) {
  EXPECT_EQ(valueOf(windowOutputSize(6, 3, 2, 1, 0, 0, false)), 2);
  EXPECT_EQ(valueOf(windowOutputSize(6, 3, 2, 1, 0, 0, true)), 3);
  // The last window would start in the trailing padding: dropped.
  EXPECT_EQ(valueOf(windowOutputSize(5, 2, 2, 1, 0, 1, true)), 3);
  EXPECT_EQ(valueOf(windowOutputSize(4, 1, 2, 1, 0, 1, true)), 2);
}

TEST(WindowOutputSize, Errors) {
  EXPECT_THAT(errorOf(windowOutputSize(2, 5, 1, 1, 0, 0)),
              HasSubstr("does not fit"));
  EXPECT_THAT(errorOf(windowOutputSize(8, 3, 0, 1, 0, 0)),
              HasSubstr("must be positive"));
}

TEST(Conv, OutputShape) {
  EXPECT_THAT(valueOf(conv({1, 3, 224, 224}, {64, 3, 7, 7}, {2, 2}, {1, 1},
                           {3, 3, 3, 3}, 1)),
              ElementsAre(1, 64, 112, 112));
  // Depthwise: groups == channels.
  EXPECT_THAT(valueOf(conv({1, 32, 56, 56}, {32, 1, 3, 3}, {1, 1}, {1, 1},
                           {1, 1, 1, 1}, 32)),
              ElementsAre(1, 32, 56, 56));
  // 1-d and 3-d.
  EXPECT_THAT(valueOf(conv({2, 4, 10}, {8, 4, 3}, {1}, {1}, {0, 0}, 1)),
              ElementsAre(2, 8, 8));
  EXPECT_THAT(valueOf(conv({1, 2, 4, 4, 4}, {3, 2, 2, 2, 2}, {2, 2, 2},
                           {1, 1, 1}, {0, 0, 0, 0, 0, 0}, 1)),
              ElementsAre(1, 3, 2, 2, 2));
}

TEST(Conv, Errors) {
  EXPECT_THAT(errorOf(conv({1, 3, 8, 8}, {4, 2, 3, 3}, {1, 1}, {1, 1},
                           {0, 0, 0, 0}, 1)),
              HasSubstr("expects 2 input channels per group"));
  EXPECT_THAT(errorOf(conv({1, 3, 8, 8}, {4, 1, 3, 3}, {1, 1}, {1, 1},
                           {0, 0, 0, 0}, 2)),
              HasSubstr("not divisible by groups"));
  EXPECT_THAT(
      errorOf(conv({1, 3, 8, 8}, {4, 3, 3, 3}, {1}, {1, 1}, {0, 0, 0, 0}, 1)),
      HasSubstr("strides"));
}

TEST(Pool, OutputShape) {
  const int64_t kernel[] = {3, 3}, strides[] = {2, 2}, dilations[] = {1, 1},
                pads[] = {1, 1, 1, 1};
  Window window{kernel, strides, dilations, pads};
  EXPECT_THAT(valueOf(pool({1, 64, 112, 112}, window)),
              ElementsAre(1, 64, 56, 56));
  EXPECT_THAT(valueOf(pool({D, 64, D, 112}, window)),
              ElementsAre(D, 64, D, 56));
}

TEST(Reduce, KeepDimsAndNegativeAxes) {
  EXPECT_THAT(valueOf(reduce({2, 3, 4}, {-1}, true)), ElementsAre(2, 3, 1));
  EXPECT_THAT(valueOf(reduce({2, 3, 4}, {0, 2}, false)), ElementsAre(3));
  EXPECT_THAT(valueOf(reduce({2, 3, 4}, {}, false)), ElementsAre(2, 3, 4));
  EXPECT_TRUE(valueOf(reduce({2, 3}, {0, 1}, false)).empty());
}

TEST(Reduce, Errors) {
  EXPECT_THAT(errorOf(reduce({2, 3}, {2}, true)), HasSubstr("out of range"));
  EXPECT_THAT(errorOf(reduce({2, 3}, {1, -1}, true)),
              HasSubstr("more than once"));
}

TEST(Transpose, Permutes) {
  EXPECT_THAT(valueOf(transpose({2, 3, 4}, {2, 0, 1})), ElementsAre(4, 2, 3));
  EXPECT_THAT(errorOf(transpose({2, 3}, {0, 0})),
              HasSubstr("not a permutation"));
  EXPECT_THAT(errorOf(transpose({2, 3}, {0})), HasSubstr("1 entries"));
}

TEST(Concat, SumsAxis) {
  EXPECT_THAT(valueOf(concat({{2, 3}, {2, 5}}, -1)), ElementsAre(2, 8));
  EXPECT_THAT(valueOf(concat({{D, 3}, {2, 5}}, 1)), ElementsAre(2, 8));
  EXPECT_THAT(errorOf(concat({{2, 3}, {4, 3}}, 1)),
              HasSubstr("not the concat axis"));
}

TEST(Split, Pieces) {
  auto pieces = valueOf(split({6, 4}, 0, {2, 4}));
  ASSERT_EQ(pieces.size(), 2u);
  EXPECT_THAT(pieces[0], ElementsAre(2, 4));
  EXPECT_THAT(pieces[1], ElementsAre(4, 4));
  EXPECT_THAT(errorOf(split({6, 4}, 0, {2, 3})), HasSubstr("sum to 5"));
}

TEST(Slice, StepsAndNegativeSteps) {
  EXPECT_EQ(valueOf(sliceSize(10, 1, 10, 3)), 3); // 1, 4, 7
  EXPECT_EQ(valueOf(sliceSize(10, 9, -1, -1)), 10);
  EXPECT_EQ(valueOf(sliceSize(10, 8, 2, -2)), 3); // 8, 6, 4
  EXPECT_EQ(valueOf(sliceSize(10, 4, 4, 1)), 0);
  EXPECT_THAT(valueOf(slice({4, 8}, {0, 1}, {4, 7}, {1, 2})),
              ElementsAre(4, 3));
}

TEST(Slice, Errors) {
  EXPECT_THAT(errorOf(sliceSize(10, 0, 5, 0)), HasSubstr("must not be 0"));
  EXPECT_THAT(errorOf(sliceSize(10, 0, 11, 1)), HasSubstr("not normalized"));
  EXPECT_THAT(errorOf(slice({4}, {0, 0}, {4}, {1})), HasSubstr("needs 1"));
}

TEST(Gather, InsertsIndexShape) {
  EXPECT_THAT(valueOf(gather({5, 6, 7}, {2, 3}, 1)), ElementsAre(5, 2, 3, 7));
  EXPECT_THAT(valueOf(gather({5, 6}, {}, -1)), ElementsAre(5));
}

TEST(Pad, GrowsAndCrops) {
  EXPECT_THAT(valueOf(pad({2, 3}, {1, 0, 1, 2})), ElementsAre(4, 5));
  EXPECT_THAT(valueOf(pad({2, 3}, {0, -1, 0, -1})), ElementsAre(2, 1));
  EXPECT_THAT(errorOf(pad({2, 3}, {0, -2, 0, -2})), HasSubstr("below zero"));
}

TEST(Misc, ToStringAndCompatibility) {
  EXPECT_EQ(toString({2, D, 3}), "2x?x3");
  EXPECT_EQ(toString({}), "scalar");
  EXPECT_TRUE(areCompatible({2, D}, {2, 3}));
  EXPECT_FALSE(areCompatible({2, 4}, {2, 3}));
  EXPECT_FALSE(areCompatible({2}, {2, 1}));
  EXPECT_EQ(numElements({2, 3, 4}), 24);
  EXPECT_EQ(numElements({2, D}), D);
}

} // namespace
