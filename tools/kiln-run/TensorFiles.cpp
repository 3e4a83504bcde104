//===- TensorFiles.cpp - .npy and ONNX .pb tensors for kiln-run -----------===//

#include "TensorFiles.h"

#include "kiln/runtime.h"

#include "onnx/onnx_pb.h"

#include <cstring>
#include <fstream>
#include <sstream>

namespace kiln::run {
namespace {

struct NpyType {
  const char *descr;
  int32_t dtype;
};

constexpr NpyType kNpyTypes[] = {
    {"<f4", KILN_DTYPE_F32}, {"<f2", KILN_DTYPE_F16}, {"<f8", KILN_DTYPE_F64},
    {"|i1", KILN_DTYPE_I8},  {"|u1", KILN_DTYPE_U8},  {"<i2", KILN_DTYPE_I16},
    {"<u2", KILN_DTYPE_U16}, {"<i4", KILN_DTYPE_I32}, {"<u4", KILN_DTYPE_U32},
    {"<i8", KILN_DTYPE_I64}, {"<u8", KILN_DTYPE_U64}, {"|b1", KILN_DTYPE_BOOL}};

int32_t dtypeOfOnnx(int32_t type) {
  switch (type) {
  case onnx::TensorProto::FLOAT:
    return KILN_DTYPE_F32;
  case onnx::TensorProto::FLOAT16:
    return KILN_DTYPE_F16;
  case onnx::TensorProto::BFLOAT16:
    return KILN_DTYPE_BF16;
  case onnx::TensorProto::DOUBLE:
    return KILN_DTYPE_F64;
  case onnx::TensorProto::INT8:
    return KILN_DTYPE_I8;
  case onnx::TensorProto::UINT8:
    return KILN_DTYPE_U8;
  case onnx::TensorProto::INT16:
    return KILN_DTYPE_I16;
  case onnx::TensorProto::UINT16:
    return KILN_DTYPE_U16;
  case onnx::TensorProto::INT32:
    return KILN_DTYPE_I32;
  case onnx::TensorProto::UINT32:
    return KILN_DTYPE_U32;
  case onnx::TensorProto::INT64:
    return KILN_DTYPE_I64;
  case onnx::TensorProto::UINT64:
    return KILN_DTYPE_U64;
  case onnx::TensorProto::BOOL:
    return KILN_DTYPE_BOOL;
  default:
    return 0;
  }
}

bool readFile(const std::string &path, std::string &data, std::string &error) {
  std::ifstream file(path, std::ios::binary);
  if (!file) {
    error = "cannot open '" + path + "'";
    return false;
  }
  std::ostringstream buffer;
  buffer << file.rdbuf();
  data = buffer.str();
  return true;
}

template <typename Field>
void packField(const Field &values, size_t width, std::vector<uint8_t> &out) {
  out.resize(values.size() * width);
  for (int i = 0; i < values.size(); ++i) {
    auto value = values.Get(i);
    std::memcpy(out.data() + i * width, &value, width);
  }
}

bool readPb(const std::string &path, const std::string &data,
            HostTensor &tensor, std::string &error) {
  onnx::TensorProto proto;
  if (!proto.ParseFromString(data)) {
    error = "'" + path + "' is not an ONNX TensorProto";
    return false;
  }
  tensor.dtype = dtypeOfOnnx(proto.data_type());
  if (!tensor.dtype) {
    error = "'" + path + "' has an unsupported element type";
    return false;
  }
  tensor.dims.assign(proto.dims().begin(), proto.dims().end());
  size_t width = kiln_dtype_size(tensor.dtype);
  size_t expected = width * tensor.numElements();
  if (proto.has_raw_data()) {
    tensor.bytes.assign(proto.raw_data().begin(), proto.raw_data().end());
  } else if (tensor.dtype == KILN_DTYPE_F32) {
    packField(proto.float_data(), width, tensor.bytes);
  } else if (tensor.dtype == KILN_DTYPE_F64) {
    packField(proto.double_data(), width, tensor.bytes);
  } else if (tensor.dtype == KILN_DTYPE_I64) {
    packField(proto.int64_data(), width, tensor.bytes);
  } else if (tensor.dtype == KILN_DTYPE_U32 || tensor.dtype == KILN_DTYPE_U64) {
    packField(proto.uint64_data(), width, tensor.bytes);
  } else {
    packField(proto.int32_data(), width, tensor.bytes);
  }
  if (tensor.bytes.size() != expected) {
    error = "'" + path + "' has " + std::to_string(tensor.bytes.size()) +
            " bytes of data for " + std::to_string(expected);
    return false;
  }
  return true;
}

/// Parses the header of a version 1/2/3 .npy file.
bool readNpy(const std::string &path, const std::string &data,
             HostTensor &tensor, std::string &error) {
  auto bad = [&](const std::string &why) {
    error = "'" + path + "': " + why;
    return false;
  };
  if (data.size() < 10 || data.compare(0, 6, "\x93NUMPY") != 0)
    return bad("not a .npy file");
  size_t headerLength, headerStart;
  if (data[6] == 1) {
    headerLength = uint8_t(data[8]) | (uint8_t(data[9]) << 8);
    headerStart = 10;
  } else {
    if (data.size() < 12)
      return bad("truncated header");
    headerLength =
        uint32_t(uint8_t(data[8])) | uint32_t(uint8_t(data[9])) << 8 |
        uint32_t(uint8_t(data[10])) << 16 | uint32_t(uint8_t(data[11])) << 24;
    headerStart = 12;
  }
  if (headerStart + headerLength > data.size())
    return bad("truncated header");
  std::string header = data.substr(headerStart, headerLength);
  if (header.find("'fortran_order': True") != std::string::npos)
    return bad("Fortran-ordered arrays are not supported");
  size_t descr = header.find("'descr': '");
  size_t shape = header.find("'shape': (");
  if (descr == std::string::npos || shape == std::string::npos)
    return bad("header without descr or shape");
  std::string type = header.substr(descr + 10, 3);
  tensor.dtype = 0;
  for (const NpyType &t : kNpyTypes)
    if (type == t.descr)
      tensor.dtype = t.dtype;
  if (!tensor.dtype)
    return bad("unsupported dtype '" + type + "'");
  tensor.dims.clear();
  std::istringstream dims(
      header.substr(shape + 10, header.find(')', shape) - shape - 10));
  std::string dim;
  while (std::getline(dims, dim, ','))
    if (dim.find_first_not_of(" ") != std::string::npos)
      tensor.dims.push_back(std::stoll(dim));
  size_t bytes = kiln_dtype_size(tensor.dtype) * tensor.numElements();
  size_t offset = headerStart + headerLength;
  if (data.size() - offset != bytes)
    return bad("data size does not match its shape");
  tensor.bytes.assign(data.begin() + offset, data.end());
  return true;
}

} // namespace

int64_t HostTensor::numElements() const {
  int64_t count = 1;
  for (int64_t d : dims)
    count *= d;
  return count;
}

bool readTensorFile(const std::string &path, HostTensor &tensor,
                    std::string &error) {
  std::string data;
  if (!readFile(path, data, error))
    return false;
  if (data.compare(0, 6, "\x93NUMPY") == 0)
    return readNpy(path, data, tensor, error);
  return readPb(path, data, tensor, error);
}

bool writeNpy(const std::string &path, const HostTensor &tensor,
              std::string &error) {
  const char *descr = nullptr;
  for (const NpyType &t : kNpyTypes)
    if (t.dtype == tensor.dtype)
      descr = t.descr;
  if (!descr) {
    error = std::string("cannot write ") + kiln_dtype_name(tensor.dtype) +
            " to .npy";
    return false;
  }
  // Python tuple syntax: "()", "(3,)", "(2, 3)".
  std::string shape;
  for (size_t i = 0; i < tensor.dims.size(); ++i)
    shape += (i ? ", " : "") + std::to_string(tensor.dims[i]);
  if (tensor.dims.size() == 1)
    shape += ",";
  std::string header = std::string("{'descr': '") + descr +
                       "', 'fortran_order': False, 'shape': (" + shape + "), }";
  size_t total = 10 + header.size() + 1;
  header.append((64 - total % 64) % 64, ' ');
  header += '\n';
  std::ofstream file(path, std::ios::binary);
  if (!file) {
    error = "cannot write '" + path + "'";
    return false;
  }
  uint16_t length = static_cast<uint16_t>(header.size());
  file.write("\x93NUMPY\x01\x00", 8);
  file.put(static_cast<char>(length & 0xff));
  file.put(static_cast<char>(length >> 8));
  file << header;
  file.write(reinterpret_cast<const char *>(tensor.bytes.data()),
             static_cast<std::streamsize>(tensor.bytes.size()));
  return static_cast<bool>(file);
}

} // namespace kiln::run
