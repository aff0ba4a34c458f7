// hookscope/capture.hpp — turns any argument into an owned value that outlives the call, chosen at compile time
// from its type, and converts it to the run-time value tree.
//
// A type is captured by the first rule of this list that it passes (detail::classify, capture_classify.hpp):
//
//   tensors (tensor_traits)        -> tensor_spec{shape, dtype}      (contents too with capture_options)
//   other classes (flatten_traits) -> captured_class                  (struct, the (name, child) pairs it names;
//                                                                       an explicit specialisation beats the
//                                                                       structural rules below)
//   bool, integers, floats         -> bool, std::int64_t, double
//   std::nullptr_t                 -> std::monostate                  (none)
//   strings (-> std::string_view)  -> std::string
//   std::optional, pointers        -> std::optional<captured>          (absent: none)
//   map<string, T>                 -> captured_dict<captured>          (dict, in iteration order)
//   vector, array, span, ranges    -> std::vector<captured>            (list)
//   tuple, pair                    -> std::tuple<captured...>          (tuple)
//   Hana-adapted structs           -> captured_struct                  (struct, fields by name)
//   aggregates (Boost.PFR)         -> captured_struct                  (struct, fields by name on Boost >= 1.84,
//                                                                       "0", "1", ... before; at most 32 fields)
//
// Anything else does not compile, with a message naming the type and the fix. Capturing and `capturable<T>` both
// dispatch on that one classification, so a type is capturable exactly when capturing it compiles.
//
// The rules live in detail/: capture_classify.hpp (the type tests and the order), capture_rules.hpp (the captured
// type and the capture function of each rule), tensor_data.hpp (the opt-in copy of tensor contents) and
// capture_to_value.hpp (captured -> value tree).
#pragma once

#include "hookscope/config.hpp"
#include "hookscope/detail/capture_classify.hpp"
#include "hookscope/detail/capture_rules.hpp"
#include "hookscope/detail/capture_to_value.hpp"
#include "hookscope/tensor.hpp"
#include "hookscope/value.hpp"

#include <type_traits>

HOOKSCOPE_DETAIL_BEGIN_NAMESPACE

/// True when hookscope can capture a T, all the way down: `std::vector<U>` is capturable when U is. Asking never
/// fails to compile, so generic code can capture what it can and skip the rest.
template <class T>
concept capturable = detail::rule_of<T>::ok;

/// The owned, storable form of a `T` argument (see the table at the top of this header).
template <class T>
using captured_t = detail::captured_of<T>;

/// Captures `v` as `options` say (tensor contents too, with `.tensor_data = true`).
template <class T>
captured_t<T> capture(const T& v, capture_options options) {
  return detail::checked_rule<std::remove_cvref_t<T>>::capture(v, options);
}

/// Captures `v`: shapes and dtypes of tensors, copies of scalars and strings, containers element by element.
template <class T>
captured_t<T> capture(const T& v) {
  return detail::checked_rule<std::remove_cvref_t<T>>::capture(v, capture_options{});
}

/// The run-time value tree of a captured value.
template <class C>
value to_value(const C& captured) {
  return detail::to_value_of(captured);
}

/// Captures `v` straight into the value tree, as `options` say (the captured parts are moved in, not copied).
template <class T>
value capture_value(const T& v, capture_options options) {
  return detail::to_value_of(detail::checked_rule<std::remove_cvref_t<T>>::capture(v, options));
}

/// Captures `v` straight into the value tree.
template <class T>
value capture_value(const T& v) {
  return detail::to_value_of(detail::checked_rule<std::remove_cvref_t<T>>::capture(v, capture_options{}));
}

HOOKSCOPE_DETAIL_END_NAMESPACE
