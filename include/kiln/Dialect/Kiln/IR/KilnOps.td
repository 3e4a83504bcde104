//===- KilnOps.td - kiln dialect ops -----------------------*- tablegen -*-===//
//
// Conventions:
//  * Every op infers its result types (InferTypeOpAdaptor). The shape helpers
//    live in kiln/Support/ShapeUtils.h; the C++ glue in KilnOps.cpp.
//  * A declared result type may be less refined than the inferred one (a `?`
//    where inference knows the size); `kiln-shape-inference` refines it.
//  * Axes may be negative (counted from the back); canonicalization rewrites
//    them to their non-negative form.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_DIALECT_KILN_IR_KILNOPS_TD
#define KILN_DIALECT_KILN_IR_KILNOPS_TD

include "kiln/Dialect/Kiln/IR/KilnBase.td"
include "mlir/Interfaces/InferTypeOpInterface.td"
include "mlir/Interfaces/SideEffectInterfaces.td"
include "mlir/IR/BuiltinAttributeInterfaces.td"

// Base of every kiln op: pure, with inferred result types whose compatibility
// check accepts a less refined declared type.
class Kiln_Op<string mnemonic, list<Trait> traits = []>
    : Op<Kiln_Dialect, mnemonic,
         traits # [Pure, InferTypeOpAdaptorWithIsCompatible]> {
  // C++ definitions a subclass adds next to the shared ones.
  code extraDefinition = "";
  let extraClassDefinition = [{
    bool $cppClass::isCompatibleReturnTypes(::mlir::TypeRange inferred,
                                            ::mlir::TypeRange declared) {
      return ::kiln::detail::areRefinableTypes(inferred, declared);
    }
  }] # extraDefinition;
}

//===----------------------------------------------------------------------===//
// Constant
//===----------------------------------------------------------------------===//

def Kiln_ConstantOp : Kiln_Op<"constant", [ConstantLike]> {
  let summary = "tensor constant (weights or small shape data)";
  let description = [{
    Large weights are `dense_resource` blobs so they are neither uniqued nor
    printed; small constants (shapes, scalars) are `dense` attributes.

    ```mlir
    %0 = kiln.constant dense<[1, 2]> : tensor<2xi64>
    ```
  }];
  let arguments = (ins ElementsAttr:$value);
  let results = (outs Kiln_Tensor:$output);
  let assemblyFormat = "attr-dict $value";
  let hasFolder = 1;
}

//===----------------------------------------------------------------------===//
// Elementwise unary
//===----------------------------------------------------------------------===//

class Kiln_UnaryOp<string mnemonic, Type type, list<Trait> traits = []>
    : Kiln_Op<mnemonic, traits # [Kiln_ElementwiseTrait,
                                   SameOperandsAndResultElementType]> {
  let arguments = (ins type:$input);
  let results = (outs type:$output);
  let assemblyFormat =
      "$input attr-dict `:` type($input) `->` type($output)";
  let extraDefinition = [{
    ::llvm::LogicalResult $cppClass::inferReturnTypes(
        ::mlir::MLIRContext *, std::optional<::mlir::Location>,
        Adaptor adaptor, ::llvm::SmallVectorImpl<::mlir::Type> &types) {
      types.push_back(adaptor.getInput().getType());
      return ::mlir::success();
    }
  }];
}

