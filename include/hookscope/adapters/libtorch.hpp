// hookscope/adapters/libtorch.hpp — LibTorch's at::Tensor (torch::Tensor) as a tensor: shape from sizes(), dtype
// from scalar_type(), contents on request. Optional: needs LibTorch (Debian libtorch-dev, 1.13); include it only
// where LibTorch is already included — no other hookscope header includes it.
//
// - shape(t): t.sizes(), as int64 dimensions.
// - dtype(t): Double, Float, Half, BFloat16, Long, Int, Short, Char, Byte, Bool map to float64, float32, float16,
//   bfloat16, int64, int32, int16, int8, uint8, bool; any other scalar type (complex, quantized, ...) throws
//   hookscope::value_error naming it, when the tensor is captured. An undefined tensor (at::Tensor{}) throws too.
// - data(t), for capture_options::tensor_data: the elements' bytes in row-major order. A contiguous CPU tensor is
//   read in place; a non-contiguous tensor (a transpose, a slice) or a tensor on another device is first copied
//   with t.contiguous().cpu() — a copy of the contents, and for a GPU tensor a device-to-host transfer.
// - make_empty(shape, dtype): at::zeros(shape) of that dtype, on the CPU.
#pragma once

#include "hookscope/exceptions.hpp"
#include "hookscope/tensor.hpp"

// ivalue.h first: with Clang 14 in C++20 mode, LibTorch 1.13's ATen/ops headers reach ATen/core/List.h, whose
// std::vector<c10::IValue> members are instantiated while IValue is still incomplete (a hard error), unless IValue
// is already defined. Include this adapter before other LibTorch headers when compiling with Clang.
#include <ATen/core/ivalue.h>
#include <ATen/core/Tensor.h>
#include <ATen/ops/zeros.h>

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

HOOKSCOPE_DETAIL_BEGIN_NAMESPACE
namespace detail {

[[noreturn]] inline void throw_libtorch_undefined() {
  throw value_error("LibTorch adapter: the tensor is undefined (a default-constructed at::Tensor)");
}

inline c10::ScalarType libtorch_scalar_type(hookscope::dtype t) noexcept {
  switch (t) {
    case hookscope::dtype::float64: return c10::ScalarType::Double;
    case hookscope::dtype::float32: return c10::ScalarType::Float;
    case hookscope::dtype::float16: return c10::ScalarType::Half;
    case hookscope::dtype::bfloat16: return c10::ScalarType::BFloat16;
    case hookscope::dtype::int64: return c10::ScalarType::Long;
    case hookscope::dtype::int32: return c10::ScalarType::Int;
    case hookscope::dtype::int16: return c10::ScalarType::Short;
    case hookscope::dtype::int8: return c10::ScalarType::Char;
    case hookscope::dtype::uint8: return c10::ScalarType::Byte;
    case hookscope::dtype::boolean: return c10::ScalarType::Bool;
  }
  return c10::ScalarType::Float;  // not reached: every enumerator is handled above
}

/// The bytes of a tensor's elements in row-major order, keeping alive the tensor they belong to (the tensor
/// itself when it is a contiguous CPU tensor, a contiguous CPU copy otherwise): a contiguous range of std::byte.
class libtorch_bytes {
 public:
  explicit libtorch_bytes(at::Tensor contiguous_cpu) : tensor_(std::move(contiguous_cpu)) {}
  const std::byte* data() const noexcept { return static_cast<const std::byte*>(tensor_.data_ptr()); }
  std::size_t size() const noexcept { return tensor_.nbytes(); }
  const std::byte* begin() const noexcept { return data(); }
  const std::byte* end() const noexcept { return data() + size(); }

 private:
  at::Tensor tensor_;
};

}  // namespace detail

template <>
struct tensor_traits<at::Tensor> {
  static c10::IntArrayRef shape(const at::Tensor& t) {
    if (!t.defined()) detail::throw_libtorch_undefined();
    return t.sizes();
  }

  static hookscope::dtype dtype(const at::Tensor& t) {
    if (!t.defined()) detail::throw_libtorch_undefined();
    switch (t.scalar_type()) {
      case c10::ScalarType::Double: return hookscope::dtype::float64;
      case c10::ScalarType::Float: return hookscope::dtype::float32;
      case c10::ScalarType::Half: return hookscope::dtype::float16;
      case c10::ScalarType::BFloat16: return hookscope::dtype::bfloat16;
      case c10::ScalarType::Long: return hookscope::dtype::int64;
      case c10::ScalarType::Int: return hookscope::dtype::int32;
      case c10::ScalarType::Short: return hookscope::dtype::int16;
      case c10::ScalarType::Char: return hookscope::dtype::int8;
      case c10::ScalarType::Byte: return hookscope::dtype::uint8;
      case c10::ScalarType::Bool: return hookscope::dtype::boolean;
      default:
        throw value_error(std::string("LibTorch adapter: dtype ") + c10::toString(t.scalar_type()) +
                          " has no record dtype (use Double, Float, Half, BFloat16, Long, Int, Short, Char, Byte "
                          "or Bool)");
    }
  }

  /// The contents for capture_options::tensor_data: read in place for a contiguous CPU tensor, otherwise copied
  /// with t.contiguous().cpu() first (see the top of this header).
  static detail::libtorch_bytes data(const at::Tensor& t) {
    if (!t.defined()) detail::throw_libtorch_undefined();
    if (t.device().is_cpu() && t.is_contiguous()) return detail::libtorch_bytes(t);
    return detail::libtorch_bytes(t.contiguous().cpu());
  }

  /// A zero-filled CPU tensor of `shape` and `type` (for placeholders).
  static at::Tensor make_empty(const std::vector<std::int64_t>& shape, hookscope::dtype type) {
    return at::zeros(c10::IntArrayRef(shape), c10::TensorOptions().dtype(detail::libtorch_scalar_type(type)));
  }
};

HOOKSCOPE_DETAIL_END_NAMESPACE
