//===- Importer.cpp - ONNX graph to kiln dialect --------------------------===//
//
// Walks the graph in order: pins the input shapes, turns initializers into
// constants, converts each node with the registered converter, and checks
// the outputs. Before converting anything it lists every unsupported op of
// the model at once.
//
//===----------------------------------------------------------------------===//

#include "ImporterImpl.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Matchers.h"
#include "mlir/IR/Verifier.h"

#include "llvm/ADT/StringSet.h"
#include "llvm/Support/Path.h"
#include <map>

using namespace mlir;

namespace kiln::frontend {

//===----------------------------------------------------------------------===//
// ConverterRegistry
//===----------------------------------------------------------------------===//

void ConverterRegistry::add(llvm::StringRef opType, ConvertFn fn,
                            unsigned requiredInputs, int64_t sinceVersion) {
  auto &versions = converters[opType];
  versions.push_back({sinceVersion, requiredInputs, std::move(fn)});
  llvm::sort(versions, [](const Converter &a, const Converter &b) {
    return a.sinceVersion < b.sinceVersion;
  });
}

const Converter *ConverterRegistry::lookup(llvm::StringRef domain,
                                           llvm::StringRef opType,
                                           int64_t opset) const {
  if (!domain.empty() && domain != "ai.onnx")
    return nullptr;
  auto it = converters.find(opType);
  if (it == converters.end())
    return nullptr;
  const Converter *found = nullptr;
  for (const Converter &converter : it->second)
    if (converter.sinceVersion <= opset)
      found = &converter;
  return found;
}

const ConverterRegistry &converterRegistry() {
  static const ConverterRegistry registry = [] {
    ConverterRegistry r;
    registerElementwiseConverters(r);
    registerContractionConverters(r);
    registerNormalizationConverters(r);
    registerReductionConverters(r);
    registerDataMovementConverters(r);
    registerGeneratorConverters(r);
    return r;
  }();
  return registry;
}

//===----------------------------------------------------------------------===//
// NodeContext
//===----------------------------------------------------------------------===//

const onnx::AttributeProto *NodeContext::attribute(llvm::StringRef name) const {
  for (const onnx::AttributeProto &attr : node.attribute())
    if (attr.name() == name)
      return &attr;
  return nullptr;
}

std::optional<int64_t> NodeContext::intAttr(llvm::StringRef name) const {
  const onnx::AttributeProto *attr = attribute(name);
  if (!attr || !attr->has_i())
    return std::nullopt;
  return attr->i();
}

std::optional<float> NodeContext::floatAttr(llvm::StringRef name) const {
  const onnx::AttributeProto *attr = attribute(name);
  if (!attr || !attr->has_f())
    return std::nullopt;
  return attr->f();
}

std::optional<SmallVector<int64_t>>
NodeContext::intsAttr(llvm::StringRef name) const {
  const onnx::AttributeProto *attr = attribute(name);
  if (!attr)
    return std::nullopt;
  return SmallVector<int64_t>(attr->ints().begin(), attr->ints().end());
}

std::optional<SmallVector<float>>
NodeContext::floatsAttr(llvm::StringRef name) const {
  const onnx::AttributeProto *attr = attribute(name);
  if (!attr)
    return std::nullopt;
  return SmallVector<float>(attr->floats().begin(), attr->floats().end());
}

std::optional<std::string> NodeContext::stringAttr(llvm::StringRef name) const {
  const onnx::AttributeProto *attr = attribute(name);
  if (!attr || !attr->has_s())
    return std::nullopt;
  return attr->s();
}

FailureOr<ElementsAttr> NodeContext::tensorAttr(llvm::StringRef name) {
  const onnx::AttributeProto *attr = attribute(name);
  if (!attr || !attr->has_t())
    return emitError() << "needs a tensor attribute '" << name << "'";
  return importTensor(attr->t(), context(), tensorOptions, location);
}

FailureOr<SmallVector<int64_t>>
NodeContext::constantInts(size_t i, llvm::StringRef what) {
  DenseIntElementsAttr values;
  if (!hasInput(i) || !matchPattern(input(i), m_Constant(&values)))
    return emitError() << what << " (input " << i
                       << ") must be known at compile time; a graph input "
                          "can be frozen with --const-input NAME=FILE.pb";
  return llvm::to_vector(
      llvm::map_range(values.getValues<APInt>(), [&](const APInt &v) {
        return values.getElementType().isUnsignedInteger()
                   ? static_cast<int64_t>(v.getZExtValue())
                   : v.getSExtValue();
      }));
}

FailureOr<double> NodeContext::constantScalar(size_t i, llvm::StringRef what) {
  DenseElementsAttr values;
  if (!hasInput(i) || !matchPattern(input(i), m_Constant(&values)) ||
      values.getNumElements() != 1)
    return emitError() << what << " (input " << i
                       << ") must be a constant with one element; a graph "
                          "input can be frozen with --const-input "
                          "NAME=FILE.pb";
  if (isa<FloatType>(values.getElementType()))
    return (*values.getValues<APFloat>().begin()).convertToDouble();
  APInt v = *values.getValues<APInt>().begin();
  return values.getElementType().isUnsignedInteger()
             ? static_cast<double>(v.getZExtValue())
             : static_cast<double>(v.getSExtValue());
}

InFlightDiagnostic NodeContext::emitError() {
  // Unnamed nodes are called <op>_<index> in their location.
  llvm::StringRef name = node.name();
  if (auto nameLoc = dyn_cast<NameLoc>(location))
    name = nameLoc.getName().strref();
  return mlir::emitError(location)
         << "ONNX " << node.op_type() << " node '" << name << "': ";
}

LogicalResult NodeContext::setResults(ArrayRef<Value> values) {
  for (int i = 0; i < node.output_size(); ++i) {
    if (node.output(i).empty())
      continue;
    if (static_cast<size_t>(i) >= values.size() || !values[i])
      return emitError() << "output " << i << " ('" << node.output(i)
                         << "') is not supported";
  }
  outputs.assign(values.begin(), values.end());
  return success();
}

Value NodeContext::scalar(Type elementType, double value) {
  auto type = RankedTensorType::get({}, elementType);
  Attribute element = isa<FloatType>(elementType)
                          ? Attribute(FloatAttr::get(elementType, value))
                          : Attribute(IntegerAttr::get(
                                elementType, static_cast<int64_t>(value)));
  return ConstantOp::create(builder, location,
                            DenseElementsAttr::get(type, element));
}

Value NodeContext::i64Vector(ArrayRef<int64_t> values) {
  auto type = RankedTensorType::get({static_cast<int64_t>(values.size())},
                                    builder.getI64Type());
  return ConstantOp::create(builder, location,
                            DenseIntElementsAttr::get(type, values));
}

FailureOr<Value> NodeContext::reshape(Value value, ArrayRef<int64_t> shape) {
  if (cast<RankedTensorType>(value.getType()).getShape() == shape)
    return value;
  return create<ReshapeOp>(value, Value(), builder.getDenseI64ArrayAttr(shape));
}

SmallVector<Value> NodeContext::buildAndFold(OperationState &state) {
  Operation *op = builder.create(state);
  SmallVector<Value> folded;
  if (succeeded(builder.tryFold(op, folded)) && !folded.empty()) {
    op->erase();
    return folded;
  }
  return SmallVector<Value>(op->getResults());
}

//===----------------------------------------------------------------------===//
// Helpers for converters
//===----------------------------------------------------------------------===//

FailureOr<int64_t> normalizeAxis(NodeContext &ctx, int64_t axis, int64_t rank) {
  if (axis < -rank || axis >= rank)
    return ctx.emitError() << "axis " << axis << " is out of range for rank "
                           << rank;
  return axis < 0 ? axis + rank : axis;
}

FailureOr<SmallVector<int64_t>> spatialAxes(NodeContext &ctx) {
  int64_t rank = ctx.inputRank(0);
  if (rank < 3)
    return ctx.emitError() << "needs an [N, C, D...] input";
  return llvm::to_vector(llvm::seq<int64_t>(2, rank));
}

FailureOr<SmallVector<int64_t>>
resolveWindowPads(NodeContext &ctx, ArrayRef<int64_t> spatialInput,
                  ArrayRef<int64_t> kernel, ArrayRef<int64_t> strides,
                  ArrayRef<int64_t> dilations) {
  size_t n = spatialInput.size();
  std::string autoPad = ctx.stringAttr("auto_pad").value_or("NOTSET");
  if (autoPad == "NOTSET") {
    SmallVector<int64_t> pads =
        ctx.intsAttr("pads").value_or(SmallVector<int64_t>(2 * n, 0));
    if (pads.size() != 2 * n)
      return ctx.emitError() << "pads has " << pads.size() << " entries; "
                             << 2 * n << " expected";
    return pads;
  }
  if (autoPad == "VALID")
    return SmallVector<int64_t>(2 * n, 0);
  if (autoPad != "SAME_UPPER" && autoPad != "SAME_LOWER")
    return ctx.emitError() << "unknown auto_pad '" << autoPad << "'";
  SmallVector<int64_t> pads(2 * n, 0);
  for (size_t i = 0; i < n; ++i) {
    int64_t out = (spatialInput[i] + strides[i] - 1) / strides[i];
    int64_t total = std::max<int64_t>(0, (out - 1) * strides[i] +
                                             (kernel[i] - 1) * dilations[i] +
                                             1 - spatialInput[i]);
    int64_t small = total / 2, large = total - small;
    pads[i] = autoPad == "SAME_UPPER" ? small : large;
    pads[i + n] = autoPad == "SAME_UPPER" ? large : small;
  }
  return pads;
}

//===----------------------------------------------------------------------===//
// GraphImporter
//===----------------------------------------------------------------------===//

namespace {

class GraphImporter {
public:
  GraphImporter(MLIRContext &context, onnx::ModelProto &model,
                llvm::StringRef sourceName, const ImportOptions &options,
                std::string baseDirectory)
      : context(context), model(model), graph(*model.mutable_graph()),
        options(options), builder(&context),
        fileLoc(FileLineColLoc::get(&context, sourceName, 0, 0)) {
    tensorOptions.baseDirectory = std::move(baseDirectory);
    tensorOptions.resourceThresholdBytes = options.resourceThresholdBytes;
  }

