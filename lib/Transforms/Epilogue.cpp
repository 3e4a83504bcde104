//===- Epilogue.cpp - elementwise work applied on a kernel's registers ---===//

#include "kiln/Transforms/Epilogue.h"
#include "kiln/Transforms/KernelEmitters.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/Interfaces/ViewLikeInterface.h"

using namespace mlir;

namespace kiln {
namespace {

/// Whether every op of the body can run on vectors lane by lane, and the
/// output's current value is not read (an elementwise epilogue).
bool isVectorizableBody(Block &body) {
  for (Operation &op : body.without_terminator()) {
    if (op.getNumRegions() || op.getNumResults() != 1 ||
        !isa<arith::ArithDialect, math::MathDialect>(op.getDialect()) ||
        !op.getResult(0).getType().isIntOrFloat())
      return false;
  }
  return body.getArguments().back().use_empty();
}

/// The buffer a chain of reshapes views (same data, same order).
Value stripReshapes(Value value) {
  while (true) {
    if (auto expand = value.getDefiningOp<memref::ExpandShapeOp>())
      value = expand.getSrc();
    else if (auto collapse = value.getDefiningOp<memref::CollapseShapeOp>())
      value = collapse.getSrc();
    else
      return value;
  }
}

/// Whether `buffer` and the reshapes and subviews of it are used only by
/// `users` (and by zero fills, which the producer makes redundant).
bool onlyUsedBy(Value buffer, ArrayRef<Operation *> users) {
  for (Operation *user : buffer.getUsers()) {
    if (llvm::is_contained(users, user) || isa<linalg::FillOp>(user))
      continue;
    if (!isa<memref::ExpandShapeOp, memref::CollapseShapeOp, memref::SubViewOp>(
            user) ||
        !onlyUsedBy(user->getResult(0), users))
      return false;
  }
  return true;
}

/// `buffer` (dense, static) as a view of shape `shape` with as many
/// elements: collapsed to one dim (or none), then expanded.
Value viewAs(OpBuilder &b, Location loc, Value buffer,
             ArrayRef<int64_t> shape) {
  auto type = cast<MemRefType>(buffer.getType());
  if (type.getShape() == shape)
    return buffer;
  if (type.getRank() > 1 || shape.empty()) {
    SmallVector<ReassociationIndices> groups;
    if (!shape.empty())
      groups.push_back(llvm::to_vector(llvm::seq<int64_t>(0, type.getRank())));
    buffer = memref::CollapseShapeOp::create(b, loc, buffer, groups);
  }
  if (shape.size() <= 1)
    return buffer;
  ReassociationIndices all =
      llvm::to_vector(llvm::seq<int64_t>(0, shape.size()));
  return memref::ExpandShapeOp::create(
      b, loc, MemRefType::get(shape, type.getElementType()), buffer,
      ArrayRef<ReassociationIndices>{all});
}

int64_t product(ArrayRef<int64_t> sizes) {
  int64_t result = 1;
  for (int64_t size : sizes)
    result *= size;
  return result;
}

/// `row` within a tensor of `period` rows repeating (itself without one).
Value periodicRow(OpBuilder &b, Location loc, Value row, int64_t period) {
  if (!period)
    return row;
  return arith::RemUIOp::create(b, loc, row,
                                arith::ConstantIndexOp::create(b, loc, period));
}

/// The constant global `value` reads, if it is one with a known value.
memref::GlobalOp constantGlobal(Value value) {
  auto get = value.getDefiningOp<memref::GetGlobalOp>();
  if (!get)
    return {};
  auto global = SymbolTable::lookupNearestSymbolFrom<memref::GlobalOp>(
      get, get.getNameAttr());
  if (!global || !global.getConstant() ||
      !isa_and_nonnull<DenseElementsAttr>(global.getConstantInitValue()))
    return {};
  return global;
}

/// A get_global of an i8 copy of the constant i1 global `value` reads
/// (made once per module, next to it).
Value widenedCopy(OpBuilder &b, Location loc, Value value) {
  memref::GlobalOp global = constantGlobal(value);
  std::string name = (global.getSymName() + "_i8").str();
  auto type = MemRefType::get(global.getType().getShape(), b.getI8Type());
  auto copy = SymbolTable::lookupNearestSymbolFrom<memref::GlobalOp>(
      global, b.getStringAttr(name));
  if (!copy) {
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointAfter(global);
    auto values = cast<DenseElementsAttr>(global.getConstantInitValue());
    auto widened = values.mapValues(
        b.getI8Type(), [](const APInt &bit) { return bit.zext(8); });
    copy = memref::GlobalOp::create(
        b, loc, name, b.getStringAttr("private"), type, widened,
        /*constant=*/true, global.getAlignmentAttr());
  }
  return memref::GetGlobalOp::create(b, loc, type, copy.getSymName());
}

} // namespace

std::optional<Epilogue::Input> Epilogue::classify(AffineMap map,
                                                  MemRefType type,
                                                  ArrayRef<int64_t> loopSizes,
                                                  unsigned rowLoops) {
  if (!type || !type.hasStaticShape() || !type.getLayout().isIdentity())
    return std::nullopt;
  if (map.isIdentity() && type.getShape() == loopSizes)
    return Input{Access::Full};
  // Each result a loop dim (in increasing order) or 0 on a unit dim; the
  // used dims of size 1 do not move the element.
  SmallVector<unsigned> used;
  int64_t last = -1;
  for (auto [i, expr] : llvm::enumerate(map.getResults())) {
    if (auto constant = dyn_cast<AffineConstantExpr>(expr)) {
      if (constant.getValue() != 0 || type.getDimSize(i) != 1)
        return std::nullopt;
      continue;
    }
    auto dim = dyn_cast<AffineDimExpr>(expr);
    if (!dim || int64_t(dim.getPosition()) <= last ||
        type.getDimSize(i) != loopSizes[dim.getPosition()])
      return std::nullopt;
    last = dim.getPosition();
    if (loopSizes[last] != 1)
      used.push_back(last);
  }
  auto nonUnit = [&](unsigned from, unsigned to) {
    SmallVector<unsigned> dims;
    for (unsigned d = from; d < to; ++d)
      if (loopSizes[d] != 1)
        dims.push_back(d);
    return dims;
  };
  if (used.empty())
    return Input{Access::Scalar};
  unsigned loops = loopSizes.size();
  if (used == nonUnit(0, loops))
    return Input{Access::Full};
  if (used == nonUnit(rowLoops, loops))
    return Input{Access::Columns};
  // Every column dim and the trailing row dims from the first used one: a
  // full tensor of `period` rows, repeating (a mask over every head).
  if (used.front() < rowLoops && used == nonUnit(used.front(), loops)) {
    int64_t period = 1;
    for (unsigned d : used)
      if (d < rowLoops)
        period *= loopSizes[d];
    return Input{Access::Full, period};
  }
  // The trailing row dims from the first used one: one value per row,
  // repeating every `period` rows.
  if (used.back() < rowLoops && used == nonUnit(used.front(), rowLoops)) {
    int64_t period = 1;
    for (unsigned d : used)
      period *= loopSizes[d];
    return Input{Access::PerRow, period};
  }
  return std::nullopt;
}

std::optional<Epilogue> Epilogue::find(Operation *producer, Value result,
                                       int64_t rows, int64_t columns,
                                       bool allowSlicedLines) {
  auto op = dyn_cast_or_null<linalg::GenericOp>(nextComputeOp(producer));
  if (!op || !op.hasPureBufferSemantics() || op.getNumDpsInits() != 1 ||
      op.getNumParallelLoops() != op.getNumLoops() ||
      !isVectorizableBody(op.getRegion().front()))
    return std::nullopt;
  // The result must not be needed by anyone else: it is never written.
  Value buffer = stripReshapes(result);
  if (!buffer.getDefiningOp<memref::AllocOp>() &&
      !buffer.getDefiningOp<memref::AllocaOp>() &&
      !buffer.getDefiningOp<memref::ViewOp>())
    return std::nullopt;
  if (!onlyUsedBy(buffer, {producer, op.getOperation()}))
    return std::nullopt;
  Epilogue epilogue;
  epilogue.op = op;
  epilogue.producer = producer;
  // The result read as is, or the first `width` of each line of its last
  // dim (the lines are `pitch` long).
  int64_t resultColumns = columns;
  auto readsResult = [&](Value value) {
    if (stripReshapes(value) == buffer)
      return true;
    auto slice = value.getDefiningOp<memref::SubViewOp>();
    if (!allowSlicedLines || !slice ||
        stripReshapes(slice.getSource()) != buffer)
      return false;
    ArrayRef<int64_t> shape = slice.getSourceType().getShape();
    ArrayRef<int64_t> sizes = slice.getStaticSizes();
    auto isZero = [](int64_t x) { return x == 0; };
    auto isOne = [](int64_t x) { return x == 1; };
    if (!llvm::all_of(slice.getStaticOffsets(), isZero) ||
        !llvm::all_of(slice.getStaticStrides(), isOne) ||
        sizes.drop_back() != shape.drop_back() || resultColumns % shape.back())
      return false;
    epilogue.pitch = shape.back();
    epilogue.width = sizes.back();
    return true;
  };
  for (OpOperand *input : op.getDpsInputOperands())
    if (readsResult(input->get()) &&
        !op.getMatchingIndexingMap(input).isIdentity())
      return std::nullopt;
  if (epilogue.pitch)
    columns = columns / epilogue.pitch * epilogue.width;
  Value output = op.getDpsInits()[0];
  auto outputType = cast<MemRefType>(output.getType());
  if (!outputType.hasStaticShape() || !outputType.getLayout().isIdentity() ||
      outputType.getNumElements() != rows * columns ||
      !op.getMatchingIndexingMap(op.getDpsInitOperand(0)).isIdentity())
    return std::nullopt;
  // The leading loops make up the rows, the others the columns.
  SmallVector<int64_t> loopSizes = op.getStaticLoopRanges();
  epilogue.rowLoops = loopSizes.size();
  while (epilogue.rowLoops > 0 &&
         product(ArrayRef(loopSizes).drop_front(epilogue.rowLoops)) < columns)
    --epilogue.rowLoops;
  if (product(ArrayRef(loopSizes).drop_front(epilogue.rowLoops)) != columns)
    return std::nullopt;
  bool found = false;
  for (OpOperand *input : op.getDpsInputOperands()) {
    if (readsResult(input->get())) {
      epilogue.inputs.push_back(Input(Access::Result));
      found = true;
      continue;
    }
    auto type = dyn_cast<MemRefType>(input->get().getType());
    std::optional<Input> access = classify(op.getMatchingIndexingMap(input),
                                           type, loopSizes, epilogue.rowLoops);
    if (!access)
      return std::nullopt;
    Type element = getElementTypeOrSelf(type);
    if (element != getElementTypeOrSelf(outputType)) {
      if (!element.isInteger(1) || !constantGlobal(input->get()))
        return std::nullopt;
      access->widened = true;
    }
    epilogue.inputs.push_back(*access);
  }
  if (!found)
    return std::nullopt;
  return epilogue;
}

void Epilogue::prepare(OpBuilder &b, Location loc) {
  kiln::fuseProfiledKernels(producer, op);
  while (producer->getNextNode() != op)
    producer->getNextNode()->moveBefore(producer);
  SmallVector<int64_t> loopSizes = op.getStaticLoopRanges();
  int64_t rows = product(ArrayRef(loopSizes).take_front(rowLoops));
  int64_t columns = product(ArrayRef(loopSizes).drop_front(rowLoops));
  stored = viewAs(b, loc, op.getDpsInits()[0], {rows, columns});
  for (auto [input, operand] : llvm::zip(inputs, op.getDpsInputs())) {
    if (input.period == rows)
      input.period = 0;
    if (input.widened)
      operand = widenedCopy(b, loc, operand);
    auto type = cast<MemRefType>(operand.getType());
    switch (input.access) {
    case Access::Result:
      break;
    case Access::Full:
      input.view = viewAs(b, loc, operand,
                          {input.period ? input.period : rows, columns});
      break;
    case Access::Columns:
    case Access::PerRow:
      input.view = viewAs(b, loc, operand, {type.getNumElements()});
      break;
    case Access::Scalar:
      input.view = viewAs(b, loc, operand, {});
      break;
    }
  }
}

void Epilogue::prefetch(OpBuilder &b, Location loc, Value row, Value column,
                        int64_t count) {
  SmallVector<const Input *> full;
  for (const Input &input : inputs)
    if (input.access == Access::Full)
      full.push_back(&input);
  if (full.empty())
    return;
  auto index = [&](int64_t value) -> Value {
    return arith::ConstantIndexOp::create(b, loc, value);
  };
  if (pitch) {
    // The kept columns of the lines [column, column + count) covers: from
    // the first line's (clamped into its kept part) on.
    Value line = arith::DivUIOp::create(b, loc, column, index(pitch));
    Value at = arith::MinUIOp::create(
        b, loc, arith::RemUIOp::create(b, loc, column, index(pitch)),
        index(width - 1));
    column = arith::AddIOp::create(
        b, loc, arith::MulIOp::create(b, loc, line, index(width)), at);
    count = llvm::divideCeil(count * width, pitch) + 1;
  }
  int64_t columns = cast<MemRefType>(stored.getType()).getDimSize(1);
  for (const Input *input : full) {
    Value view = input->view;
    Value inputRow = periodicRow(b, loc, row, input->period);
    int64_t perLine =
        512 / int64_t(getElementTypeOrSelf(view).getIntOrFloatBitWidth());
    // One prefetch per cache line the values may touch, whatever their
    // alignment: every line's worth from the first, and the last value.
    SmallVector<int64_t> offsets;
    for (int64_t offset = 0; offset < count; offset += perLine)
      offsets.push_back(offset);
    offsets.push_back(count - 1);
    for (int64_t offset : offsets) {
      Value at = arith::MinUIOp::create(
          b, loc, arith::AddIOp::create(b, loc, column, index(offset)),
          index(columns - 1));
      memref::PrefetchOp::create(b, loc, view, ValueRange{inputRow, at},
                                 /*isWrite=*/false, /*localityHint=*/3,
                                 /*isDataCache=*/true);
    }
  }
}

Value Epilogue::apply(OpBuilder &b, Location loc, Value acc, Value row,
                      Value column, Value mask) {
  return applyEach(b, loc, {Place{acc, row, column, mask}}).front();
}

SmallVector<Value> Epilogue::applyEach(OpBuilder &b, Location loc,
                                       ArrayRef<Place> places) {
  Block &body = op.getRegion().front();
  SmallVector<IRMapping> mappings(places.size());
  for (auto [place, mapping] : llvm::zip(places, mappings))
    mapInputs(b, loc, place, mapping);
  for (Operation &bodyOp : body.without_terminator())
    for (auto [place, mapping] : llvm::zip(places, mappings))
      cloneOnVectors(b, loc, bodyOp, place, mapping);
  return llvm::map_to_vector(mappings, [&](IRMapping &mapping) {
    return mapping.lookup(body.getTerminator()->getOperand(0));
  });
}

void Epilogue::mapInputs(OpBuilder &b, Location loc, const Place &place,
                         IRMapping &mapping) {
  int64_t lanes = cast<VectorType>(place.acc.getType()).getNumElements();
  auto vectorOf = [&](Type scalar) { return VectorType::get({lanes}, scalar); };
  Block &body = op.getRegion().front();
  Value mask = place.mask;
  for (unsigned i = 0; i < inputs.size(); ++i) {
    const Input &input = inputs[i];
    Value value;
    Type element = input.view ? getElementTypeOrSelf(input.view) : Type();
    auto load = [&](ValueRange at) -> Value {
      Type type = vectorOf(element);
      if (!mask)
        return vector::LoadOp::create(b, loc, type, input.view, at);
      Value zero = arith::ConstantOp::create(b, loc, type, b.getZeroAttr(type));
      return vector::MaskedLoadOp::create(b, loc, type, input.view, at, mask,
                                          zero);
    };
    auto broadcast = [&](ValueRange at) -> Value {
      Value scalar = memref::LoadOp::create(b, loc, input.view, at);
      return vector::BroadcastOp::create(b, loc, vectorOf(element), scalar);
    };
    switch (input.access) {
    case Access::Result:
      value = place.acc;
      break;
    case Access::Full:
      value =
          load({periodicRow(b, loc, place.row, input.period), place.column});
      break;
    case Access::Columns:
      value = load({place.column});
      break;
    case Access::PerRow:
      value = broadcast({periodicRow(b, loc, place.row, input.period)});
      break;
    case Access::Scalar:
      value = broadcast({});
      break;
    }
    if (input.widened) {
      Type type = value.getType();
      value = arith::CmpIOp::create(
          b, loc, arith::CmpIPredicate::ne, value,
          arith::ConstantOp::create(b, loc, type, b.getZeroAttr(type)));
    }
    mapping.map(body.getArgument(i), value);
  }
}

void Epilogue::cloneOnVectors(OpBuilder &b, Location loc, Operation &bodyOp,
                              const Place &place, IRMapping &mapping) {
  int64_t lanes = cast<VectorType>(place.acc.getType()).getNumElements();
  auto vectorOf = [&](Type scalar) { return VectorType::get({lanes}, scalar); };
  // Values from outside the body (constants) become splats.
  for (Value operand : bodyOp.getOperands())
    if (!mapping.contains(operand))
      mapping.map(operand, vector::BroadcastOp::create(
                               b, loc, vectorOf(operand.getType()), operand));
  if (auto constant = dyn_cast<arith::ConstantOp>(bodyOp)) {
    auto value = cast<TypedAttr>(constant.getValue());
    mapping.map(
        constant.getResult(),
        arith::ConstantOp::create(
            b, loc, DenseElementsAttr::get(vectorOf(value.getType()), value)));
    return;
  }
  Operation *vectorized = b.clone(bodyOp, mapping);
  vectorized->getResult(0).setType(vectorOf(bodyOp.getResult(0).getType()));
}

} // namespace kiln