def Kiln_AbsOp : Kiln_UnaryOp<"abs", Kiln_NumericTensor> {
  let summary = "elementwise absolute value";
}
def Kiln_NegOp : Kiln_UnaryOp<"neg", Kiln_NumericTensor> {
  let summary = "elementwise negation";
  let hasFolder = 1;
}
def Kiln_ExpOp : Kiln_UnaryOp<"exp", Kiln_FloatTensor> {
  let summary = "elementwise e^x";
}
def Kiln_LogOp : Kiln_UnaryOp<"log", Kiln_FloatTensor> {
  let summary = "elementwise natural logarithm";
}
def Kiln_SqrtOp : Kiln_UnaryOp<"sqrt", Kiln_FloatTensor> {
  let summary = "elementwise square root";
}
def Kiln_RsqrtOp : Kiln_UnaryOp<"rsqrt", Kiln_FloatTensor> {
  let summary = "elementwise 1/sqrt(x)";
}
def Kiln_ReciprocalOp : Kiln_UnaryOp<"reciprocal", Kiln_FloatTensor> {
  let summary = "elementwise 1/x";
}
def Kiln_TanhOp : Kiln_UnaryOp<"tanh", Kiln_FloatTensor> {
  let summary = "elementwise hyperbolic tangent";
}
def Kiln_SigmoidOp : Kiln_UnaryOp<"sigmoid", Kiln_FloatTensor> {
  let summary = "elementwise 1/(1+e^-x)";
}
def Kiln_ErfOp : Kiln_UnaryOp<"erf", Kiln_FloatTensor> {
  let summary = "elementwise Gauss error function";
}
def Kiln_ReluOp : Kiln_UnaryOp<"relu", Kiln_NumericTensor> {
  let summary = "elementwise max(x, 0)";
}
def Kiln_FloorOp : Kiln_UnaryOp<"floor", Kiln_FloatTensor> {
  let summary = "elementwise round toward -inf";
}
def Kiln_CeilOp : Kiln_UnaryOp<"ceil", Kiln_FloatTensor> {
  let summary = "elementwise round toward +inf";
}
def Kiln_RoundOp : Kiln_UnaryOp<"round", Kiln_FloatTensor> {
  let summary = "elementwise round half to even (ONNX Round)";
}
def Kiln_SignOp : Kiln_UnaryOp<"sign", Kiln_NumericTensor> {
  let summary = "elementwise -1, 0 or 1";
}
def Kiln_NotOp : Kiln_UnaryOp<"not", Kiln_BoolTensor> {
  let summary = "elementwise logical not";
  let hasFolder = 1;
}

def Kiln_LeakyReluOp : Kiln_UnaryOp<"leaky_relu", Kiln_FloatTensor> {
  let summary = "elementwise x < 0 ? alpha * x : x";
  let arguments = (ins Kiln_FloatTensor:$input, F64Attr:$alpha);
  let assemblyFormat =
      "$input `alpha` `=` $alpha attr-dict `:` type($input) `->` type($output)";
}

def Kiln_ClampOp : Kiln_UnaryOp<"clamp", Kiln_NumericTensor> {
  let summary = "elementwise min(max(x, min), max)";
  let description = [{
    Bounds are f64 and converted to the element type. ONNX Clip with
    non-constant bounds is imported as `kiln.max` + `kiln.min` instead.
  }];
  let arguments = (ins Kiln_NumericTensor:$input, F64Attr:$min, F64Attr:$max);
  let assemblyFormat = "$input `min` `=` $min `max` `=` $max attr-dict `:` "
                       "type($input) `->` type($output)";
  let hasVerifier = 1;
}

def Kiln_GeluOp : Kiln_UnaryOp<"gelu", Kiln_FloatTensor> {
  let summary = "Gaussian error linear unit";
  let arguments = (ins Kiln_FloatTensor:$input,
                   Kiln_GeluApproximationAttr:$approximation);
  let assemblyFormat = "$input `approximation` `=` $approximation attr-dict "
                       "`:` type($input) `->` type($output)";
}

def Kiln_CastOp : Kiln_Op<"cast", [Kiln_ElementwiseTrait]> {
  let summary = "elementwise conversion to another element type";
  let description = [{
    Follows ONNX Cast: float to integer truncates toward zero, to bool is
    `x != 0`.

    ```mlir
    %1 = kiln.cast %0 to i32 : tensor<4xf32> -> tensor<4xi32>
    ```
  }];
  let arguments = (ins Kiln_Tensor:$input, TypeAttr:$to);
  let results = (outs Kiln_Tensor:$output);
  let assemblyFormat =
      "$input `to` $to attr-dict `:` type($input) `->` type($output)";
  let hasFolder = 1;
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Elementwise binary (numpy broadcasting)
//===----------------------------------------------------------------------===//

class Kiln_BinaryOp<string mnemonic, Type type, list<Trait> traits = []>
    : Kiln_Op<mnemonic, traits # [Kiln_ElementwiseTrait,
                                   SameOperandsElementType]> {
  let arguments = (ins type:$lhs, type:$rhs);
  let results = (outs type:$output);
  let assemblyFormat =
      "$lhs `,` $rhs attr-dict `:` functional-type(operands, results)";
  // Element type of the result; `Type()` keeps the operands' one.
  code resultElementType = "::mlir::Type()";
  let extraDefinition = [{
    ::llvm::LogicalResult $cppClass::inferReturnTypes(
        ::mlir::MLIRContext *context, std::optional<::mlir::Location> loc,
        Adaptor adaptor, ::llvm::SmallVectorImpl<::mlir::Type> &types) {
      return ::kiln::detail::inferBroadcastResult(
          loc, {adaptor.getLhs(), adaptor.getRhs()}, }] # resultElementType #
                                                       [{, types);
    }
  }];
}