  OwningOpRef<ModuleOp> run() {
    if (failed(readOpset()) || failed(checkSupported()))
      return nullptr;
    SmallVector<Type> inputTypes;
    if (failed(importInputTypes(inputTypes)))
      return nullptr;
    OwningOpRef<ModuleOp> module = ModuleOp::create(fileLoc);
    builder.setInsertionPointToEnd(module->getBody());
    auto func = func::FuncOp::create(builder, fileLoc, "main",
                                     builder.getFunctionType(inputTypes, {}));
    Block *entry = func.addEntryBlock();
    builder.setInsertionPointToEnd(entry);
    for (auto [i, name] : llvm::enumerate(inputNames)) {
      values[name] = entry->getArgument(i);
      func.setArgAttr(i, "kiln.name", builder.getStringAttr(name));
    }
    if (failed(importInitializers()) || failed(importNodes()) ||
        failed(importOutputs(func)))
      return nullptr;
    if (failed(verify(*module)))
      return nullptr;
    return module;
  }

private:
  /// The default-domain opset (0 when the model imports none: then every
  /// default-domain op is reported as unsupported).
  LogicalResult readOpset() {
    for (const onnx::OperatorSetIdProto &entry : model.opset_import())
      if (entry.domain().empty() || entry.domain() == "ai.onnx")
        opset = entry.version();
    return success();
  }

