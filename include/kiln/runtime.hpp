//===- runtime.hpp - C++ wrapper of the kiln runtime ------------*- C++ -*-===//
//
// Header-only RAII classes over kiln/runtime.h: a Model unloads itself, a
// Context destroys itself, and every failure throws kiln::Error carrying the
// status and the runtime's message. Needs C++17 and the same runtime library
// as the C API.
//
//   kiln::Model model("./model.so");
//   kiln::Context context(model, /*threads=*/2);
//   std::vector<float> x(model.input(0).elements()), y(...);
//   context.run({kiln::Tensor::of(model.input(0), x.data())},
//               {kiln::Tensor::of(model.output(0), y.data())});
//
//===----------------------------------------------------------------------===//

#ifndef KILN_RUNTIME_HPP
#define KILN_RUNTIME_HPP

#include "kiln/runtime.h"

#include <cstdint>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace kiln {

/// A failed runtime call: what kiln_last_error() said, and the status.
class Error : public std::runtime_error {
public:
  Error(kiln_status status, const std::string &message)
      : std::runtime_error(message), status_(status) {}
  kiln_status status() const { return status_; }

private:
  kiln_status status_;
};

namespace detail {
inline void check(kiln_status status) {
  if (status != KILN_OK)
    throw Error(status, kiln_last_error());
}
} // namespace detail

/// One input or output of a model as compiled.
struct TensorInfo {
  std::string name;
  kiln_dtype dtype;
  std::vector<int64_t> dims;

  int64_t elements() const {
    int64_t count = 1;
    for (int64_t d : dims)
      count *= d;
    return count;
  }
  size_t bytes() const {
    return size_t(elements()) * kiln_dtype_size(dtype);
  }
};

/// A caller-owned buffer described for kiln_run; the dims are copied.
class Tensor {
public:
  Tensor(kiln_dtype dtype, std::vector<int64_t> dims, void *data)
      : dtype_(dtype), dims_(std::move(dims)), data_(data) {}
  /// A buffer with the shape and dtype `info` expects.
  static Tensor of(const TensorInfo &info, void *data) {
    return Tensor(info.dtype, info.dims, data);
  }
  kiln_tensor view() const {
    return {dtype_, int32_t(dims_.size()), dims_.data(), data_};
  }

private:
  kiln_dtype dtype_;
  std::vector<int64_t> dims_;
  void *data_;
};

/// A loaded model.so; unloaded when destroyed (after its contexts).
class Model {
public:
  explicit Model(const std::string &path) {
    detail::check(kiln_model_load(path.c_str(), &model_));
    for (int32_t i = 0; i < kiln_model_num_inputs(model_); ++i)
      inputs_.push_back(describe(i, kiln_model_input_info));
    for (int32_t i = 0; i < kiln_model_num_outputs(model_); ++i)
      outputs_.push_back(describe(i, kiln_model_output_info));
  }
  ~Model() { kiln_model_unload(model_); }
  Model(const Model &) = delete;
  Model &operator=(const Model &) = delete;
  Model(Model &&other) noexcept
      : model_(std::exchange(other.model_, nullptr)),
        inputs_(std::move(other.inputs_)), outputs_(std::move(other.outputs_)) {}

  const std::vector<TensorInfo> &inputs() const { return inputs_; }
  const std::vector<TensorInfo> &outputs() const { return outputs_; }
  const TensorInfo &input(size_t i) const { return inputs_.at(i); }
  const TensorInfo &output(size_t i) const { return outputs_.at(i); }
  std::string signatureJson() const {
    return kiln_model_signature_json(model_);
  }
  const kiln_model *get() const { return model_; }

private:
  using InfoFn = kiln_status (*)(const kiln_model *, int32_t,
                                 kiln_tensor_info *);
  TensorInfo describe(int32_t index, InfoFn info) {
    kiln_tensor_info raw;
    detail::check(info(model_, index, &raw));
    return {raw.name, kiln_dtype(raw.dtype),
            std::vector<int64_t>(raw.dims, raw.dims + raw.rank)};
  }

  kiln_model *model_ = nullptr;
  std::vector<TensorInfo> inputs_, outputs_;
};

/// An execution context: its arena and thread pool. One thread may use a
/// context at a time; several contexts of a model run concurrently.
class Context {
public:
  explicit Context(const Model &model, int32_t threads = 1) {
    detail::check(
        kiln_context_create_with_threads(model.get(), threads, &context_));
  }
  ~Context() { kiln_context_destroy(context_); }
  Context(const Context &) = delete;
  Context &operator=(const Context &) = delete;
  Context(Context &&other) noexcept
      : context_(std::exchange(other.context_, nullptr)) {}

  /// Runs the model; throws kiln::Error on a wrong shape, dtype, count or
  /// buffer.
  void run(const std::vector<Tensor> &inputs,
           const std::vector<Tensor> &outputs) {
    std::vector<kiln_tensor> in, out;
    for (const Tensor &t : inputs)
      in.push_back(t.view());
    for (const Tensor &t : outputs)
      out.push_back(t.view());
    detail::check(
        kiln_run(context_, in.data(), in.size(), out.data(), out.size()));
  }

private:
  kiln_context *context_ = nullptr;
};

} // namespace kiln

#endif // KILN_RUNTIME_HPP