def Kiln_AddOp : Kiln_BinaryOp<"add", Kiln_NumericTensor, [Commutative]> {
  let summary = "elementwise lhs + rhs";
  let hasFolder = 1;
}
def Kiln_SubOp : Kiln_BinaryOp<"sub", Kiln_NumericTensor> {
  let summary = "elementwise lhs - rhs";
  let hasFolder = 1;
}
def Kiln_MulOp : Kiln_BinaryOp<"mul", Kiln_NumericTensor, [Commutative]> {
  let summary = "elementwise lhs * rhs";
  let hasFolder = 1;
}
def Kiln_DivOp : Kiln_BinaryOp<"div", Kiln_NumericTensor> {
  let summary = "elementwise lhs / rhs (integers truncate toward zero)";
  let hasFolder = 1;
}
def Kiln_PowOp : Kiln_BinaryOp<"pow", Kiln_NumericTensor> {
  let summary = "elementwise lhs ^ rhs";
  let description = [{
    Canonicalization turns a constant exponent of 2, 3 or 4 into
    multiplications, 0.5 into sqrt and -1 into reciprocal (float), so
    written-out GELU and layernorm do not call pow per element.
  }];
  let hasFolder = 1;
  let hasCanonicalizer = 1;
}
def Kiln_MaxOp : Kiln_BinaryOp<"max", Kiln_NumericTensor, [Commutative]> {
  let summary = "elementwise maximum";
  let hasFolder = 1;
}
def Kiln_MinOp : Kiln_BinaryOp<"min", Kiln_NumericTensor, [Commutative]> {
  let summary = "elementwise minimum";
  let hasFolder = 1;
}
def Kiln_AndOp : Kiln_BinaryOp<"and", Kiln_BoolTensor, [Commutative]> {
  let summary = "elementwise logical and";
}
def Kiln_OrOp : Kiln_BinaryOp<"or", Kiln_BoolTensor, [Commutative]> {
  let summary = "elementwise logical or";
}
def Kiln_XorOp : Kiln_BinaryOp<"xor", Kiln_BoolTensor, [Commutative]> {
  let summary = "elementwise logical xor";
}

def Kiln_CompareOp : Kiln_BinaryOp<"compare", Kiln_NumericTensor> {
  let summary = "elementwise comparison producing i1";
  let description = [{
    ```mlir
    %2 = kiln.compare lt, %0, %1 : (tensor<4xf32>, tensor<1xf32>) -> tensor<4xi1>
    ```
  }];
  let arguments = (ins Kiln_CompareDirectionAttr:$direction,
                   Kiln_NumericTensor:$lhs, Kiln_NumericTensor:$rhs);
  let results = (outs Kiln_BoolTensor:$output);
  let assemblyFormat = "$direction `,` $lhs `,` $rhs attr-dict `:` "
                       "functional-type(operands, results)";
  let resultElementType = "::mlir::IntegerType::get(context, 1)";
  let hasFolder = 1;
}

def Kiln_SelectOp : Kiln_Op<"select", [Kiln_ElementwiseTrait,
    AllElementTypesMatch<["on_true", "on_false", "output"]>]> {
  let summary = "elementwise cond ? on_true : on_false (ONNX Where)";
  let arguments = (ins Kiln_BoolTensor:$condition, Kiln_Tensor:$on_true,
                   Kiln_Tensor:$on_false);
  let results = (outs Kiln_Tensor:$output);
  let assemblyFormat = "$condition `,` $on_true `,` $on_false attr-dict `:` "
                       "functional-type(operands, results)";
  let extraDefinition = [{
    ::llvm::LogicalResult $cppClass::inferReturnTypes(
        ::mlir::MLIRContext *, std::optional<::mlir::Location> loc,
        Adaptor adaptor, ::llvm::SmallVectorImpl<::mlir::Type> &types) {
      return ::kiln::detail::inferBroadcastResult(
          loc, {adaptor.getCondition(), adaptor.getOnTrue(),
                adaptor.getOnFalse()},
          ::mlir::getElementTypeOrSelf(adaptor.getOnTrue()), types);
    }
  }];
}

