// hookscope/detail/capture_traits.hpp — the user's opt-ins of capture (capture_as_opaque, capture_pointee) and the
// type tests that capture (capture_classify.hpp) and formatting (format.hpp) share, so that the two treat a type
// alike: which classes are strings, what a pointer may be read as.
#pragma once

#include "hookscope/detail/config.hpp"

#include <cstddef>
#include <string>
#include <string_view>
#include <type_traits>

HOOKSCOPE_DETAIL_BEGIN_NAMESPACE

/// Set to true for a type to capture as an opaque leaf (its type name, no value) whatever structural rule it would
/// pass: `template <> inline constexpr bool hookscope::capture_as_opaque<T> = true;`. tensor_traits and
/// flatten_traits still win (they are the user's explicit word too, and more specific).
template <class T>
inline constexpr bool capture_as_opaque = false;

/// Set to true for a complete object type T (cv-unqualified) to capture raw pointers to it (`T*`, `const T*`) as
/// their pointee, read without faulting, rather than as their address; HOOKSCOPE_TRACE and HOOKSCOPE_TIMELINE then
/// print the pointee too: `template <> inline constexpr bool hookscope::capture_pointee<T> = true;`. For `char`,
/// pointers are read as C strings (up to their NUL, within capture_options::max_bytes). Memory that cannot be read
/// is an opaque leaf with "unreadable". (One parameter's pointee: a `*` before its name in the annotation.)
template <class T>
inline constexpr bool capture_pointee = false;

namespace detail {

/// The bound on the bytes of strings in one capture by default (capture_options::max_bytes), which also bounds the
/// C strings that formatting reads.
inline constexpr std::size_t default_max_bytes = std::size_t{1} << 20;

/// The standard string types of char, the only classes captured and formatted as strings: a class that merely
/// converts to std::string_view is captured by its own rule, so that no conversion of the program's runs.
template <class T>
inline constexpr bool is_standard_string = false;
template <class Traits, class Allocator>
inline constexpr bool is_standard_string<std::basic_string<char, Traits, Allocator>> = true;
template <class Traits>
inline constexpr bool is_standard_string<std::basic_string_view<char, Traits>> = true;

/// Complete object types: what may be captured structurally. (Asked once per type: a type completed later in the
/// same translation unit keeps the first answer, as any trait of an incomplete type would.)
template <class T>
concept complete_object = std::is_object_v<T> && requires {
  sizeof(T);
};

/// A raw pointer whose pointee is read (a C string for char) wherever it is captured or formatted: the user set
/// capture_pointee for its pointee type.
template <class T>
concept pointee_opted_in = std::is_pointer_v<T> && complete_object<std::remove_cv_t<std::remove_pointer_t<T>>> &&
    capture_pointee<std::remove_cv_t<std::remove_pointer_t<T>>>;

/// What a `*` may mark in an annotation's parameter list: a raw pointer to a complete object type (the parameter's
/// type through a reference or not), whose pointee can be read.
template <class A>
concept pointee_parameter = std::is_pointer_v<std::remove_cvref_t<A>> &&
    complete_object<std::remove_cv_t<std::remove_pointer_t<std::remove_cvref_t<A>>>>;

}  // namespace detail
HOOKSCOPE_DETAIL_END_NAMESPACE
