// hookscope/detail/tensor.hpp — the tensor types every layer shares (dtype and its table, tensor_spec, tensor_traits,
// the tensor concept, spec_of), below the headers that capture, hold or record tensors; hookscope/tensor.hpp is
// their documented front door.
#pragma once

#include "hookscope/detail/config.hpp"

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>
#include <type_traits>
#include <vector>

HOOKSCOPE_DETAIL_BEGIN_NAMESPACE

/// Element types, named as in the record format (`dtype::boolean` is "bool").
enum class dtype : std::uint8_t { float64, float32, float16, bfloat16, int64, int32, int16, int8, uint8, boolean };

namespace detail {
/// What the record format says of one dtype: its name and the bytes of one element.
struct dtype_info {
  hookscope::dtype dtype;
  std::string_view name;
  std::size_t size;
};
/// Every dtype, at its enumerator's index: the one table that names, parsing, element sizes and the list of known
/// dtypes in messages derive from.
inline constexpr std::array<dtype_info, 10> dtypes = {{{dtype::float64, "float64", 8},
                                                       {dtype::float32, "float32", 4},
                                                       {dtype::float16, "float16", 2},
                                                       {dtype::bfloat16, "bfloat16", 2},
                                                       {dtype::int64, "int64", 8},
                                                       {dtype::int32, "int32", 4},
                                                       {dtype::int16, "int16", 2},
                                                       {dtype::int8, "int8", 1},
                                                       {dtype::uint8, "uint8", 1},
                                                       {dtype::boolean, "bool", 1}}};
static_assert(static_cast<std::size_t>(dtype::boolean) + 1 == dtypes.size(), "hookscope: a dtype without its entry");
static_assert(
    [] {
      for (std::size_t i = 0; i < dtypes.size(); ++i) {
        if (static_cast<std::size_t>(dtypes[i].dtype) != i) return false;
      }
      return true;
    }(),
    "hookscope: detail::dtypes must list the dtypes in the enumerators' order");
}  // namespace detail

/// The record format's name of `t`: "float32", "int64", "bool", ...
constexpr std::string_view to_string(dtype t) noexcept { return detail::dtypes[static_cast<std::size_t>(t)].name; }

/// The dtype named `name` in the record format, or nothing.
constexpr std::optional<dtype> parse_dtype(std::string_view name) noexcept {
  for (const detail::dtype_info& entry : detail::dtypes) {
    if (entry.name == name) return entry.dtype;
  }
  return std::nullopt;
}

/// Bytes per element of `t`.
constexpr std::size_t dtype_size(dtype t) noexcept { return detail::dtypes[static_cast<std::size_t>(t)].size; }

/// The dtype of C++ element type T (float, double, the fixed-width integers, bool); no value for others.
template <class T>
inline constexpr std::optional<dtype> dtype_of = std::nullopt;
template <>
inline constexpr std::optional<dtype> dtype_of<double> = dtype::float64;
template <>
inline constexpr std::optional<dtype> dtype_of<float> = dtype::float32;
template <>
inline constexpr std::optional<dtype> dtype_of<std::int64_t> = dtype::int64;
template <>
inline constexpr std::optional<dtype> dtype_of<std::int32_t> = dtype::int32;
template <>
inline constexpr std::optional<dtype> dtype_of<std::int16_t> = dtype::int16;
template <>
inline constexpr std::optional<dtype> dtype_of<std::int8_t> = dtype::int8;
template <>
inline constexpr std::optional<dtype> dtype_of<std::uint8_t> = dtype::uint8;
template <>
inline constexpr std::optional<dtype> dtype_of<bool> = dtype::boolean;

/// A tensor as hookscope records it: its shape and element type (never its contents, unless asked).
struct tensor_spec {
  std::vector<std::int64_t> shape;
  hookscope::dtype dtype = hookscope::dtype::float32;
  /// The contents, only when captured with `capture_options::tensor_data`: numel() elements in row-major order,
  /// little-endian bytes (recorded as base64). Empty otherwise.
  std::vector<std::byte> data{};
  /// True when the contents were captured but left out of a record line they would have made too long (the record
  /// format's `"data_too_large":true`; `data` is then empty).
  bool data_too_large = false;

  /// Number of elements (1 for a scalar tensor of rank 0).
  std::int64_t numel() const noexcept {
    std::int64_t n = 1;
    for (std::int64_t d : shape) n *= d;
    return n;
  }
  friend bool operator==(const tensor_spec&, const tensor_spec&) = default;
};

/// Specialise for a type to make it a tensor: `static auto shape(const T&)` (a range of integers),
/// `static hookscope::dtype dtype(const T&)`, optionally `static T make_empty(std::vector<std::int64_t>, dtype)`
/// and `static auto data(const T&)`: the elements in row-major order as a contiguous range (of bytes, or of
/// elements of the dtype's size; empty when the contents are not at hand), for the opt-in capture of contents.
template <class T>
struct tensor_traits {};

template <>
struct tensor_traits<tensor_spec> {
  static const std::vector<std::int64_t>& shape(const tensor_spec& t) noexcept { return t.shape; }
  static hookscope::dtype dtype(const tensor_spec& t) noexcept { return t.dtype; }
  static tensor_spec make_empty(std::vector<std::int64_t> shape, hookscope::dtype type) {
    return {std::move(shape), type};
  }
  static const std::vector<std::byte>& data(const tensor_spec& t) noexcept { return t.data; }
};

/// True for types with a tensor_traits specialisation.
template <class T>
concept tensor = requires(const T& t) {
  tensor_traits<std::remove_cvref_t<T>>::shape(t);
  { tensor_traits<std::remove_cvref_t<T>>::dtype(t) } -> std::convertible_to<dtype>;
};

/// The shape and dtype of any tensor.
template <tensor T>
tensor_spec spec_of(const T& t) {
  const auto& shape = tensor_traits<std::remove_cvref_t<T>>::shape(t);
  return {std::vector<std::int64_t>(std::begin(shape), std::end(shape)),
          tensor_traits<std::remove_cvref_t<T>>::dtype(t)};
}

HOOKSCOPE_DETAIL_END_NAMESPACE