//===----------------------------------------------------------------------===//
// Contractions
//===----------------------------------------------------------------------===//

def Kiln_MatmulOp : Kiln_Op<"matmul", [SameOperandsAndResultElementType]> {
  let summary = "batched matrix product with broadcast batch dimensions";
  let description = [{
    `[..., M, K] x [..., K, N] -> [broadcast(...), M, N]`. Both operands have
    rank >= 2; the frontend reshapes ONNX's 1-D MatMul operands.
  }];
  let arguments = (ins Kiln_NumericTensor:$lhs, Kiln_NumericTensor:$rhs);
  let results = (outs Kiln_NumericTensor:$output);
  let assemblyFormat =
      "$lhs `,` $rhs attr-dict `:` functional-type(operands, results)";
}

def Kiln_ConvOp : Kiln_Op<"conv", [AllElementTypesMatch<["input", "filter",
                                                          "output"]>]> {
  let summary = "N-d convolution (NCHW-style layout) with optional bias";
  let description = [{
    Input `[N, C, D1..Dn]`, filter `[O, C/groups, K1..Kn]`, bias `[O]`.
    `pads` holds the n leading pads then the n trailing pads (ONNX order);
    auto_pad is resolved by the frontend.

    ```mlir
    %y = kiln.conv %x, %w, %b strides = [1, 1] dilations = [1, 1]
           pads = [1, 1, 1, 1] groups = 1
           : (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>, tensor<4xf32>)
           -> tensor<1x4x8x8xf32>
    ```
  }];
  let arguments = (ins Kiln_FloatTensor:$input, Kiln_FloatTensor:$filter,
                   Optional<Kiln_FloatTensor>:$bias,
                   DenseI64ArrayAttr:$strides, DenseI64ArrayAttr:$dilations,
                   DenseI64ArrayAttr:$pads, I64Attr:$groups);
  let results = (outs Kiln_FloatTensor:$output);
  let assemblyFormat = [{
    $input `,` $filter (`,` $bias^)? `strides` `=` $strides
    `dilations` `=` $dilations `pads` `=` $pads `groups` `=` $groups
    attr-dict `:` functional-type(operands, results)
  }];
}

class Kiln_PoolOp<string mnemonic, Type type> : Kiln_Op<mnemonic,
    [SameOperandsAndResultElementType]> {
  let results = (outs type:$output);
  let assemblyFormat = [{
    $input `kernel` `=` $kernel `strides` `=` $strides
    `dilations` `=` $dilations `pads` `=` $pads attr-dict
    `:` type($input) `->` type($output)
  }];
  let extraDefinition = [{
    ::llvm::LogicalResult $cppClass::inferReturnTypes(
        ::mlir::MLIRContext *, std::optional<::mlir::Location> loc,
        Adaptor adaptor, ::llvm::SmallVectorImpl<::mlir::Type> &types) {
      return ::kiln::detail::inferPoolResult(
          loc, adaptor.getInput().getType(), adaptor.getKernel(),
          adaptor.getStrides(), adaptor.getDilations(), adaptor.getPads(),
          adaptor.getCeilMode(), types);
    }
  }];
}

def Kiln_MaxPoolOp : Kiln_PoolOp<"max_pool", Kiln_NumericTensor> {
  let summary = "N-d max pooling over the trailing spatial dimensions";
  let description = [{
    Input `[N, C, D1..Dn]`. `pads` holds leading then trailing pads; with
    `ceil_mode` the output size rounds up (ONNX semantics: a window must start
    inside the input or its leading padding).
  }];
  let arguments = (ins Kiln_NumericTensor:$input, DenseI64ArrayAttr:$kernel,
                   DenseI64ArrayAttr:$strides, DenseI64ArrayAttr:$dilations,
                   DenseI64ArrayAttr:$pads, UnitAttr:$ceil_mode);
}

