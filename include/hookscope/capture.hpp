// hookscope/capture.hpp — turns any argument into an owned value that outlives the call, chosen at compile time
// from its type, and converts it to the run-time value tree.
//
// A type is captured by the first rule of this list that it passes (detail::classify, capture_classify.hpp). Every
// type passes one: the last is an opaque leaf, so an annotated call compiles whatever its parameter types.
//
//   tensors (tensor_traits)         -> tensor_spec{shape, dtype}    (contents too with capture_options; a negative
//                                                                     dimension is a value_error)
//   other classes (flatten_traits)  -> captured_class                (struct, the (name, child) pairs it names;
//                                                                     beats every rule below)
//   capture_as_opaque<T> = true     -> captured_opaque               (the user's opt-out of the rules below)
//   bool, integers, floats          -> bool, std::int64_t, double    (long double too; 128-bit integers: opaque)
//   enums, enum classes             -> their underlying integer
//   std::nullptr_t, std::monostate  -> std::monostate                (none)
//   char[N]                         -> std::string                   (up to the first NUL, never past N)
//   strings (-> std::string_view)   -> std::string                   (a null char*: none)
//   std::u8string(_view)            -> std::string                   (its bytes)
//   std::optional                   -> std::optional<captured>        (absent: none)
//   std::variant                    -> captured_variant               ({"variant": index, "value": alternative})
//   pointers, unique_ptr, shared_ptr-> std::optional<captured>        (null: none; to an incomplete type, void,
//                                                                      a function or a wide char: opaque)
//   std::reference_wrapper          -> the captured referent
//   std::filesystem::path           -> std::string
//   ranges of std::byte             -> captured_bytes                 ({"bytes": base64})
//   map<string, T>                  -> captured_dict<captured>        (dict, in iteration order)
//   vector, array, span, T[N], ...  -> std::vector<captured>          (list; a proxy reference, as vector<bool>'s,
//                                                                      is converted to the value type first)
//   tuple, pair                     -> std::tuple<captured...>        (tuple)
//   Hana-adapted structs            -> captured_struct                (struct, fields by name)
//   aggregates                      -> captured_struct                (struct, fields by name on Boost >= 1.84,
//                                                                      "0", "1", ... before; at most 32 fields,
//                                                                      no base class, no union member, not
//                                                                      polymorphic)
//   anything else                   -> captured_opaque                ({"opaque": type name}: void*, function and
//                                                                      member pointers, classes with private
//                                                                      members, polymorphic classes, unions,
//                                                                      closures, std::function, std::any, mutexes,
//                                                                      aggregates with a base class, ...)
//
// A struct met again below itself (a recursive type) is captured down to max_capture_depth (32) levels of the value
// tree (containers above it); a recursive part that deep is {"opaque": type name, "depth_limited": true}.
// `capturable<T>` is true when the capture of T is structural all the way down (no opaque leaf in its rules).
//
// The rules live in detail/: capture_classify.hpp (the type tests and the order), capture_fields.hpp (an
// aggregate's bases and fields), capture_rules.hpp (the captured type and the capture function of each rule),
// capture_struct_rules.hpp (those of structs, and recursion), tensor_data.hpp (the opt-in copy of tensor contents)
// and capture_to_value.hpp (captured -> value tree).
#pragma once

#include "hookscope/config.hpp"
#include "hookscope/detail/capture_classify.hpp"
#include "hookscope/detail/capture_pointer_rules.hpp"
#include "hookscope/detail/capture_rules.hpp"
#include "hookscope/detail/capture_struct_rules.hpp"
#include "hookscope/detail/capture_to_value.hpp"
#include "hookscope/tensor.hpp"
#include "hookscope/value.hpp"

#include <type_traits>

HOOKSCOPE_DETAIL_BEGIN_NAMESPACE

/// How deep in the value tree (in containers above it) a part of a recursive type is captured: one this deep is an
/// opaque leaf marked "depth_limited" (which keeps records within the format's nesting limit).
inline constexpr unsigned max_capture_depth = detail::max_recursion_depth;

/// True when hookscope captures a T structurally all the way down, with no opaque leaf: `std::vector<U>` is when U
/// is. Every type can be captured; this tells which captures hold values. Asking never fails to compile, whatever
/// T is (incomplete, abstract, void, a function, a reference, an array).
template <class T>
concept capturable = detail::rule_of<T>::ok;

/// The owned, storable form of a `T` argument (see the table at the top of this header).
template <class T>
using captured_t = detail::captured_of<T>;

namespace detail {
/// One capture of `v`, with its own budget (capture_options' bounds hold for the whole value).
template <class T>
captured_of<T> capture_whole(const T& v, const capture_options& options) {
  capture_budget budget{options.max_elements, options.max_bytes};
  return rule_of<T>::capture(v, capture_state{options, 0, true, &budget});
}
}  // namespace detail

/// Captures `v` as `options` say (tensor contents with `.tensor_data = true`, a pointer's pointee with
/// `.read_pointee = true`, other bounds).
template <class T>
captured_t<T> capture(const T& v, const capture_options& options) {
  return detail::capture_whole(v, options);
}

/// Captures `v`: shapes and dtypes of tensors, copies of scalars and strings, containers element by element, the
/// address of raw pointers, the type name of what is opaque.
template <class T>
captured_t<T> capture(const T& v) {
  return detail::capture_whole(v, capture_options{});
}

/// The run-time value tree of a captured value.
template <class C>
value to_value(const C& captured) {
  return detail::to_value_of(captured);
}

/// Captures `v` straight into the value tree, as `options` say (the captured parts are moved in, not copied).
template <class T>
value capture_value(const T& v, const capture_options& options) {
  return detail::to_value_of(detail::capture_whole(v, options));
}

/// Captures `v` straight into the value tree.
template <class T>
value capture_value(const T& v) {
  return detail::to_value_of(detail::capture_whole(v, capture_options{}));
}

HOOKSCOPE_DETAIL_END_NAMESPACE
