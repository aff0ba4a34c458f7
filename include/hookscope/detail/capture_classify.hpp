// hookscope/detail/capture_classify.hpp — which capture rule a type falls under: one consteval classification with
// one precedence order, on which both capturing (capture_rules.hpp) and hookscope::capturable dispatch. It is total:
// every type gets a rule, the last one being an opaque leaf (the type's name, no value).
#pragma once

#include "hookscope/detail/config.hpp"
#include "hookscope/detail/capture_fields.hpp"
#include "hookscope/detail/capture_traits.hpp"
#include "hookscope/detail/range_concepts.hpp"
#include "hookscope/detail/tensor.hpp"

#include <boost/hana/concept/struct.hpp>

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <tuple>
#include <type_traits>
#include <variant>  // std::variant_size and std::monostate (capture_rules.hpp needs <variant> anyway)

HOOKSCOPE_DETAIL_BEGIN_NAMESPACE

/// Specialise for a class that is neither a tensor, a range nor an aggregate (the counterpart of registering
/// a pytree node): `static constexpr std::string_view name` (optional, the struct name in records) and
/// `static auto flatten(const T&)` returning named children as a range of `std::pair<std::string, X>` (or a map
/// from strings). A specialisation wins over every rule but tensor_traits: it is the user's explicit word.
template <class T>
struct flatten_traits;

