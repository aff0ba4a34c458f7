// hookscope/detail/record_encoding.hpp — the binary form in which HOOKSCOPE_RECORD's calling thread copies a call's
// arguments and result, for its writer to format as the record format's JSON later (src/environment/record_lines.cpp).
//
// The kinds most records hold have one: booleans, numbers (enumerations as their underlying type), standard strings
// up to max_encoded_text bytes and tensors' shapes and dtypes. Each value is a tag byte and its payload, in the
// machine's byte order and unaligned (copied with memcpy): an integer or a float 8 bytes, a string its u32 length
// and bytes, a tensor its dtype byte, its rank byte and one i64 per dimension. A call with any other value takes the
// value tree instead (capture_value), as does a value the encoding declines: a longer string, a negative dimension
// (refused by the tree's rule, with its message), a rank over max_encoded_rank. So the two forms write the same text.
#pragma once

#include "hookscope/detail/config.hpp"
#include "hookscope/detail/capture_classify.hpp"
#include "hookscope/detail/capture_rules.hpp"
#include "hookscope/detail/tensor.hpp"

#include <concepts>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <iterator>
#include <string_view>
#include <type_traits>

HOOKSCOPE_DETAIL_BEGIN_NAMESPACE
namespace detail {

enum class encoded_tag : std::uint8_t { boolean_false, boolean_true, integer, floating, text, tensor };

/// Longer strings take the value tree, with its bounds (capture_options::max_bytes) and the writer's elision.
inline constexpr std::size_t max_encoded_text = 4096;
inline constexpr std::size_t max_encoded_rank = 64;

/// Whether values of T have a binary form: standard strings, tensors, and the scalars the value tree holds as a
/// bool, an int64 or a double (not an enumeration over __int128, an opaque leaf).
template <class T>
consteval bool has_encoding() noexcept {
  constexpr capture_kind kind = classify<T>();
  if constexpr (kind == capture_kind::string || kind == capture_kind::tensor) {
    return true;
  } else if constexpr (kind == capture_kind::boolean || kind == capture_kind::arithmetic ||
                       kind == capture_kind::enumeration) {
    using captured = typename rule_of<T>::type;
    return std::is_same_v<captured, bool> || std::is_same_v<captured, std::int64_t> || std::is_same_v<captured, double>;
  } else {
    return false;
  }
}

inline void put_encoded(std::byte*& out, const void* bytes, std::size_t n) noexcept {
  std::memcpy(out, bytes, n);
  out += n;
}

/// A boolean, an integer or a float as the value tree captures it (rule_of<T>: the same conversion).
template <class Captured>
std::size_t encode_scalar(Captured c, std::byte* out, std::size_t room) noexcept {
  if constexpr (std::is_same_v<Captured, bool>) {
    if (room >= 1) out[0] = static_cast<std::byte>(c ? encoded_tag::boolean_true : encoded_tag::boolean_false);
    return 1;
  } else {
    static_assert(std::is_same_v<Captured, std::int64_t> || std::is_same_v<Captured, double>);
    if (room >= 9) {
      out[0] = static_cast<std::byte>(std::is_same_v<Captured, double> ? encoded_tag::floating : encoded_tag::integer);
      std::memcpy(out + 1, &c, 8);
    }
    return 9;
  }
}

inline std::size_t encode_text(const char* data, std::size_t size, std::byte* out, std::size_t room) noexcept {
  if (size > max_encoded_text) return 0;
  const std::size_t need = 5 + size;
  if (need <= room) {
    const auto n = static_cast<std::uint32_t>(size);
    *out++ = static_cast<std::byte>(encoded_tag::text);
    put_encoded(out, &n, 4);
    put_encoded(out, data, size);
  }
  return need;
}

// The shape as contiguous 64-bit dimensions (a std::vector<std::int64_t>, a span, an array: most traits' shapes),
// whose rank encode_tensor knows before it walks them.
template <class Shape>
concept contiguous_i64_shape = requires(const Shape& shape) {
  { std::data(shape) } -> std::convertible_to<const std::int64_t*>;
  { std::size(shape) } -> std::convertible_to<std::size_t>;
};

// The traits' shape (a range of integers, walked once) and dtype: what spec_of reads, without its vector.
template <class T>
std::size_t encode_tensor(const T& t, std::byte* out, std::size_t room) {
  using traits = tensor_traits<T>;
  const auto& shape = traits::shape(t);
  std::size_t rank = 0;
  std::byte* dims = out + 3;
  if constexpr (contiguous_i64_shape<std::remove_cvref_t<decltype(shape)>>) {
    // The rank known first: the bound and the room tested once, not at every dimension.
    const std::int64_t* data = std::data(shape);
    rank = std::size(shape);
    if (rank > max_encoded_rank) return 0;
    if (3 + 8 * rank <= room) {
      for (std::size_t i = 0; i < rank; ++i) {
        if (data[i] < 0) return 0;
        std::memcpy(dims + 8 * i, data + i, 8);
      }
    } else {
      for (std::size_t i = 0; i < rank; ++i) {
        if (data[i] < 0) return 0;
      }
    }
  } else {
    for (auto it = std::begin(shape); it != std::end(shape); ++it, ++rank) {
      const auto d = static_cast<std::int64_t>(*it);
      if (d < 0 || rank == max_encoded_rank) return 0;
      if (3 + 8 * (rank + 1) <= room) std::memcpy(dims + 8 * rank, &d, 8);
    }
  }
  const std::size_t need = 3 + 8 * rank;
  if (need <= room) {
    out[0] = static_cast<std::byte>(encoded_tag::tensor);
    out[1] = static_cast<std::byte>(static_cast<std::uint8_t>(traits::dtype(t)));
    out[2] = static_cast<std::byte>(rank);
  }
  return need;
}

template <class T>
std::size_t encode_value(const void* object, std::byte* out, std::size_t room) {
  const T& v = *static_cast<const T*>(object);
  constexpr capture_kind kind = classify<T>();
  if constexpr (kind == capture_kind::string) {
    return encode_text(v.data(), v.size(), out, room);
  } else if constexpr (kind == capture_kind::tensor) {
    return encode_tensor(v, out, room);
  } else {
    return encode_scalar(rule_of<T>::capture(v, capture_state{}), out, room);
  }
}

/// The encoder of T, or null for a type that takes the value tree.
template <class T>
constexpr auto encoder_of() noexcept -> std::size_t (*)(const void*, std::byte*, std::size_t) {
  if constexpr (has_encoding<T>()) {
    return &encode_value<T>;
  } else {
    return nullptr;
  }
}

}  // namespace detail
HOOKSCOPE_DETAIL_END_NAMESPACE
