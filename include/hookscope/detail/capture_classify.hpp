// hookscope/detail/capture_classify.hpp — which capture rule a type falls under: one consteval classification with
// one precedence order, on which both capturing (capture_rules.hpp) and hookscope::capturable dispatch.
#pragma once

#include "hookscope/config.hpp"
#include "hookscope/detail/capture_fields.hpp"
#include "hookscope/detail/range_concepts.hpp"
#include "hookscope/tensor.hpp"

#include <boost/hana/concept/struct.hpp>

#include <cstddef>
#include <optional>
#include <string_view>
#include <tuple>
#include <type_traits>

HOOKSCOPE_DETAIL_BEGIN_NAMESPACE

/// Specialise for a class that is neither a tensor, a range nor an aggregate (the counterpart of registering
/// a pytree node): `static constexpr std::string_view name` (optional, the struct name in records) and
/// `static auto flatten(const T&)` returning named children as a range of `std::pair<std::string, X>` (or a map
/// from strings). A specialisation wins over every rule but tensor_traits: it is the user's explicit word.
template <class T>
struct flatten_traits;

namespace detail {

/// The capture rules, in precedence order: a type takes the first kind whose test it passes.
enum class capture_kind : unsigned char {
  unsupported,  ///< no rule: not capturable
  tensor,       ///< tensor_traits<T> specialised                         -> tensor_spec
  flattened,    ///< flatten_traits<T> specialised                        -> captured_class
  boolean,      ///< bool                                                 -> bool
  arithmetic,   ///< other integers, floating point                       -> std::int64_t, double
  null,         ///< std::nullptr_t (before strings: it converts to std::string_view in C++20) -> std::monostate
  string,       ///< convertible to std::string_view (char*, std::string)  -> std::string
  optional,     ///< std::optional<U>                                     -> std::optional<captured U>
  pointer,      ///< U*, unique_ptr<U>, shared_ptr<U> (U an object type)  -> std::optional<captured U>
  string_map,   ///< a range with key_type convertible to string_view     -> captured_dict
  range,        ///< any other range (vector, array, span, ...)          -> std::vector<captured element>
  tuple_like,   ///< std::tuple_size<T> defined (tuple, pair)             -> std::tuple<captured...>
  hana_struct,  ///< a Boost.Hana Struct                                  -> captured_struct, named fields
  aggregate,    ///< a non-polymorphic aggregate class of <= 32 fields, no bases -> captured_struct (fields by
                ///< a structured binding)
};

template <class T>
inline constexpr bool is_optional = false;
template <class T>
inline constexpr bool is_optional<std::optional<T>> = true;

/// std::unique_ptr and std::shared_ptr, recognised by what they declare rather than by name: naming them takes
/// <memory>, which every translation unit that calls an observable would parse (GCC 12: ~0.6 G of the compiler's
/// instructions). An owning pointer: `element_type`, `get()`, and a deleter type (unique_ptr) or a weak type
/// (shared_ptr); other smart pointers that declare the same are captured alike. (std::weak_ptr has no `get()`.)
template <class T>
concept is_smart_pointer = requires(const T& p) {
  typename T::element_type;
  p.get();
}
&&(
    requires { typename T::deleter_type; } || requires { typename T::weak_type; });

template <class T>
concept flattenable = requires(const T& t) {
  flatten_traits<T>::flatten(t);
};

template <class T>
concept string_keyed_map = requires {
  typename T::key_type;
  typename T::mapped_type;
}
&&std::is_convertible_v<const typename T::key_type&, std::string_view>;

template <class T>
concept dereferenceable = requires(const T& p) {
  *p;
};

template <class T>
consteval capture_kind classify_pointer() {
  if constexpr (std::is_pointer_v<T>) {
    return std::is_object_v<std::remove_pointer_t<T>> ? capture_kind::pointer : capture_kind::unsupported;
  } else {
    return dereferenceable<T> ? capture_kind::pointer : capture_kind::unsupported;  // not unique_ptr<U[]>
  }
}

/// The capture rule of T (cv-unqualified, not a reference): the first kind of capture_kind's list T passes.
/// Each test runs only when every earlier one failed, so the rules need no exclusions of one another.
template <class T>
consteval capture_kind classify() {
  if constexpr (tensor<T>) {
    return capture_kind::tensor;
  } else if constexpr (flattenable<T>) {
    return capture_kind::flattened;
  } else if constexpr (std::is_same_v<T, bool>) {
    return capture_kind::boolean;
  } else if constexpr (std::is_arithmetic_v<T>) {
    return capture_kind::arithmetic;
  } else if constexpr (std::is_same_v<T, std::nullptr_t>) {
    return capture_kind::null;
  } else if constexpr (std::is_convertible_v<const T&, std::string_view>) {
    return capture_kind::string;
  } else if constexpr (is_optional<T>) {
    return capture_kind::optional;
  } else if constexpr (std::is_pointer_v<T> || is_smart_pointer<T>) {
    return classify_pointer<T>();
  } else if constexpr (std::ranges::range<const T>) {
    if constexpr (std::is_same_v<std::remove_cvref_t<std::ranges::range_reference_t<const T>>, T>) {
      return capture_kind::unsupported;  // a range of itself (std::filesystem::path) would never end
    } else {
      return string_keyed_map<T> ? capture_kind::string_map : capture_kind::range;
    }
  } else if constexpr (requires { std::tuple_size<T>::value; }) {
    return capture_kind::tuple_like;
  } else if constexpr (boost::hana::Struct<T>::value) {
    return capture_kind::hana_struct;
  } else if constexpr (std::is_aggregate_v<T> && std::is_class_v<T> && !std::is_polymorphic_v<T>) {
    constexpr std::size_t fields = count_fields<T>();  // capture_fields.hpp
    return fields <= max_aggregate_fields && (fields > 0 || std::is_empty_v<T>) ? capture_kind::aggregate
                                                                                : capture_kind::unsupported;
  } else {
    return capture_kind::unsupported;
  }
}

}  // namespace detail
HOOKSCOPE_DETAIL_END_NAMESPACE