  int64_t opsetOf(llvm::StringRef domain) const {
    for (const onnx::OperatorSetIdProto &entry : model.opset_import())
      if (entry.domain() == domain)
        return entry.version();
    return opset;
  }

  std::string nodeName(const onnx::NodeProto &node, int index) const {
    if (!node.name().empty())
      return node.name();
    return node.op_type() + "_" + std::to_string(index);
  }

  /// Reports every (domain, op, opset) of the graph without a converter,
  /// with the nodes that use it, in one error.
  LogicalResult checkSupported() {
    const ConverterRegistry &registry = converterRegistry();
    std::map<std::string, SmallVector<std::string>> unsupported;
    for (auto [index, node] : llvm::enumerate(graph.node())) {
      int64_t version = opsetOf(node.domain());
      if (registry.lookup(node.domain(), node.op_type(), version))
        continue;
      std::string key = node.op_type() + " (domain '" +
                        (node.domain().empty() ? "ai.onnx" : node.domain()) +
                        "', opset " + std::to_string(version) + ")";
      unsupported[key].push_back(nodeName(node, index));
    }
    if (unsupported.empty())
      return success();
    InFlightDiagnostic diag = emitError(fileLoc)
                              << "the model uses " << unsupported.size()
                              << " unsupported op(s):";
    for (auto &[op, nodes] : unsupported) {
      diag << "\n  " << op << " in " << nodes.size() << " node(s): ";
      for (auto [i, name] :
           llvm::enumerate(llvm::ArrayRef(nodes).take_front(5)))
        diag << (i ? ", " : "") << "'" << name << "'";
      if (nodes.size() > 5)
        diag << ", ...";
    }
    return diag;
  }

