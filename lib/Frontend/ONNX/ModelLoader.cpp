//===- ModelLoader.cpp - read ONNX model files ----------------------------===//
//
// Model files are untrusted input: every failure is a diagnostic, never a
// crash or an exception escaping to the caller.
//
//===----------------------------------------------------------------------===//

#include "ImporterImpl.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"

#include "onnx/defs/parser.h"

#include <google/protobuf/io/coded_stream.h>
#include <google/protobuf/io/zero_copy_stream_impl.h>
#include <google/protobuf/io/zero_copy_stream_impl_lite.h>

#include <cerrno>
#include <climits>
#include <cstring>
#include <fcntl.h>

using namespace mlir;

namespace kiln::frontend {

/// Refuses a model too large for one protobuf message.
static LogicalResult checkModelSize(uint64_t size, Location loc) {
  if (size <= static_cast<uint64_t>(INT_MAX))
    return success();
  return emitError(loc) << "the model is " << size
                        << " bytes, more than protobuf can parse in one "
                           "message (2 GiB); save it with its weights as "
                           "external data";
}

static LogicalResult
parseModelStream(google::protobuf::io::ZeroCopyInputStream &stream,
                 onnx::ModelProto &model, Location loc) {
  google::protobuf::io::CodedInputStream coded(&stream);
  coded.SetTotalBytesLimit(INT_MAX);
  if (!model.ParseFromCodedStream(&coded) || !coded.ConsumedEntireMessage())
    return emitError(loc) << "not a valid ONNX model: the protobuf data is "
                             "malformed or truncated";
  if (!model.has_graph())
    return emitError(loc) << "the ONNX model has no graph";
  return success();
}

LogicalResult parseModelBytes(llvm::StringRef bytes, onnx::ModelProto &model,
                              Location loc) {
  if (failed(checkModelSize(bytes.size(), loc)))
    return failure();
  google::protobuf::io::ArrayInputStream stream(bytes.data(),
                                                static_cast<int>(bytes.size()));
  return parseModelStream(stream, model, loc);
}

static LogicalResult parseModelText(llvm::StringRef text,
                                    onnx::ModelProto &model, Location loc) {
  try {
    onnx::OnnxParser parser(text.data());
    onnx::Common::Status status = parser.Parse(model);
    if (!status.IsOK())
      return emitError(loc)
             << "cannot parse ONNX text: " << status.ErrorMessage();
    if (!parser.EndOfInput())
      return emitError(loc) << "cannot parse ONNX text: unexpected text "
                               "after the model";
  } catch (const std::exception &e) {
    return emitError(loc) << "cannot parse ONNX text: " << e.what();
  }
  return success();
}

/// Parses a binary model through a small read buffer, so a large file is
/// never resident twice (file pages and parsed weights).
static LogicalResult parseModelFileStream(llvm::StringRef path,
                                          onnx::ModelProto &model,
                                          Location loc) {
  uint64_t size = 0;
  if (std::error_code error = llvm::sys::fs::file_size(path, size))
    return emitError(loc) << "cannot open model file '" << path
                          << "': " << error.message();
  if (!llvm::sys::fs::is_regular_file(path))
    return emitError(loc) << "cannot open model file '" << path
                          << "': not a regular file";
  if (failed(checkModelSize(size, loc)))
    return failure();
  int fd = ::open(path.str().c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0)
    return emitError(loc) << "cannot open model file '" << path
                          << "': " << std::strerror(errno);
  google::protobuf::io::FileInputStream stream(fd);
  stream.SetCloseOnDelete(true);
  return parseModelStream(stream, model, loc);
}

LogicalResult parseModelFile(llvm::StringRef path, onnx::ModelProto &model,
                             Location loc) {
  llvm::StringRef extension = llvm::sys::path::extension(path);
  if (extension != ".onnxtext" && extension != ".txt")
    return parseModelFileStream(path, model, loc);
  llvm::ErrorOr<std::unique_ptr<llvm::MemoryBuffer>> buffer =
      llvm::MemoryBuffer::getFile(path, /*IsText=*/true,
                                  /*RequiresNullTerminator=*/true);
  if (!buffer)
    return emitError(loc) << "cannot open model file '" << path
                          << "': " << buffer.getError().message();
  return parseModelText((*buffer)->getBuffer(), model, loc);
}

LogicalResult parseTensorFile(llvm::StringRef path, onnx::TensorProto &tensor,
                              Location loc) {
  llvm::ErrorOr<std::unique_ptr<llvm::MemoryBuffer>> buffer =
      llvm::MemoryBuffer::getFile(path, /*IsText=*/false,
                                  /*RequiresNullTerminator=*/false);
  if (!buffer)
    return emitError(loc) << "cannot open tensor file '" << path
                          << "': " << buffer.getError().message();
  llvm::StringRef bytes = (*buffer)->getBuffer();
  if (bytes.size() > static_cast<size_t>(INT_MAX) ||
      !tensor.ParseFromArray(bytes.data(), static_cast<int>(bytes.size())))
    return emitError(loc) << "'" << path
                          << "' is not a valid ONNX TensorProto file";
  return success();
}

} // namespace kiln::frontend
