// The demo's own tensor: a shape and a flat row-major buffer, made a hookscope tensor by one
// tensor_traits specialisation — how any engine's tensor type becomes observable and recordable.
#pragma once

#include <hookscope/tensor.hpp>

#include <cstddef>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace tiny_llm {

template <class T>
struct basic_tensor {
  std::vector<std::int64_t> shape;
  std::vector<T> data;

  basic_tensor() = default;
  basic_tensor(std::vector<std::int64_t> dims, T fill) : shape(std::move(dims)), data(count(shape), fill) {}

  static std::size_t count(const std::vector<std::int64_t>& dims) {
    std::size_t n = 1;
    for (std::int64_t d : dims) n *= static_cast<std::size_t>(d);
    return n;
  }
  std::int64_t dim(std::size_t i) const { return shape.at(i); }
  /// Element (i, j) of a rank-2 tensor.
  T& at(std::int64_t i, std::int64_t j) { return data[static_cast<std::size_t>(i * shape[1] + j)]; }
  const T& at(std::int64_t i, std::int64_t j) const { return data[static_cast<std::size_t>(i * shape[1] + j)]; }
};

using tensor = basic_tensor<float>;            // activations, logits, pixel values
using id_tensor = basic_tensor<std::int64_t>;  // token ids, attention masks

/// "1x7", "2x1x64": how the demo prints shapes.
inline std::string shape_text(const std::vector<std::int64_t>& shape) {
  std::string text;
  for (std::size_t i = 0; i < shape.size(); ++i) {
    if (i != 0) text += 'x';
    text += std::to_string(shape[i]);
  }
  return text;
}

}  // namespace tiny_llm

// What hookscope needs to know of a tensor: its shape and element type (never its data).
template <class T>
struct hookscope::tensor_traits<tiny_llm::basic_tensor<T>> {
  static const std::vector<std::int64_t>& shape(const tiny_llm::basic_tensor<T>& t) noexcept { return t.shape; }
  static hookscope::dtype dtype(const tiny_llm::basic_tensor<T>&) noexcept { return *hookscope::dtype_of<T>; }
  /// The contents, for hookscope's opt-in capture of tensor data (records hold shapes only by default).
  static const std::vector<T>& data(const tiny_llm::basic_tensor<T>& t) noexcept { return t.data; }
  static tiny_llm::basic_tensor<T> make_empty(std::vector<std::int64_t> shape, hookscope::dtype) {
    return {std::move(shape), T{}};
  }
};
