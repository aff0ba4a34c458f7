// hookscope/capture.hpp — turns any argument into an owned value that outlives the call, chosen at compile time
// from its type, and converts it to the run-time value tree.
//
// A type is captured by the first rule of this list that it passes (detail::classify, capture_classify.hpp). Every
// type passes one: the last is an opaque leaf, so an annotated call compiles whatever its parameter types. Capture
// reads only what the program handed over and calls none of its code with side effects: raw pointers are addresses,
// ranges are iterated only when that cannot change them, no conversion, operator& or operator, is called.
//
//   tensors (tensor_traits)         -> tensor_spec{shape, dtype}    (contents too with capture_options; a negative
//                                                                     dimension is a value_error)
//   other classes (flatten_traits)  -> captured_class                (struct, the (name, child) pairs it names;
//                                                                     beats every rule below)
//   capture_as_opaque<T> = true     -> captured_opaque               (the user's opt-out of the rules below)
//   bool, integers, floats          -> bool, std::int64_t, double    (long double too; 128-bit integers: opaque)
//   enums, enum classes             -> their underlying integer
//   std::nullptr_t, std::monostate  -> std::monostate                (none)
//   char[N]                         -> or_opaque<std::string>        (up to the first NUL, never past N)
//   std::string, std::string_view   -> or_opaque<std::string>        (the standard strings only, any traits and
//                                                                     allocator; not a class converting to them)
//   std::u8string(_view)            -> or_opaque<std::string>        (its bytes)
//   std::optional                   -> std::optional<captured>        (absent: none)
//   std::variant                    -> captured_variant               ({"variant": index, "value": alternative})
//   char*, const char*              -> optional<or_opaque<string>>   (null: none; else its address, never read;
//                                                                     the C string where opted in, read without
//                                                                     faulting: capture_pointee<char>, *name,
//                                                                     read_pointee)
//   T* (T a complete object type)   -> optional<or_opaque<captured>> (null: none; else its address; the pointee
//                                                                     where opted in: capture_pointee<T>, *name,
//                                                                     read_pointee; "unreadable" where it cannot be)
//   void*, pointers to incomplete   -> std::optional<captured_opaque> (null: none; else its address)
//   unique_ptr, shared_ptr          -> std::optional<captured>        (the object they own: none when null)
//   std::reference_wrapper          -> the captured referent
//   std::filesystem::path           -> or_opaque<std::string>
//   ranges of std::byte             -> or_opaque<captured_bytes>      ({"bytes": base64})
//   map<string, T>                  -> or_opaque<captured_dict<...>>  (dict, in iteration order)
//   vector, array, span, T[N], ...  -> or_opaque<std::vector<...>>    (list: forward ranges that are not views,
//                                                                     contiguous sized views; std::vector<bool>'s
//                                                                     proxy converted to bool)
//   tuple, pair                     -> std::tuple<captured...>        (tuple)
//   Hana-adapted structs            -> captured_struct                (struct, fields by name)
//   aggregates                      -> captured_struct                (struct, fields by name on Boost >= 1.84,
//                                                                     "0", "1", ... before; at most 32 fields,
//                                                                     no base class, no union member, not
//                                                                     polymorphic)
//   anything else                   -> captured_opaque                ({"opaque": type name}: single-pass input
//                                                                     ranges, views that are not contiguous
//                                                                     (transform, filter, ...), function and member
//                                                                     pointers, classes with private members,
//                                                                     polymorphic classes, unions, closures,
//                                                                     std::function, std::any, mutexes, aggregates
//                                                                     with a base class, ...)
//
// or_opaque<C> is C, or an opaque leaf saying why it is not there: a raw pointer's address (and "unreadable" where
// its pointee was asked for and could not be read), or "too_large" with the length of a range, string or bytes over
// the capture's bounds (capture_options::max_elements, max_bytes: for the whole captured value, checked before
// anything is copied).
//
// A struct met again below itself (a recursive type) is captured down to max_capture_depth (32) levels of the value
// tree (containers above it); a recursive part that deep is {"opaque": type name, "depth_limited": true}.
// `capturable<T>` is true when the capture of T is structural all the way down (no opaque leaf in its rules; the
// depth and size bounds and unreadable memory are run-time facts).
//
// The rules live in detail/: capture_classify.hpp (the type tests and the order), capture_traits.hpp (the opt-ins
// capture_as_opaque and capture_pointee), capture_fields.hpp (an aggregate's bases and fields), capture_rules.hpp
// (the captured type and the capture function of each rule), capture_pointer_rules.hpp (pointers), safe_read.hpp
// (reading memory without faulting), capture_struct_rules.hpp (structs, and recursion), tensor_data.hpp (the opt-in
// copy of tensor contents) and capture_to_value.hpp (one whole capture, and captured -> value tree).
#pragma once

#include "hookscope/config.hpp"
#include "hookscope/detail/capture_classify.hpp"
#include "hookscope/detail/capture_pointer_rules.hpp"
#include "hookscope/detail/capture_rules.hpp"
#include "hookscope/detail/capture_struct_rules.hpp"
#include "hookscope/detail/capture_to_value.hpp"
#include "hookscope/detail/capture_traits.hpp"  // the opt-ins: capture_as_opaque, capture_pointee
#include "hookscope/tensor.hpp"
#include "hookscope/value.hpp"

#include <type_traits>

HOOKSCOPE_DETAIL_BEGIN_NAMESPACE

/// How deep in the value tree (in containers above it) a part of a recursive type is captured: one this deep is an
/// opaque leaf marked "depth_limited" (which keeps records within the format's nesting limit).
inline constexpr unsigned max_capture_depth = detail::max_recursion_depth;

// capturable<T> (true when hookscope captures a T structurally all the way down, with no opaque leaf) is defined in
// detail/capture_to_value.hpp, where the erased call's tables ask it too.

/// The owned, storable form of a `T` argument (see the table at the top of this header).
template <class T>
using captured_t = detail::captured_of<T>;

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
