//===- MemRefCopyToLinalg.cpp - convert-memref-copy-to-linalg -------------===//

#include "kiln/Conversion/Passes.h"

#include "mlir/Dialect/MemRef/IR/MemRef.h"

namespace kiln {
#define GEN_PASS_DEF_CONVERTMEMREFCOPYTOLINALG
#include "kiln/Conversion/Passes.h.inc"
} // namespace kiln

using namespace mlir;

namespace {

struct ConvertMemRefCopyToLinalgPass
    : public kiln::impl::ConvertMemRefCopyToLinalgBase<
          ConvertMemRefCopyToLinalgPass> {
  void runOnOperation() override {
    SmallVector<memref::CopyOp> copies;
    getOperation().walk([&](memref::CopyOp copy) { copies.push_back(copy); });
    for (memref::CopyOp copy : copies) {
      OpBuilder builder(copy);
      linalg::CopyOp::create(builder, copy.getLoc(), copy.getSource(),
                             copy.getTarget());
      copy.erase();
    }
  }
};

} // namespace
