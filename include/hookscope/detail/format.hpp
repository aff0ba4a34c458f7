// Formats any value as text for the registry's type-erased callbacks and HOOKSCOPE_TRACE.
#pragma once

#include "hookscope/detail/config.hpp"
#include "hookscope/detail/capture_traits.hpp"
#include "hookscope/detail/safe_read.hpp"
#include "hookscope/detail/type_name.hpp"

#include <bit>
#include <concepts>
#include <cstddef>
#include <cstdint>
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
/// An address as "0x" and lowercase hexadecimal digits (the record format's spelling).
std::string format_address(std::uintptr_t address);
/// How many bytes of a string a formatted argument quotes, the capture's bound (capture_options::max_bytes): a call
/// passing 100 MiB of text costs a trace or a timeline no 100 MiB copy.
inline constexpr std::size_t max_quoted_bytes = default_max_bytes;
/// The bytes quoted as they are; past max_quoted_bytes, the first ones (whole UTF-8 characters) and `…(N bytes)`.
std::string format_quoted(std::string_view text);
/// The C string at `p` read without faulting (detail/safe_read.hpp): quoted, or its address and why it is not.
std::string format_c_string(const char* p, std::size_t bound);
/// The address of a pointee that could not be read, and that it could not.
std::string format_unreadable(std::uintptr_t address);

template <class T>
std::string format_value(const T& value);

//=== values copied raw on the call, formatted later ===//

/// How format_value writes a value of a type: from 8 bytes copied on the call (text_bits), at any later time, for
/// every kind but `formatted` (whose text needs the value itself: strings, streamed values, pointees). A consumer
/// that formats off the calling thread (HOOKSCOPE_TIMELINE) copies the bits and writes them with text_of.
enum class text_kind : std::uint8_t {
  formatted,
  signed_integer,  // also the character types, which format_value writes as an int
  unsigned_integer,
  float32,
  float64,
  boolean,
  address,    // "nullptr" for 0
  type_name,  // "<T>": the bits are the address of the text (bracketed_type_name)
};

/// The text format_value gives a value of T that has no value to show: "<T>", with static storage.
template <class T>
struct bracketed_type_name {
  static constexpr std::string_view name = type_name<T>();
  static constexpr static_text<name.size() + 2> text = [] {
    static_text<name.size() + 2> t;
    t.data[0] = '<';
    for (std::size_t i = 0; i < name.size(); ++i) t.data[i + 1] = name[i];
    t.data[name.size() + 1] = '>';
    return t;
  }();
  static constexpr std::string_view view = text.view();
};

/// The kind of T's text: the same ladder as format_value's (tests/format.test.cpp checks the two agree).
template <class T>
consteval text_kind find_text_kind() noexcept {
  if constexpr (std::is_volatile_v<T> && std::is_scalar_v<T>) {
    return find_text_kind<std::remove_cv_t<T>>();
  } else if constexpr (std::is_pointer_v<T>) {
    return pointee_opted_in<T> ? text_kind::formatted : text_kind::address;
  } else if constexpr (std::is_member_pointer_v<T>) {
    return text_kind::type_name;
  } else if constexpr (std::is_same_v<T, bool>) {
    return text_kind::boolean;
  } else if constexpr (std::is_integral_v<T> && sizeof(T) > 1) {
    return std::is_signed_v<T> ? text_kind::signed_integer : text_kind::unsigned_integer;
  } else if constexpr (std::is_floating_point_v<T>) {
    if constexpr (std::is_same_v<T, float>) return text_kind::float32;
    if constexpr (std::is_same_v<T, double>) return text_kind::float64;
    return text_kind::formatted;  // long double: wider than the bits
  } else if constexpr (is_standard_string<T>) {
    return text_kind::formatted;
  } else if constexpr (std::is_array_v<T> && std::rank_v<T> == 1 && std::is_same_v<std::remove_extent_t<T>, char>) {
    return text_kind::formatted;
  } else if constexpr (std::is_same_v<T, char> || std::is_same_v<T, signed char> || std::is_same_v<T, unsigned char>) {
    return text_kind::signed_integer;
  } else if constexpr (streamable<T>) {
    return text_kind::formatted;
  } else {
    return text_kind::type_name;
  }
}
template <class T>
inline constexpr text_kind text_kind_of = find_text_kind<T>();

