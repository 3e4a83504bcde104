//===- TensorFiles.h - .npy and ONNX .pb tensors for kiln-run ---*- C++ -*-===//

#ifndef KILN_TOOLS_KILN_RUN_TENSORFILES_H
#define KILN_TOOLS_KILN_RUN_TENSORFILES_H

#include <cstdint>
#include <string>
#include <vector>

namespace kiln::run {

/// A host tensor: dtype (kiln_dtype), dims and dense row-major bytes.
struct HostTensor {
  int32_t dtype = 0;
  std::vector<int64_t> dims;
  std::vector<uint8_t> bytes;

  int64_t numElements() const;
};

/// Reads a .npy file or an ONNX TensorProto (.pb); false with `error` set
/// when the file is missing, malformed or of an unsupported type.
bool readTensorFile(const std::string &path, HostTensor &tensor,
                    std::string &error);

/// Writes a .npy file.
bool writeNpy(const std::string &path, const HostTensor &tensor,
              std::string &error);

} // namespace kiln::run

#endif // KILN_TOOLS_KILN_RUN_TENSORFILES_H