  /// Shapes of the real inputs (not initializers), with dynamic dims pinned.
  LogicalResult importInputTypes(SmallVectorImpl<Type> &types) {
    llvm::StringSet<> initializerNames;
    for (const onnx::TensorProto &init : graph.initializer())
      initializerNames.insert(init.name());
    bool ok = true;
    for (const onnx::ValueInfoProto &input : graph.input()) {
      if (initializerNames.contains(input.name()) ||
          options.constantInputs.count(input.name()))
        continue;
      FailureOr<Type> type = inputType(input);
      ok &= succeeded(type);
      if (succeeded(type)) {
        types.push_back(*type);
        inputNames.push_back(input.name());
      }
    }
    for (const auto &frozen : options.constantInputs)
      if (!llvm::any_of(graph.input(), [&](const onnx::ValueInfoProto &input) {
            return input.name() == frozen.getKey();
          })) {
        emitError(fileLoc) << "--const-input names '" << frozen.getKey()
                           << "', which is not an input of the model";
        ok = false;
      }
    for (const auto &pinned : options.inputShapes)
      if (!llvm::any_of(graph.input(), [&](const onnx::ValueInfoProto &input) {
            return input.name() == pinned.getKey() &&
                   !initializerNames.contains(input.name());
          })) {
        emitError(fileLoc) << "--input-shape names '" << pinned.getKey()
                           << "', which is not an input of the model";
        ok = false;
      }
    return success(ok);
  }

  FailureOr<Type> inputType(const onnx::ValueInfoProto &input) {
    const onnx::TypeProto &type = input.type();
    if (!type.has_tensor_type())
      return emitError(fileLoc)
             << "input '" << input.name() << "' is not a tensor";
    FailureOr<Type> elementType =
        importElementType(type.tensor_type().elem_type(), &context, fileLoc);
    if (failed(elementType))
      return failure();
    auto pinned = options.inputShapes.find(input.name());
    bool hasShape = type.tensor_type().has_shape();
    const auto &dims = type.tensor_type().shape().dim();
    if (pinned != options.inputShapes.end()) {
      if (hasShape && dims.size() != static_cast<int>(pinned->second.size()))
        return emitError(fileLoc)
               << "--input-shape gives input '" << input.name() << "' rank "
               << pinned->second.size() << " but the model declares rank "
               << dims.size();
      for (auto [i, dim] : llvm::enumerate(pinned->second))
        if (hasShape && dims[i].has_dim_value() && dims[i].dim_value() != dim)
          return emitError(fileLoc)
                 << "--input-shape gives input '" << input.name() << "' dim "
                 << i << " = " << dim << " but the model fixes it to "
                 << dims[i].dim_value();
      return RankedTensorType::get(pinned->second, *elementType);
    }
    if (!hasShape)
      return emitError(fileLoc)
             << "input '" << input.name() << "' has no shape; give one "
             << "with --input-shape " << input.name() << "=D0xD1x...";
    SmallVector<int64_t> shape;
    for (auto [i, dim] : llvm::enumerate(dims)) {
      if (dim.has_dim_value() && dim.dim_value() >= 0) {
        shape.push_back(dim.dim_value());
        continue;
      }
      auto value = dim.has_dim_param() ? options.dimValues.find(dim.dim_param())
                                       : options.dimValues.end();
      if (value != options.dimValues.end()) {
        shape.push_back(value->second);
        continue;
      }
      InFlightDiagnostic diag = emitError(fileLoc)
                                << "input '" << input.name() << "' dim " << i;
      if (dim.has_dim_param())
        diag << " ('" << dim.dim_param() << "') is dynamic; pin it with --dim "
             << dim.dim_param() << "=<size> or --input-shape " << input.name()
             << "=<shape>";
      else
        diag << " is dynamic; pin it with --input-shape " << input.name()
             << "=<shape>";
      return failure();
    }
    if (failed(checkedElementCount(shape, fileLoc)))
      return failure();
    return RankedTensorType::get(shape, *elementType);
  }

