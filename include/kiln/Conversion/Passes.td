//===- Passes.td - kiln conversion passes ------------------*- tablegen -*-===//

#ifndef KILN_CONVERSION_PASSES_TD
#define KILN_CONVERSION_PASSES_TD

include "mlir/Pass/PassBase.td"

def ConvertKilnToLinalg : Pass<"convert-kiln-to-linalg", "::mlir::ModuleOp"> {
  let summary = "Lower kiln ops to linalg, tensor, arith and math on tensors";
  let description = [{
    Elementwise ops (with numpy broadcasting folded into the indexing maps),
    matmul, reductions and the softmax family become `linalg.generic` /
    named linalg ops; data movement becomes linalg and tensor ops; constants
    become `arith.constant`. Element types become signless (`ui8` -> `i8`);
    each op's computation picks signed or unsigned arithmetic from the kiln
    type, and function signatures are converted the same way. An op without
    a lowering is reported, all at once, and the pass fails.
  }];
  let options = [
    Option<"implicitGemmConvs", "implicit-gemm-convs", "bool",
           /*default=*/"false",
           "Dense 2-D f32 convolutions as implicit GEMMs over a laid-out "
           "input (the CPU target's kiln-lower-matmul reads them) instead "
           "of im2col + matmul, where little is wasted; grouped f32 "
           "convolutions of one image in the same forms, batched over the "
           "groups, rather than a loop nest">,
    Option<"winogradConvs", "winograd-convs", "bool", /*default=*/"false",
           "3x3 stride-1 f32 convolutions with constant filters as Winograd "
           "F(2x2, 3x3) (transforms + 16 matmuls with 2.25x fewer "
           "multiplies), where that pays">,
    Option<"matmulTileRows", "matmul-tile-rows", "int64_t", /*default=*/"8",
           "Rows of kiln-lower-matmul's register tile: with vector-lanes, "
           "whether a convolution's matmul takes its output pixels as rows">,
    Option<"vectorLanes", "vector-lanes", "int64_t", /*default=*/"16",
           "f32 lanes of the target's vectors (16: AVX-512, 8: AVX2)">,
  ];
  let dependentDialects = [
    "::mlir::arith::ArithDialect", "::mlir::func::FuncDialect",
    "::mlir::linalg::LinalgDialect", "::mlir::math::MathDialect",
    "::mlir::scf::SCFDialect", "::mlir::tensor::TensorDialect"
  ];
}

def ConvertMemRefCopyToLinalg
    : Pass<"convert-memref-copy-to-linalg", "::mlir::func::FuncOp"> {
  let summary = "Rewrite memref.copy as linalg.copy";
  let description = [{
    A memref.copy between buffers with non-identity layouts (into a subview,
    as tensor.pad and tensor.insert_slice bufferize) lowers to a call into
    MLIR's C runner library, which a model.so cannot link. As linalg.copy it
    becomes ordinary loops.
  }];
  let dependentDialects = ["::mlir::linalg::LinalgDialect"];
}

#endif // KILN_CONVERSION_PASSES_TD