/// The 8 bytes text_of needs to write `value` as format_value does (T's kind is not `formatted`).
template <class T>
std::uint64_t text_bits(const T& value) noexcept {
  constexpr text_kind kind = text_kind_of<T>;
  static_assert(kind != text_kind::formatted, "hookscope: text_bits of a value formatted only from itself");
  if constexpr (kind == text_kind::signed_integer) {
    return static_cast<std::uint64_t>(static_cast<long long>(value));
  } else if constexpr (kind == text_kind::unsigned_integer) {
    return static_cast<std::uint64_t>(value);
  } else if constexpr (kind == text_kind::float32) {
    return std::bit_cast<std::uint32_t>(static_cast<float>(value));
  } else if constexpr (kind == text_kind::float64) {
    return std::bit_cast<std::uint64_t>(static_cast<double>(value));
  } else if constexpr (kind == text_kind::boolean) {
    return value ? 1 : 0;
  } else if constexpr (kind == text_kind::address) {
    return reinterpret_cast<std::uintptr_t>(value);
  } else {
    return reinterpret_cast<std::uintptr_t>(&bracketed_type_name<std::remove_cv_t<T>>::view);
  }
}

/// Room for the text of any kind but `type_name` (whose text is its own).
inline constexpr std::size_t text_buffer_size = 32;

/// The text format_value gives the value whose bits are `bits` (text_bits) and whose kind is `kind` (not
/// `formatted`): written into `buffer`, or the type name's own storage. Allocates nothing; async-signal-safe.
std::string_view text_of(text_kind kind, std::uint64_t bits, char (&buffer)[text_buffer_size]) noexcept;

/// The pointee of the raw pointer `p` (not null, to a complete object type), read without faulting as capture reads
/// it (capture_pointer_rules.hpp): a char pointer's C string; a trivially copyable pointee copied first, another
/// class checked readable and formatted in place; a volatile object of another class by its address only.
template <class T>
std::string format_pointee(T p) {
  using object = std::remove_cv_t<std::remove_pointer_t<T>>;
  const auto address = reinterpret_cast<std::uintptr_t>(p);
  if constexpr (std::is_same_v<object, char>) {
    return format_c_string(static_cast<const char*>(detail::bytes_of(p)), default_max_bytes);
  } else if constexpr (std::is_trivially_copyable_v<object>) {
    safe_copy<object> copy;
    return copy.read(detail::bytes_of(p)) ? detail::format_value(copy.get()) : format_unreadable(address);
  } else if constexpr (std::is_volatile_v<std::remove_pointer_t<T>>) {
    return format_address(address);
  } else {
    return memory_readable(detail::bytes_of(p), sizeof(object)) ? detail::format_value(*p) : format_unreadable(address);
  }
}

/// `value` as text: standard strings quoted (char arrays up to their first NUL, never past their end), bools as
/// words, numbers in their shortest exact form, raw pointers as their address ("0x...", "nullptr"; the pointee where
/// the user opted in with capture_pointee), anything with `operator<<` through it (the program's own printing
/// code), else "<type>". A class that converts to a string or a number is formatted by its own `operator<<` if it
/// has one, never through the conversion.
template <class T>
std::string format_value(const T& value) {
  if constexpr (std::is_volatile_v<T> && std::is_scalar_v<T>) {
    return detail::format_value<std::remove_cv_t<T>>(value);  // a volatile parameter's value, as its plain type's
  } else if constexpr (std::is_pointer_v<T>) {
    // Never the stream's: it would print a char pointer's bytes up to a NUL that may not be there, a pointer to
    // volatile or a function as the bool 1.
    if (value == nullptr) return "nullptr";
    if constexpr (pointee_opted_in<T>) {
      return detail::format_pointee(value);
    } else {
      return format_address(reinterpret_cast<std::uintptr_t>(value));
    }
  } else if constexpr (std::is_member_pointer_v<T>) {
    std::string out = "<";
    out.append(type_name<T>()).push_back('>');
    return out;
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
  } else if constexpr (is_standard_string<T>) {
    return format_quoted(std::string_view(value.data(), value.size()));
  } else if constexpr (std::is_array_v<T> && std::rank_v<T> == 1 && std::is_same_v<std::remove_extent_t<T>, char>) {
    const char* end = std::char_traits<char>::find(value, std::extent_v<T>, '\0');
    return format_quoted(
        std::string_view(value, end != nullptr ? static_cast<std::size_t>(end - value) : std::extent_v<T>));
  } else if constexpr (std::is_same_v<T, char> || std::is_same_v<T, signed char> || std::is_same_v<T, unsigned char>) {
    return std::to_string(static_cast<int>(value));
  } else if constexpr (streamable<T>) {
    return format_streamed([](std::ostream& os, const void* v) { os << *static_cast<const T*>(v); },
                           __builtin_addressof(value));  // never a user operator&
  } else {
    std::string out = "<";
    out.append(type_name<T>()).push_back('>');
    return out;
  }
}

}  // namespace detail
HOOKSCOPE_DETAIL_END_NAMESPACE