  /// Graph inputs the user froze to constants (--const-input).
  LogicalResult importConstantInputs() {
    for (const auto &frozen : options.constantInputs) {
      Location loc =
          NameLoc::get(builder.getStringAttr(frozen.getKey()), fileLoc);
      onnx::TensorProto tensor;
      if (failed(parseTensorFile(frozen.getValue(), tensor, loc)))
        return failure();
      FailureOr<ElementsAttr> value =
          importTensor(tensor, &context, tensorOptions, loc);
      if (failed(value))
        return failure();
      values[frozen.getKey()] = ConstantOp::create(builder, loc, *value);
    }
    return success();
  }

  LogicalResult importInitializers() {
    if (failed(importConstantInputs()))
      return failure();
    if (graph.sparse_initializer_size() > 0)
      return emitError(fileLoc) << "sparse initializers are not supported";
    for (onnx::TensorProto &init : *graph.mutable_initializer()) {
      Location loc = NameLoc::get(builder.getStringAttr(init.name()), fileLoc);
      // Large raw data moves into the constant; the rest is freed after.
      FailureOr<ElementsAttr> value =
          importTensor(init, &context, tensorOptions, loc, &init);
      if (failed(value))
        return failure();
      values[init.name()] = ConstantOp::create(builder, loc, *value);
      init.clear_raw_data();
    }
    return success();
  }

  LogicalResult importNodes() {
    llvm::StringSet<> producedLater;
    for (const onnx::NodeProto &node : graph.node())
      for (const std::string &output : node.output())
        producedLater.insert(output);
    const ConverterRegistry &registry = converterRegistry();
    for (auto [index, node] : llvm::enumerate(graph.node())) {
      std::string name = nodeName(node, index);
      Location loc = NameLoc::get(builder.getStringAttr(name), fileLoc);
      SmallVector<Value> inputs;
      for (const std::string &input : node.input()) {
        if (input.empty()) {
          inputs.push_back(nullptr);
          continue;
        }
        auto it = values.find(input);
        if (it == values.end())
          return emitError(loc)
                 << "ONNX " << node.op_type() << " node '" << name << "' uses '"
                 << input << "', "
                 << (producedLater.contains(input)
                         ? "which is produced later: the graph is not in "
                           "topological order or has a cycle"
                         : "which no node, input or initializer defines");
        inputs.push_back(it->second);
      }
      NodeContext ctx(node, opsetOf(node.domain()), inputs, builder, loc,
                      tensorOptions);
      const Converter *converter =
          registry.lookup(node.domain(), node.op_type(), ctx.opset());
      for (unsigned i = 0; i < converter->requiredInputs; ++i)
        if (!ctx.hasInput(i))
          return ctx.emitError() << "needs input " << i << " but has "
                                 << node.input_size() << " input(s)";
      if (failed(converter->fn(ctx)))
        return failure();
      for (auto [i, output] : llvm::enumerate(node.output()))
        if (!output.empty())
          values[output] = ctx.results()[i];
    }
    return success();
  }