def Kiln_AvgPoolOp : Kiln_PoolOp<"avg_pool", Kiln_FloatTensor> {
  let summary = "N-d average pooling over the trailing spatial dimensions";
  let description = [{
    Like `kiln.max_pool`; with `count_include_pad` padded elements count in
    the divisor.
  }];
  let arguments = (ins Kiln_FloatTensor:$input, DenseI64ArrayAttr:$kernel,
                   DenseI64ArrayAttr:$strides, DenseI64ArrayAttr:$dilations,
                   DenseI64ArrayAttr:$pads, UnitAttr:$ceil_mode,
                   UnitAttr:$count_include_pad);
}

//===----------------------------------------------------------------------===//
// Reductions and softmax
//===----------------------------------------------------------------------===//

class Kiln_ReduceOp<string mnemonic, Type type = Kiln_NumericTensor>
    : Kiln_Op<mnemonic, [SameOperandsAndResultElementType]> {
  let description = [{
    Reduces over `axes` (unique, in [-rank, rank)); an empty list reduces
    nothing. With `keepdims` reduced dimensions stay as size 1.

    ```mlir
    %s = kiln.}] # mnemonic # [{ %x axes = [1] keepdims
           : tensor<2x3xf32> -> tensor<2x1xf32>
    ```
  }];
  let arguments = (ins type:$input, DenseI64ArrayAttr:$axes,
                   UnitAttr:$keepdims);
  let results = (outs type:$output);
  let assemblyFormat = "$input `axes` `=` $axes (`keepdims` $keepdims^)? "
                       "attr-dict `:` type($input) `->` type($output)";
  let hasFolder = 1;
  let hasCanonicalizer = 1;
  let extraDefinition = [{
    ::llvm::LogicalResult $cppClass::inferReturnTypes(
        ::mlir::MLIRContext *, std::optional<::mlir::Location> loc,
        Adaptor adaptor, ::llvm::SmallVectorImpl<::mlir::Type> &types) {
      return ::kiln::detail::inferReduceResult(
          loc, adaptor.getInput().getType(), adaptor.getAxes(),
          adaptor.getKeepdims(), ::mlir::Type(), types);
    }
    ::mlir::OpFoldResult $cppClass::fold(FoldAdaptor) {
      return ::kiln::detail::foldEmptyReduction(getOperation());
    }
    void $cppClass::getCanonicalizationPatterns(
        ::mlir::RewritePatternSet &patterns, ::mlir::MLIRContext *context) {
      ::kiln::detail::populateNormalizeAxesPatterns<$cppClass>(patterns,
                                                               context);
    }
  }];
}

def Kiln_ReduceSumOp : Kiln_ReduceOp<"reduce_sum"> {
  let summary = "sum over axes";
}
def Kiln_ReduceMeanOp : Kiln_ReduceOp<"reduce_mean"> {
  let summary = "arithmetic mean over axes";
}
def Kiln_ReduceMaxOp : Kiln_ReduceOp<"reduce_max"> {
  let summary = "maximum over axes";
}
def Kiln_ReduceMinOp : Kiln_ReduceOp<"reduce_min"> {
  let summary = "minimum over axes";
}
def Kiln_ReduceProdOp : Kiln_ReduceOp<"reduce_prod"> {
  let summary = "product over axes";
}

class Kiln_ArgReduceOp<string mnemonic> : Kiln_Op<mnemonic> {
  let description = [{
    Index (i64) of the extreme element along `axis`; ties pick the first
    index unless `select_last_index`.
  }];
  let arguments = (ins Kiln_NumericTensor:$input, I64Attr:$axis,
                   UnitAttr:$keepdims, UnitAttr:$select_last_index);
  let results = (outs RankedTensorOf<[I64]>:$output);
  let assemblyFormat = "$input `axis` `=` $axis (`keepdims` $keepdims^)? "
                       "attr-dict `:` type($input) `->` type($output)";
  let hasCanonicalizer = 1;
  let extraDefinition = [{
    ::llvm::LogicalResult $cppClass::inferReturnTypes(
        ::mlir::MLIRContext *context, std::optional<::mlir::Location> loc,
        Adaptor adaptor, ::llvm::SmallVectorImpl<::mlir::Type> &types) {
      int64_t axis = adaptor.getAxis();
      return ::kiln::detail::inferReduceResult(
          loc, adaptor.getInput().getType(), axis, adaptor.getKeepdims(),
          ::mlir::IntegerType::get(context, 64), types);
    }
    void $cppClass::getCanonicalizationPatterns(
        ::mlir::RewritePatternSet &patterns, ::mlir::MLIRContext *context) {
      ::kiln::detail::populateNormalizeAxesPatterns<$cppClass>(patterns,
                                                               context);
    }
  }];
}

