//===- KilnBase.td - kiln dialect definition ---------------*- tablegen -*-===//
//
// The kiln dialect: a small, normalized set of graph ops on builtin ranked
// tensors. The ONNX frontend absorbs opset versions and sugar so that passes
// see one canonical form.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_DIALECT_KILN_IR_KILNBASE_TD
#define KILN_DIALECT_KILN_IR_KILNBASE_TD

include "mlir/IR/OpBase.td"
include "mlir/IR/EnumAttr.td"
include "mlir/IR/AttrTypeBase.td"

def Kiln_Dialect : Dialect {
  let name = "kiln";
  let cppNamespace = "::kiln";
  let summary = "Graph-level ops of the kiln ONNX compiler";
  let description = [{
    Ops with value semantics on builtin ranked tensors. Every op infers its
    result types from its operands and attributes (InferTypeOpInterface), so
    one pass refines the shapes of a whole function once its arguments are
    pinned. Dynamic dimensions (`?`) are allowed before shape inference;
    result types may be less refined than what inference computes.
  }];
  let hasConstantMaterializer = 1;
}

//===----------------------------------------------------------------------===//
// Traits
//===----------------------------------------------------------------------===//

// Marks ops that compute each output element from the same-index elements of
// their (broadcast) operands. Fusion groups chains of these.
def Kiln_ElementwiseTrait : NativeOpTrait<"Elementwise"> {
  let cppNamespace = "::kiln::OpTrait";
}

//===----------------------------------------------------------------------===//
// Enums
//===----------------------------------------------------------------------===//

// I32EnumAttr-based attributes print as bare keywords in op formats.
def Kiln_CompareDirectionAttr : I32EnumAttr<"CompareDirection",
    "comparison direction", [
      I32EnumAttrCase<"EQ", 0, "eq">,
      I32EnumAttrCase<"NE", 1, "ne">,
      I32EnumAttrCase<"LT", 2, "lt">,
      I32EnumAttrCase<"LE", 3, "le">,
      I32EnumAttrCase<"GT", 4, "gt">,
      I32EnumAttrCase<"GE", 5, "ge">
    ]> {
  let cppNamespace = "::kiln";
}

def Kiln_PadModeAttr : I32EnumAttr<"PadMode", "padding mode", [
      I32EnumAttrCase<"Constant", 0, "constant">,
      I32EnumAttrCase<"Reflect", 1, "reflect">,
      I32EnumAttrCase<"Edge", 2, "edge">
    ]> {
  let cppNamespace = "::kiln";
}

def Kiln_GeluApproximationAttr : I32EnumAttr<"GeluApproximation",
    "GELU formula", [
      I32EnumAttrCase<"None", 0, "none">,
      I32EnumAttrCase<"Tanh", 1, "tanh">
    ]> {
  let cppNamespace = "::kiln";
}

def Kiln_ResizeModeAttr : I32EnumAttr<"ResizeMode", "resize interpolation", [
      I32EnumAttrCase<"Nearest", 0, "nearest">,
      I32EnumAttrCase<"Linear", 1, "linear">
    ]> {
  let cppNamespace = "::kiln";
}

def Kiln_CoordinateTransformAttr : I32EnumAttr<"CoordinateTransform",
    "how an output coordinate maps to an input coordinate (ONNX Resize)", [
      I32EnumAttrCase<"HalfPixel", 0, "half_pixel">,
      I32EnumAttrCase<"PytorchHalfPixel", 1, "pytorch_half_pixel">,
      I32EnumAttrCase<"AlignCorners", 2, "align_corners">,
      I32EnumAttrCase<"Asymmetric", 3, "asymmetric">,
      I32EnumAttrCase<"TfHalfPixelForNearest", 4, "tf_half_pixel_for_nearest">
    ]> {
  let cppNamespace = "::kiln";
}

def Kiln_NearestModeAttr : I32EnumAttr<"NearestMode",
    "rounding of a nearest-neighbour input coordinate", [
      I32EnumAttrCase<"RoundPreferFloor", 0, "round_prefer_floor">,
      I32EnumAttrCase<"RoundPreferCeil", 1, "round_prefer_ceil">,
      I32EnumAttrCase<"Floor", 2, "floor">,
      I32EnumAttrCase<"Ceil", 3, "ceil">
    ]> {
  let cppNamespace = "::kiln";
}

//===----------------------------------------------------------------------===//
// Type constraints
//===----------------------------------------------------------------------===//

def Kiln_Bool : I<1>;
def Kiln_Tensor : RankedTensorOf<[AnyFloat, AnyInteger]>;
def Kiln_FloatTensor : RankedTensorOf<[AnyFloat]>;
def Kiln_NumericTensor : RankedTensorOf<[AnyFloat, AnySignlessInteger,
                                         AnyUnsignedInteger, AnySignedInteger]>;
def Kiln_BoolTensor : RankedTensorOf<[Kiln_Bool]>;
def Kiln_IndexTensor : RankedTensorOf<[I32, I64]>;
def Kiln_ShapeTensor : 1DTensorOf<[I64]>;

#endif // KILN_DIALECT_KILN_IR_KILNBASE_TD