  LogicalResult importOutputs(func::FuncOp func) {
    SmallVector<Value> results;
    for (const onnx::ValueInfoProto &output : graph.output()) {
      auto it = values.find(output.name());
      if (it == values.end())
        return emitError(fileLoc)
               << "graph output '" << output.name() << "' is never produced";
      Value value = it->second;
      if (failed(checkDeclaredType(output, value)))
        return failure();
      results.push_back(value);
    }
    func::ReturnOp::create(builder, fileLoc, results);
    func.setType(builder.getFunctionType(func.getArgumentTypes(),
                                         ValueRange(results).getTypes()));
    for (auto [i, output] : llvm::enumerate(graph.output()))
      func.setResultAttr(i, "kiln.name", builder.getStringAttr(output.name()));
    return success();
  }

  /// A declared output type must agree with what the graph computes.
  LogicalResult checkDeclaredType(const onnx::ValueInfoProto &output,
                                  Value value) {
    auto actual = cast<RankedTensorType>(value.getType());
    const onnx::TypeProto &type = output.type();
    if (!type.has_tensor_type())
      return success();
    if (type.tensor_type().elem_type() != 0) {
      FailureOr<Type> declared =
          importElementType(type.tensor_type().elem_type(), &context, fileLoc);
      if (failed(declared))
        return failure();
      if (*declared != actual.getElementType())
        return emitError(fileLoc)
               << "graph output '" << output.name() << "' is declared as "
               << *declared << " but computes " << actual.getElementType();
    }
    if (!type.tensor_type().has_shape())
      return success();
    const auto &dims = type.tensor_type().shape().dim();
    bool rankOk = dims.size() == actual.getRank();
    for (int i = 0; rankOk && i < dims.size(); ++i)
      rankOk = !dims[i].has_dim_value() ||
               dims[i].dim_value() == actual.getDimSize(i);
    if (!rankOk)
      return emitError(fileLoc)
             << "graph output '" << output.name()
             << "' has a declared shape that differs from the computed "
             << actual;
    return success();
  }

  MLIRContext &context;
  onnx::ModelProto &model;
  onnx::GraphProto &graph;
  const ImportOptions &options;
  OpBuilder builder;
  Location fileLoc;
  TensorImportOptions tensorOptions;
  int64_t opset = 0;
  SmallVector<std::string> inputNames;
  llvm::StringMap<Value> values;
};

} // namespace

//===----------------------------------------------------------------------===//
// Public API
//===----------------------------------------------------------------------===//

void registerImportDialects(MLIRContext &context) {
  context.loadDialect<KilnDialect, func::FuncDialect>();
}

std::optional<SmallVector<int64_t>> parseShape(llvm::StringRef text) {
  SmallVector<int64_t> shape;
  if (text.empty() || text == "scalar")
    return shape;
  SmallVector<llvm::StringRef> parts;
  text.split(parts, 'x');
  for (llvm::StringRef part : parts) {
    int64_t dim;
    if (part.getAsInteger(10, dim) || dim < 0)
      return std::nullopt;
    shape.push_back(dim);
  }
  return shape;
}

OwningOpRef<ModuleOp> importModelFile(MLIRContext &context,
                                      llvm::StringRef path,
                                      const ImportOptions &options) {
  registerImportDialects(context);
  onnx::ModelProto model;
  Location loc = FileLineColLoc::get(&context, path, 0, 0);
  if (failed(parseModelFile(path, model, loc)))
    return nullptr;
  llvm::SmallString<256> directory(path);
  llvm::sys::path::remove_filename(directory);
  if (directory.empty())
    directory = ".";
  return GraphImporter(context, model, path, options, std::string(directory))
      .run();
}

OwningOpRef<ModuleOp> importModelBytes(MLIRContext &context,
                                       llvm::StringRef bytes,
                                       llvm::StringRef baseDirectory,
                                       const ImportOptions &options) {
  registerImportDialects(context);
  onnx::ModelProto model;
  Location loc = FileLineColLoc::get(&context, "<memory>", 0, 0);
  if (failed(parseModelBytes(bytes, model, loc)))
    return nullptr;
  return GraphImporter(context, model, "<memory>", options,
                       std::string(baseDirectory))
      .run();
}

} // namespace kiln::frontend