def Kiln_ArgMaxOp : Kiln_ArgReduceOp<"argmax"> {
  let summary = "index of the maximum along an axis";
}
def Kiln_ArgMinOp : Kiln_ArgReduceOp<"argmin"> {
  let summary = "index of the minimum along an axis";
}

class Kiln_SoftmaxFamilyOp<string mnemonic>
    : Kiln_Op<mnemonic, [SameOperandsAndResultElementType]> {
  let arguments = (ins Kiln_FloatTensor:$input, I64Attr:$axis);
  let results = (outs Kiln_FloatTensor:$output);
  let assemblyFormat = "$input `axis` `=` $axis attr-dict `:` type($input) "
                       "`->` type($output)";
  let hasCanonicalizer = 1;
  let extraDefinition = [{
    ::llvm::LogicalResult $cppClass::inferReturnTypes(
        ::mlir::MLIRContext *, std::optional<::mlir::Location> loc,
        Adaptor adaptor, ::llvm::SmallVectorImpl<::mlir::Type> &types) {
      return ::kiln::detail::inferSameTypeAlongAxis(
          loc, adaptor.getInput().getType(), adaptor.getAxis(), types);
    }
    void $cppClass::getCanonicalizationPatterns(
        ::mlir::RewritePatternSet &patterns, ::mlir::MLIRContext *context) {
      ::kiln::detail::populateNormalizeAxesPatterns<$cppClass>(patterns,
                                                               context);
    }
  }];
}

def Kiln_SoftmaxOp : Kiln_SoftmaxFamilyOp<"softmax"> {
  let summary = "exp(x - max) / sum(exp(x - max)) along one axis";
}
def Kiln_LogSoftmaxOp : Kiln_SoftmaxFamilyOp<"log_softmax"> {
  let summary = "log of softmax along one axis";
}

//===----------------------------------------------------------------------===//
// Data movement
//===----------------------------------------------------------------------===//

// Ops whose target shape is either an attribute or, before constant folding,
// a 1-D i64 tensor operand.
class Kiln_ShapedByOp<string mnemonic, list<Trait> traits = []>
    : Kiln_Op<mnemonic, traits # [AllElementTypesMatch<["input", "output"]>]> {
  let arguments = (ins Kiln_Tensor:$input,
                   Optional<Kiln_ShapeTensor>:$shape_tensor,
                   OptionalAttr<DenseI64ArrayAttr>:$shape);
  let results = (outs Kiln_Tensor:$output);
  let assemblyFormat = "$input (`by` $shape_tensor^)? (`to` $shape^)? "
                       "attr-dict `:` type(operands) `->` type($output)";
  let hasVerifier = 1;
  let hasFolder = 1;
  let hasCanonicalizer = 1;
  let extraDefinition = [{
    ::llvm::LogicalResult $cppClass::verify() {
      return ::kiln::detail::verifyShapedByOp(*this, getShapeTensor(),
                                              getShapeAttr());
    }
  }];
  let builders = [
    OpBuilder<(ins "::mlir::Value":$input, "::llvm::ArrayRef<int64_t>":$shape),
    [{ build($_builder, $_state, input, ::mlir::Value(),
             $_builder.getDenseI64ArrayAttr(shape)); }]>
  ];
}

def Kiln_ReshapeOp : Kiln_ShapedByOp<"reshape"> {
  let summary = "same elements, new shape; one target dim may be -1";
  let description = [{
    Target dims are sizes >= 0 or a single -1 that takes what is left. ONNX's
    `0` (copy the input dim) is resolved by the frontend.

    ```mlir
    %1 = kiln.reshape %0 to [2, -1] : tensor<6xf32> -> tensor<2x3xf32>
    %3 = kiln.reshape %0 by %2 : tensor<6xf32>, tensor<2xi64> -> tensor<?x?xf32>
    ```
  }];
}

def Kiln_ExpandOp : Kiln_ShapedByOp<"expand"> {
  let summary = "broadcast to a shape (ONNX Expand, numpy broadcasting)";
  let description = [{
    The result shape is the numpy broadcast of the input shape and the target
    shape (both directions, as ONNX Expand).

    ```mlir
    %1 = kiln.expand %0 to [4, 3] : tensor<1x3xf32> -> tensor<4x3xf32>
    ```
  }];
}

