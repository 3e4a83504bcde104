//===- ImporterImpl.h - internals shared by the ONNX importer ---*- C++ -*-===//
//
// The pieces of the importer: model loading (ModelLoader.cpp), tensor data
// (TensorImport.cpp), the graph walk (Importer.cpp) and the per-family op
// converters (Elementwise.cpp, Contraction.cpp, ...). Converters see one
// node through NodeContext and build kiln ops with it.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_LIB_FRONTEND_ONNX_IMPORTERIMPL_H
#define KILN_LIB_FRONTEND_ONNX_IMPORTERIMPL_H

#include "kiln/Dialect/Kiln/IR/KilnOps.h"
#include "kiln/Frontend/ONNX/Importer.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/Matchers.h"

#include "llvm/ADT/StringMap.h"

#include "onnx/onnx_pb.h"

#include <functional>
#include <string>

namespace kiln::frontend {

//===----------------------------------------------------------------------===//
// Loading and tensors
//===----------------------------------------------------------------------===//

/// Parses a binary or text model file into `model`.
mlir::LogicalResult parseModelFile(llvm::StringRef path,
                                   onnx::ModelProto &model, mlir::Location loc);

/// Parses an ONNX TensorProto file (`.pb`, as in ONNX's test data).
mlir::LogicalResult parseTensorFile(llvm::StringRef path,
                                    onnx::TensorProto &tensor,
                                    mlir::Location loc);

/// Parses binary protobuf bytes into `model`.
mlir::LogicalResult parseModelBytes(llvm::StringRef bytes,
                                    onnx::ModelProto &model,
                                    mlir::Location loc);

/// Where tensor data comes from and how it is kept.
struct TensorImportOptions {
  /// Folder external data files must resolve inside; empty refuses them.
  std::string baseDirectory;
  int64_t resourceThresholdBytes = 1024;
};

/// The MLIR element type of an ONNX TensorProto data type.
mlir::FailureOr<mlir::Type> importElementType(int32_t dataType,
                                              mlir::MLIRContext *context,
                                              mlir::Location loc);

/// The constant value of an initializer or a Constant node's tensor:
/// checked against its shape, from raw_data, typed fields or an external
/// file. Large tensors become dense_resource blobs named after the tensor.
/// With `takeRawDataFrom` (the same tensor, mutable) large raw_data moves
/// into the blob instead of being copied.
mlir::FailureOr<mlir::ElementsAttr>
importTensor(const onnx::TensorProto &tensor, mlir::MLIRContext *context,
             const TensorImportOptions &options, mlir::Location loc,
             onnx::TensorProto *takeRawDataFrom = nullptr);

/// Product of `dims`, or failure when a dim is negative or it overflows.
mlir::FailureOr<int64_t> checkedElementCount(llvm::ArrayRef<int64_t> dims,
                                             mlir::Location loc);

//===----------------------------------------------------------------------===//
// Converters
//===----------------------------------------------------------------------===//

/// One ONNX node as a converter sees it: its inputs as kiln values (all with
/// static shapes), its attributes, and where to put its results.
class NodeContext {
public:
  NodeContext(const onnx::NodeProto &node, int64_t opset,
              llvm::ArrayRef<mlir::Value> inputs, mlir::OpBuilder &builder,
              mlir::Location loc, const TensorImportOptions &tensorOptions)
      : node(node), opsetVersion(opset), inputs(inputs), builder(builder),
        location(loc), tensorOptions(tensorOptions) {}

  const onnx::NodeProto &proto() const { return node; }
  llvm::StringRef opType() const { return node.op_type(); }
  int64_t opset() const { return opsetVersion; }
  mlir::OpBuilder &b() { return builder; }
  mlir::Location loc() const { return location; }
  mlir::MLIRContext *context() { return builder.getContext(); }

  /// Number of inputs listed, counting omitted optional ones.
  size_t numInputs() const { return inputs.size(); }
  /// Whether input `i` is given (listed and not the empty name).
  bool hasInput(size_t i) const { return i < inputs.size() && inputs[i]; }
  /// Input `i`, or null when omitted.
  mlir::Value input(size_t i) const {
    return hasInput(i) ? inputs[i] : nullptr;
  }
  mlir::RankedTensorType inputType(size_t i) const {
    return llvm::cast<mlir::RankedTensorType>(input(i).getType());
  }
  int64_t inputRank(size_t i) const { return inputType(i).getRank(); }
  mlir::Type inputElementType(size_t i) const {
    return inputType(i).getElementType();
  }

  const onnx::AttributeProto *attribute(llvm::StringRef name) const;
  std::optional<int64_t> intAttr(llvm::StringRef name) const;
  int64_t intAttr(llvm::StringRef name, int64_t defaultValue) const {
    return intAttr(name).value_or(defaultValue);
  }
  std::optional<float> floatAttr(llvm::StringRef name) const;
  float floatAttr(llvm::StringRef name, float defaultValue) const {
    return floatAttr(name).value_or(defaultValue);
  }
  std::optional<llvm::SmallVector<int64_t>>
  intsAttr(llvm::StringRef name) const;
  std::optional<llvm::SmallVector<float>>
  floatsAttr(llvm::StringRef name) const;
  std::optional<std::string> stringAttr(llvm::StringRef name) const;

  /// The integer values of constant input `i` (after import-time folding),
  /// or an error saying the input must be known at compile time.
  mlir::FailureOr<llvm::SmallVector<int64_t>>
  constantInts(size_t i, llvm::StringRef what);
  /// A tensor-valued attribute (Constant's `value`, ConstantOfShape's) as
  /// a constant.
  mlir::FailureOr<mlir::ElementsAttr> tensorAttr(llvm::StringRef name);

