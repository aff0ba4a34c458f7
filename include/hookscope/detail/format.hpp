// Formats any value as text for the registry's type-erased callbacks and HOOKSCOPE_TRACE.
#pragma once

#include "hookscope/config.hpp"
#include "hookscope/detail/type_name.hpp"

#include <concepts>
#include <ostream>
#include <string>
#include <string_view>
#include <type_traits>

HOOKSCOPE_DETAIL_BEGIN_NAMESPACE
namespace detail {

template <class T>
concept streamable = requires(std::ostream& os, const T& value) {
  os << value;
};

// Compiled in the library (src/format.cpp): <charconv> and <sstream> stay out of every translation unit that calls
// an observable (~150 M of GCC 12's instructions each). (<ostream> stays: whether a type is `streamable` must not
// depend on what else a translation unit included.)
std::string format_integer(long long value);
std::string format_integer(unsigned long long value);
std::string format_floating(float value);  // shortest exact form of each width
std::string format_floating(double value);
std::string format_floating(long double value);
/// What `write` puts on a std::ostringstream for `value`.
std::string format_streamed(void (*write)(std::ostream&, const void*), const void* value);

/// `value` as text: strings quoted, bools as words, numbers in their shortest exact form, anything with
/// `operator<<` through it, else "<type>".
template <class T>
std::string format_value(const T& value) {
  if constexpr (std::is_volatile_v<T> && std::is_scalar_v<T>) {
    return format_value<std::remove_cv_t<T>>(value);  // a volatile parameter's value, as its plain type's
  } else if constexpr (std::is_pointer_v<T> && std::is_volatile_v<std::remove_pointer_t<T>>) {
    // No operator<< takes a pointer to volatile before C++23: the stream would print it as a bool.
    return format_value<const void*>(const_cast<const void*>(static_cast<const volatile void*>(value)));
  } else if constexpr (std::is_same_v<T, bool>) {
    return value ? "true" : "false";
  } else if constexpr (std::is_integral_v<T> && sizeof(T) > 1) {
    // Without a stream: the trace and the timeline format numbers on every call.
    if constexpr (std::is_signed_v<T>) {
      return format_integer(static_cast<long long>(value));
    } else {
      return format_integer(static_cast<unsigned long long>(value));
    }
  } else if constexpr (std::is_floating_point_v<T>) {
    return format_floating(value);
  } else if constexpr (std::is_convertible_v<const T&, std::string_view> && !std::is_same_v<T, std::nullptr_t>) {
    std::string out = "\"";
    out.append(std::string_view(value)).push_back('"');
    return out;
  } else if constexpr (std::is_same_v<T, char> || std::is_same_v<T, signed char> || std::is_same_v<T, unsigned char>) {
    return std::to_string(static_cast<int>(value));
  } else if constexpr (streamable<T>) {
    return format_streamed([](std::ostream& os, const void* v) { os << *static_cast<const T*>(v); },
                           __builtin_addressof(value));
  } else {
    std::string out = "<";
    out.append(type_name<T>()).push_back('>');
    return out;
  }
}

}  // namespace detail
HOOKSCOPE_DETAIL_END_NAMESPACE