def Kiln_TransposeOp : Kiln_Op<"transpose", [SameOperandsAndResultElementType]> {
  let summary = "permute dimensions: output dim i is input dim perm[i]";
  let arguments = (ins Kiln_Tensor:$input, DenseI64ArrayAttr:$perm);
  let results = (outs Kiln_Tensor:$output);
  let assemblyFormat = "$input `perm` `=` $perm attr-dict `:` type($input) "
                       "`->` type($output)";
  let hasFolder = 1;
}

def Kiln_ConcatOp : Kiln_Op<"concat", [SameOperandsAndResultElementType]> {
  let summary = "join tensors along an axis";
  let arguments = (ins Variadic<Kiln_Tensor>:$inputs, I64Attr:$axis);
  let results = (outs Kiln_Tensor:$output);
  let assemblyFormat = "$inputs `axis` `=` $axis attr-dict `:` "
                       "functional-type(operands, results)";
  let hasFolder = 1;
  let hasCanonicalizer = 1;
}

def Kiln_SplitOp : Kiln_Op<"split", [SameOperandsAndResultElementType]> {
  let summary = "cut a tensor into pieces of given sizes along an axis";
  let arguments = (ins Kiln_Tensor:$input, I64Attr:$axis,
                   DenseI64ArrayAttr:$sizes);
  let results = (outs Variadic<Kiln_Tensor>:$outputs);
  let assemblyFormat = "$input `axis` `=` $axis `sizes` `=` $sizes attr-dict "
                       "`:` type($input) `->` type($outputs)";
  let hasCanonicalizer = 1;
}

def Kiln_SliceOp : Kiln_Op<"slice", [SameOperandsAndResultElementType]> {
  let summary = "strided slice with one (start, end, step) per dimension";
  let description = [{
    Normalized ONNX Slice: one entry per dimension, `step != 0`. For a static
    dim d: with a positive step 0 <= start <= end <= d; with a negative step
    -1 <= end <= start <= d - 1 (end -1 means "through index 0").

    ```mlir
    %1 = kiln.slice %0 starts = [0, 1] ends = [4, 7] steps = [1, 2]
           : tensor<4x8xf32> -> tensor<4x3xf32>
    ```
  }];
  let arguments = (ins Kiln_Tensor:$input, DenseI64ArrayAttr:$starts,
                   DenseI64ArrayAttr:$ends, DenseI64ArrayAttr:$steps);
  let results = (outs Kiln_Tensor:$output);
  let assemblyFormat = "$input `starts` `=` $starts `ends` `=` $ends "
                       "`steps` `=` $steps attr-dict `:` type($input) `->` "
                       "type($output)";
  let hasFolder = 1;
}

def Kiln_GatherOp : Kiln_Op<"gather"> {
  let summary = "pick slices along an axis by index (ONNX Gather)";
  let description = [{
    Result shape: `data[:axis] + indices + data[axis+1:]`. Negative indices
    count from the end of the axis.
  }];
  let arguments = (ins Kiln_Tensor:$data, Kiln_IndexTensor:$indices,
                   I64Attr:$axis);
  let results = (outs Kiln_Tensor:$output);
  let assemblyFormat = "$data `[` $indices `]` `axis` `=` $axis attr-dict `:` "
                       "functional-type(operands, results)";
  let hasFolder = 1;
  let hasCanonicalizer = 1;
}

def Kiln_PadOp : Kiln_Op<"pad", [SameOperandsAndResultElementType]> {
  let summary = "pad every dimension (leading pads, then trailing pads)";
  let description = [{
    `pads` has 2 * rank entries: the leading pad of each dim, then the
    trailing pad of each dim (ONNX order). Negative pads crop.
  }];
  let arguments = (ins Kiln_Tensor:$input, DenseI64ArrayAttr:$pads,
                   Kiln_PadModeAttr:$mode,
                   DefaultValuedAttr<F64Attr, "0.0">:$value);
  let results = (outs Kiln_Tensor:$output);
  let assemblyFormat = "$input `pads` `=` $pads `mode` `=` $mode attr-dict "
                       "`:` type($input) `->` type($output)";
}