  /// The single value of a constant scalar (or one-element) input.
  mlir::FailureOr<double> constantScalar(size_t i, llvm::StringRef what);

  /// An error at this node: "ONNX <op> node '<name>': ...".
  mlir::InFlightDiagnostic emitError();

  /// Records the node's outputs (in order; fewer than declared is an error).
  mlir::LogicalResult setResults(llvm::ArrayRef<mlir::Value> values);
  mlir::LogicalResult setResult(mlir::Value value) {
    return setResults(llvm::ArrayRef<mlir::Value>(value));
  }
  /// Records a single output that may have failed to build.
  mlir::LogicalResult setResult(mlir::FailureOr<mlir::Value> value) {
    return mlir::failed(value) ? mlir::failure() : setResult(*value);
  }
  llvm::ArrayRef<mlir::Value> results() const { return outputs; }

  /// Builds a kiln op whose result types are inferred, and folds it right
  /// away when its operands are constant (so shape subgraphs become
  /// constants while importing). Operands whose shapes do not fit the op are
  /// reported at this node instead of aborting in the op builder. `args` are
  /// those of the op's ODS builder that takes explicit result types, minus
  /// the types.
  template <typename OpTy, typename... Args>
  mlir::FailureOr<llvm::SmallVector<mlir::Value>> createMulti(Args &&...args) {
    mlir::OperationState state(location, OpTy::getOperationName());
    if constexpr (OpTy::template hasTrait<mlir::OpTrait::OneResult>())
      OpTy::build(builder, state, mlir::Type(), std::forward<Args>(args)...);
    else
      OpTy::build(builder, state, mlir::TypeRange(),
                  std::forward<Args>(args)...);
    state.types.clear();
    if (mlir::failed(OpTy::inferReturnTypes(
            context(), location, state.operands,
            state.attributes.getDictionary(context()), state.getRawProperties(),
            state.regions, state.types)))
      return mlir::failure();
    return buildAndFold(state);
  }
  template <typename OpTy, typename... Args>
  mlir::FailureOr<mlir::Value> create(Args &&...args) {
    auto results = createMulti<OpTy>(std::forward<Args>(args)...);
    if (mlir::failed(results))
      return mlir::failure();
    return results->front();
  }

  /// A scalar (rank-0) constant of `elementType`.
  mlir::Value scalar(mlir::Type elementType, double value);
  /// A 1-D i64 constant.
  mlir::Value i64Vector(llvm::ArrayRef<int64_t> values);
  /// `kiln.reshape` to a shape (no-op when already that shape).
  mlir::FailureOr<mlir::Value> reshape(mlir::Value value,
                                       llvm::ArrayRef<int64_t> shape);

private:
  llvm::SmallVector<mlir::Value> buildAndFold(mlir::OperationState &state);

  const onnx::NodeProto &node;
  int64_t opsetVersion;
  llvm::ArrayRef<mlir::Value> inputs;
  mlir::OpBuilder &builder;
  mlir::Location location;
  const TensorImportOptions &tensorOptions;
  llvm::SmallVector<mlir::Value> outputs;
};

using ConvertFn = std::function<mlir::LogicalResult(NodeContext &)>;

/// Converters by ONNX op type (default domain). A converter is registered
/// from the first opset version it handles; the one with the highest version
/// not above the model's opset is used.
struct Converter {
  int64_t sinceVersion;
  /// Inputs that must be present; the converter checks optional ones.
  unsigned requiredInputs;
  ConvertFn fn;
};

class ConverterRegistry {
public:
  void add(llvm::StringRef opType, ConvertFn fn, unsigned requiredInputs = 1,
           int64_t sinceVersion = 1);
  /// The converter for `opType` at `opset`, or null.
  const Converter *lookup(llvm::StringRef domain, llvm::StringRef opType,
                          int64_t opset) const;

private:
  llvm::StringMap<std::vector<Converter>> converters;
};

/// The registry with every supported op.
const ConverterRegistry &converterRegistry();

void registerElementwiseConverters(ConverterRegistry &registry);
void registerContractionConverters(ConverterRegistry &registry);
void registerNormalizationConverters(ConverterRegistry &registry);
void registerReductionConverters(ConverterRegistry &registry);
void registerDataMovementConverters(ConverterRegistry &registry);
void registerGeneratorConverters(ConverterRegistry &registry);

//===----------------------------------------------------------------------===//
// Helpers shared by converters
//===----------------------------------------------------------------------===//

/// Normalizes a possibly negative ONNX axis, reporting an out-of-range one.
mlir::FailureOr<int64_t> normalizeAxis(NodeContext &ctx, int64_t axis,
                                       int64_t rank);

/// The spatial dims [2, rank) of an [N, C, D...] input 0, or an error when
/// it has none.
mlir::FailureOr<llvm::SmallVector<int64_t>> spatialAxes(NodeContext &ctx);

/// Explicit leading-then-trailing pads of a conv/pool window, resolving
/// auto_pad (SAME_UPPER, SAME_LOWER, VALID) against the input shape.
mlir::FailureOr<llvm::SmallVector<int64_t>>
resolveWindowPads(NodeContext &ctx, llvm::ArrayRef<int64_t> spatialInput,
                  llvm::ArrayRef<int64_t> kernel,
                  llvm::ArrayRef<int64_t> strides,
                  llvm::ArrayRef<int64_t> dilations);

} // namespace kiln::frontend

#endif // KILN_LIB_FRONTEND_ONNX_IMPORTERIMPL_H