namespace detail {

/// How deep in the value tree (counted in containers: structs, lists, tuples, dicts, variants) a recursive type is
/// captured: a recursive part (a tree node's child, a list item's successor) this deep is captured as an opaque
/// leaf with "depth_limited": true. A value level takes at most 3 JSON levels (a struct: its object, its fields, a
/// pair), so 32 keeps a capture well within the record format's 125 (max_value_json_levels, src/json_reader.hpp).
inline constexpr unsigned max_recursion_depth = 32;

/// The capture rules, in precedence order: a type takes the first kind whose test it passes; `opaque` when none.
enum class capture_kind : unsigned char {
  opaque,       ///< no structural rule (or capture_as_opaque)         -> captured_opaque{type name}
  tensor,       ///< tensor_traits<T> specialised                        -> tensor_spec
  flattened,    ///< flatten_traits<T> specialised                       -> captured_class
  boolean,      ///< bool                                                -> bool
  arithmetic,   ///< other integers (at most 64 bits), floating point    -> std::int64_t, double
  enumeration,  ///< enums, enum classes                                 -> its underlying integer's capture
  null,         ///< std::nullptr_t, std::monostate                      -> std::monostate
  char_array,   ///< char[N]: a C string read up to the first NUL, never past N -> or_opaque<std::string>
  string,       ///< std::basic_string<char>, std::basic_string_view<char> -> or_opaque<std::string>
  u8_string,    ///< a contiguous class range of char8_t (std::u8string, std::u8string_view) -> or_opaque<std::string>
  optional,     ///< std::optional<U>                                    -> std::optional<captured U>
  variant,      ///< std::variant<U...>                                  -> captured_variant (index, alternative)
  c_string,     ///< char* (cv): its address; a C string where opted in  -> std::optional<or_opaque<std::string>>
  raw_pointer,  ///< U* (U a complete object type): its address; the pointee where opted in -> std::optional<or_opaque>
  address,      ///< void*, pointers to incomplete types: their address  -> std::optional<captured_opaque>
  pointer,      ///< unique_ptr<U>, shared_ptr<U> (U a complete object type; else opaque) -> std::optional
  reference,    ///< a reference wrapper: get() returning T::type&      -> the captured referent
  path,         ///< a range of itself with string() (std::filesystem::path) -> std::string
  bytes,        ///< a range of std::byte                                -> or_opaque<captured_bytes>
  string_map,   ///< a map of unique standard string keys                 -> or_opaque<captured_dict>
  range,        ///< any other range (vector, array, span, T[N], ...)   -> or_opaque<std::vector<captured element>>
  tuple_like,   ///< std::tuple_size<T> defined (tuple, pair)            -> std::tuple<captured...>
  hana_struct,  ///< a Boost.Hana Struct                                 -> captured_struct, named fields
  aggregate,    ///< a non-polymorphic aggregate class of <= 32 fields, no base class -> captured_struct
};

template <class T>
inline constexpr bool is_optional = false;
template <class T>
inline constexpr bool is_optional<std::optional<T>> = true;

template <class T>
inline constexpr bool is_variant = false;
template <class... T>
inline constexpr bool is_variant<std::variant<T...>> = true;

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

/// std::reference_wrapper (and what declares the same): captured as what it refers to.
template <class T>
concept is_reference_wrapper = requires(const T& r) {
  typename T::type;
  { r.get() } -> std::same_as<typename T::type&>;
};

/// A tuple_size whose elements std::get reads (tuple, pair, array): what the tuple rule captures. (Clang 14 does not
/// see libstdc++ 12's std::ranges::subrange as a range, and its tuple_size has std::ranges::get only: opaque.)
template <class T>
concept std_tuple_like = requires {
  std::tuple_size<T>::value;
}
&&(std::tuple_size_v<T> == 0 || requires(const T& t) { std::get<0>(t); });

template <class T>
concept flattenable = requires(const T& t) {
  flatten_traits<T>::flatten(t);
};

/// A map whose keys are standard strings, each once (its insert says whether it inserted: std::map,
/// std::unordered_map): a dict. std::multimap and std::unordered_multimap repeat keys, which no dict may: they are
/// lists of (key, value) tuples, as other maps are.
template <class T>
concept string_keyed_map = requires {
  typename T::key_type;
  typename T::mapped_type;
}
&&is_standard_string<std::remove_cv_t<typename T::key_type>>&& requires(T& m, const typename T::value_type& v) {
  { m.insert(v) } -> std::same_as<std::pair<typename T::iterator, bool>>;
};

/// A container or view that names an element type that is an incomplete object type.
template <class T>
concept element_incomplete = requires {
  typename T::element_type;
}
&&!std::is_void_v<typename T::element_type> && !std::is_function_v<typename T::element_type> &&
    !complete_object<std::remove_cv_t<typename T::element_type>> && !requires {
  typename T::deleter_type;
}
&&!requires { typename T::weak_type; };

template <class T>
concept dereferenceable = requires(const T& p) {
  *p;
};

/// A raw pointer is recorded by its address and never read unless the user opts in (capture_pointee, `*name`,
/// capture_options::read_pointee): a pointer to char as a C string, a pointer to another complete object type as
/// its pointee. A pointer to void or to an incomplete type (an opaque handle) has only its address; a function
/// pointer is opaque without one (it points to code, not to data).
template <class T>
consteval capture_kind classify_raw_pointer() {
  using pointee = std::remove_cv_t<std::remove_pointer_t<T>>;
  if constexpr (std::is_function_v<pointee>) {
    return capture_kind::opaque;
  } else if constexpr (std::is_same_v<pointee, char>) {
    return capture_kind::c_string;
  } else if constexpr (complete_object<pointee>) {
    return capture_kind::raw_pointer;
  } else {
    return capture_kind::address;
  }
}

/// An owning smart pointer is captured as its pointee (it owns a live object of the program) when that is a complete
/// object type; unique_ptr<U[]>, shared_ptr<void> and the like are opaque.
template <class T>
consteval capture_kind classify_smart_pointer() {
  if constexpr (dereferenceable<T>) {  // not unique_ptr<U[]>, nor shared_ptr<void>
    return complete_object<std::remove_cvref_t<decltype(*std::declval<const T&>())>> ? capture_kind::pointer
                                                                                     : capture_kind::opaque;
  } else {
    return capture_kind::opaque;
  }
}

/// Ranges are captured only when iterating them cannot change them or run code with side effects: forward ranges
/// (multi-pass, iterable through a const reference) that are not views, and views that are contiguous and sized
/// (std::span, std::ranges::subrange of pointers, std::ranges::ref_view of a vector), which are read through their
/// data() and size() rather than iterated. A single-pass input range (a subrange of std::istreambuf_iterator,
/// std::filesystem::directory_iterator) would be consumed before the function sees it; another view (transform,
/// filter, take_while, join, iota, ...) may run the program's functions as it is iterated. An endless range
/// (std::views::iota(0)) would never end.
template <class T>
consteval bool capture_iterates() {
  if constexpr (std::is_same_v<std::ranges::sentinel_t<const T>, std::unreachable_sentinel_t>) {
    return false;
  } else if constexpr (!std::ranges::forward_range<const T>) {
    return false;
  } else {
    return !std::ranges::view<T> || (std::ranges::contiguous_range<const T> && std::ranges::sized_range<const T>);
  }
}

template <class T>
consteval capture_kind classify_range() {
  using element = std::remove_cvref_t<std::ranges::range_reference_t<const T>>;
  if constexpr (std::is_same_v<element, T>) {  // a range of itself would never end
    if constexpr (requires(const T& t) {
                    { t.string() } -> std::convertible_to<std::string>;
                  }) {
      return capture_kind::path;
    } else {
      return capture_kind::opaque;
    }
  } else if constexpr (std::is_same_v<element, std::byte>) {
    return capture_kind::bytes;
  } else if constexpr (std::is_class_v<T> && std::ranges::contiguous_range<const T> &&
                       std::is_same_v<element, char8_t>) {
    return capture_kind::u8_string;
  } else {
    return string_keyed_map<T> ? capture_kind::string_map : capture_kind::range;
  }
}

/// An aggregate is captured field by field when it has no base class (detected first: binding one would not
/// compile), is not polymorphic, its fields can be counted (at most max_aggregate_fields of them) and none is a
/// union (an anonymous one would not bind either).
template <class T>
consteval capture_kind classify_aggregate() {
  if constexpr (std::is_polymorphic_v<T> || has_base<T>) {
    return capture_kind::opaque;
  } else {
    constexpr std::size_t fields = count_fields<T>();  // capture_fields.hpp
    return fields <= max_aggregate_fields && (fields > 0 || std::is_empty_v<T>)&&!has_union_field<T, fields>()
               ? capture_kind::aggregate
               : capture_kind::opaque;
  }
}

/// The capture rule of T (cv-unqualified, not a reference): the first kind of capture_kind's list T passes.
/// Each test runs only when every earlier one failed, so the rules need no exclusions of one another; a type no
/// test accepts (void, functions, incomplete and abstract classes, unions, classes with private members, ...) is
/// opaque. Never fails to compile.
template <class T>
consteval capture_kind classify() {
  if constexpr (!complete_object<T>) {
    return capture_kind::opaque;
  } else if constexpr (tensor<T>) {
    return capture_kind::tensor;
  } else if constexpr (flattenable<T>) {
    return capture_kind::flattened;
  } else if constexpr (capture_as_opaque<T>) {
    return capture_kind::opaque;
  } else if constexpr (std::is_same_v<T, bool>) {
    return capture_kind::boolean;
  } else if constexpr (std::is_arithmetic_v<T>) {  // __int128 (when arithmetic) does not fit the value tree's int
    return std::is_floating_point_v<T> || sizeof(T) <= sizeof(std::int64_t) ? capture_kind::arithmetic
                                                                            : capture_kind::opaque;
  } else if constexpr (std::is_enum_v<T>) {
    return capture_kind::enumeration;
  } else if constexpr (std::is_same_v<T, std::nullptr_t> || std::is_same_v<T, std::monostate>) {
    return capture_kind::null;
  } else if constexpr (std::is_array_v<T> && std::is_same_v<std::remove_all_extents_t<T>, char> &&
                       std::rank_v<T> == 1) {
    return capture_kind::char_array;
  } else if constexpr (is_standard_string<T>) {
    return capture_kind::string;
  } else if constexpr (is_optional<T>) {
    return capture_kind::optional;
  } else if constexpr (is_variant<T>) {
    return capture_kind::variant;
  } else if constexpr (std::is_pointer_v<T>) {
    return classify_raw_pointer<T>();
  } else if constexpr (is_smart_pointer<T>) {
    return classify_smart_pointer<T>();
  } else if constexpr (is_reference_wrapper<T>) {
    return complete_object<std::remove_cv_t<typename T::type>> ? capture_kind::reference : capture_kind::opaque;
  } else if constexpr (element_incomplete<T>) {
    return capture_kind::opaque;  // a view over incomplete elements (std::span<handle>): asking if it is a range
                                  // would instantiate its end(), which needs the element's size
  } else if constexpr (std::ranges::range<const T>) {
    return capture_iterates<T>() ? classify_range<T>() : capture_kind::opaque;
  } else if constexpr (std_tuple_like<T>) {
    return capture_kind::tuple_like;
  } else if constexpr (boost::hana::Struct<T>::value) {
    return capture_kind::hana_struct;
  } else if constexpr (std::is_aggregate_v<T> && std::is_class_v<T>) {
    return classify_aggregate<T>();
  } else {
    return capture_kind::opaque;
  }
}

}  // namespace detail
HOOKSCOPE_DETAIL_END_NAMESPACE
