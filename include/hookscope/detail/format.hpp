// Formats any value as text for the registry's type-erased callbacks and HOOKSCOPE_TRACE.
#pragma once

#include "hookscope/config.hpp"
#include "hookscope/detail/type_name.hpp"

#include <charconv>
#include <concepts>
#include <cstddef>
#include <ostream>
#include <sstream>
#include <string>
#include <string_view>
#include <tuple>
#include <type_traits>
#include <utility>

HOOKSCOPE_DETAIL_BEGIN_NAMESPACE
namespace detail {

template <class T>
concept streamable = requires(std::ostream& os, const T& value) { os << value; };

/// `value` as text: strings quoted, bools as words, numbers in their shortest exact form, anything with
/// `operator<<` through it, else "<type>".
template <class T>
std::string format_value(const T& value) {
  if constexpr (std::is_same_v<T, bool>) {
    return value ? "true" : "false";
  } else if constexpr ((std::is_integral_v<T> && sizeof(T) > 1) || std::is_floating_point_v<T>) {
    // Without a stream: the trace and the timeline format numbers on every call.
    char digits[32];
    const auto result = std::to_chars(digits, digits + sizeof digits, value);
    return std::string(digits, result.ptr);
  } else if constexpr (std::is_convertible_v<const T&, std::string_view> && !std::is_same_v<T, std::nullptr_t>) {
    std::string out = "\"";
    out.append(std::string_view(value)).push_back('"');
    return out;
  } else if constexpr (std::is_same_v<T, char> || std::is_same_v<T, signed char> || std::is_same_v<T, unsigned char>) {
    return std::to_string(static_cast<int>(value));
  } else if constexpr (streamable<T>) {
    std::ostringstream out;
    out << value;
    return std::move(out).str();
  } else {
    std::string out = "<";
    out.append(type_name<T>()).push_back('>');
    return out;
  }
}

/// Element `index` of a tuple of references, formatted; "" when out of range.
template <class Tuple>
std::string format_element(const Tuple& tuple, std::size_t index) {
  std::string out;
  [&]<std::size_t... I>(std::index_sequence<I...>) {
    ((index == I ? (out = format_value(std::get<I>(tuple)), 0) : 0), ...);
  }(std::make_index_sequence<std::tuple_size_v<Tuple>>{});
  return out;
}

}  // namespace detail
HOOKSCOPE_DETAIL_END_NAMESPACE