def Kiln_ResizeOp : Kiln_Op<"resize", [SameOperandsAndResultElementType]> {
  let summary = "nearest or (multi)linear resampling to a static size";
  let description = [{
    ONNX Resize with the sizes resolved at import. Output coordinate `o`
    along dim `d` maps to input coordinate `x` by `coordinate_transform`
    using `scales[d]` (the model's scale, or `sizes[d] / input[d]`), then
    `nearest_mode` rounds it (nearest) or its neighbours are blended
    (linear, over every dim whose size changes).

    ```mlir
    %y = kiln.resize %x sizes = [1, 3, 8, 8] scales = [1.0, 1.0, 2.0, 2.0]
           mode = linear coordinate_transform = half_pixel
           nearest_mode = round_prefer_floor
           : tensor<1x3x4x4xf32> -> tensor<1x3x8x8xf32>
    ```
  }];
  let arguments = (ins Kiln_FloatTensor:$input, DenseI64ArrayAttr:$sizes,
                   DenseF32ArrayAttr:$scales, Kiln_ResizeModeAttr:$mode,
                   Kiln_CoordinateTransformAttr:$coordinate_transform,
                   Kiln_NearestModeAttr:$nearest_mode);
  let results = (outs Kiln_FloatTensor:$output);
  let assemblyFormat = [{
    $input `sizes` `=` $sizes `scales` `=` $scales `mode` `=` $mode
    `coordinate_transform` `=` $coordinate_transform
    `nearest_mode` `=` $nearest_mode attr-dict `:` type($input) `->`
    type($output)
  }];
}

def Kiln_ShapeOfOp : Kiln_Op<"shape_of"> {
  let summary = "the shape of a tensor as a 1-D i64 tensor (ONNX Shape)";
  let arguments = (ins Kiln_Tensor:$input);
  let results = (outs Kiln_ShapeTensor:$output);
  let assemblyFormat = "$input attr-dict `:` type($input) `->` type($output)";
  let hasFolder = 1;
}

//===----------------------------------------------------------------------===//
// Kernel regions
//===----------------------------------------------------------------------===//

def Kiln_KernelOp : Op<Kiln_Dialect, "kernel", [IsolatedFromAbove,
    RecursiveMemoryEffects, SingleBlockImplicitTerminator<"YieldOp">]> {
  let summary = "a fused group of ops that becomes one generated kernel";
  let description = [{
    `kiln-fuse-kernels` groups the graph's ops into kernel regions; each
    region is generated as one pass over memory. The body sees the kernel's
    inputs as block arguments and yields its outputs (values that ops outside
    the kernel or the function's return use). `kind` names the kernel's root:
    `contraction` (a matmul or convolution with its epilogue), `reduction`
    (a reduction or softmax with its producers and consumers), `elementwise`,
    or the name of a single op that does not fuse (`gather`, `pad`, ...).

    ```mlir
    %r = kiln.kernel "elementwise" (%x, %b) : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xf32> {
    ^bb0(%xa: tensor<4x8xf32>, %ba: tensor<8xf32>):
      %s = kiln.add %xa, %ba : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xf32>
      %t = kiln.relu %s : tensor<4x8xf32> -> tensor<4x8xf32>
      kiln.yield %t : tensor<4x8xf32>
    }
    ```
  }];
  let arguments = (ins StrAttr:$kind, Variadic<AnyRankedTensor>:$inputs);
  let results = (outs Variadic<AnyRankedTensor>:$outputs);
  let regions = (region SizedRegion<1>:$body);
  let assemblyFormat = [{
    $kind `(` $inputs `)` attr-dict `:` functional-type($inputs, results)
    $body
  }];
  let hasVerifier = 1;
  let skipDefaultBuilders = 1;
  let builders = [
    OpBuilder<(ins "::llvm::StringRef":$kind, "::mlir::ValueRange":$inputs,
                   "::mlir::TypeRange":$outputTypes)>
  ];
}

def Kiln_YieldOp : Op<Kiln_Dialect, "yield", [Pure, Terminator,
    HasParent<"KernelOp">]> {
  let summary = "the outputs of a kernel region";
  let arguments = (ins Variadic<AnyRankedTensor>:$values);
  let assemblyFormat = "attr-dict ($values^ `:` type($values))?";
  let builders = [OpBuilder<(ins), [{ build($_builder, $_state, {}); }]>];
}

#endif // KILN_DIALECT_KILN_IR_KILNOPS_TD
