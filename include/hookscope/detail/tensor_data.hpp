// hookscope/detail/tensor_data.hpp — the opt-in copy of a tensor's contents into its tensor_spec
// (capture_options::tensor_data), through tensor_traits<T>::data(t).
#pragma once

#include "hookscope/detail/config.hpp"
#include "hookscope/detail/range_concepts.hpp"
#include "hookscope/detail/tensor.hpp"

#include <bit>
#include <cstddef>
#include <cstring>
#include <type_traits>

HOOKSCOPE_DETAIL_BEGIN_NAMESPACE
namespace detail {

[[noreturn]] void throw_tensor_data_size(const tensor_spec& spec, std::size_t bytes);  // src/capture.cpp

/// Copies the contents of `t` into `spec.data` when its tensor_traits has data(t); nothing otherwise.
template <class T>
void copy_tensor_data(const T& t, tensor_spec& spec) {
  if constexpr (requires { tensor_traits<T>::data(t); }) {
    static_assert(std::endian::native == std::endian::little,
                  "hookscope: capture of tensor contents assumes a little-endian machine (the record format's order)");
    const auto& elements = tensor_traits<T>::data(t);  // may be a temporary (a row-major copy): lifetime extended
    using element = std::remove_cvref_t<std::ranges::range_value_t<decltype(elements)>>;
    static_assert(std::is_trivially_copyable_v<element>,
                  "hookscope: tensor_traits<T>::data(t) must return a contiguous range of plain elements or bytes");
    const std::size_t bytes = std::ranges::size(elements) * sizeof(element);
    if (bytes == 0) return;  // contents not at hand (a tensor_spec captured without them): shape only
    if (bytes != static_cast<std::size_t>(spec.numel()) * dtype_size(spec.dtype)) throw_tensor_data_size(spec, bytes);
    spec.data.resize(bytes);
    std::memcpy(spec.data.data(), std::ranges::data(elements), bytes);
  }
}

}  // namespace detail
HOOKSCOPE_DETAIL_END_NAMESPACE
