// hookscope/detail/capture_rules.hpp — the captured types and the capture function of each capture_kind.
//
// `rule<T>` is chosen by classify<T>() alone (one partial specialisation per kind, no constraints to weigh). Each
// rule gives `ok` (capturable all the way down), `type` (the captured type) and, when ok, `capture(t, options)`.
// An uncapturable part stands as `uncapturable<U>` inside the captured type of its parents, so that asking
// whether a type is capturable never fails to compile; capture itself checks `ok` first (checked_rule), and
// names the first uncapturable part in its message.
#pragma once

#include "hookscope/config.hpp"
#include "hookscope/detail/capture_classify.hpp"
#include "hookscope/detail/capture_fields.hpp"
#include "hookscope/detail/range_concepts.hpp"
#include "hookscope/detail/type_name.hpp"
#include "hookscope/detail/tensor_data.hpp"
#include "hookscope/tensor.hpp"

#include <boost/hana/accessors.hpp>
#include <boost/hana/first.hpp>
#include <boost/hana/second.hpp>
#include <boost/hana/string.hpp>
#include <boost/hana/unpack.hpp>
#include <boost/version.hpp>

// Boost.PFR reads aggregates' field names from Boost 1.84 on; before, fields are named by position.
#if BOOST_VERSION >= 108400
#include <boost/pfr/config.hpp>
#if BOOST_PFR_CORE_NAME_ENABLED
#include <boost/pfr/core_name.hpp>
#define HOOKSCOPE_DETAIL_PFR_NAMES 1
#endif
#endif
#ifndef HOOKSCOPE_DETAIL_PFR_NAMES
#define HOOKSCOPE_DETAIL_PFR_NAMES 0
#endif

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <tuple>
#include <type_traits>
#include <utility>
#include <variant>
#include <vector>

HOOKSCOPE_DETAIL_BEGIN_NAMESPACE

/// How much to capture. Tensor contents are opt-in (for replay): records hold shapes and dtypes by default.
struct capture_options {
  bool tensor_data = false;  ///< also copy tensor contents, for tensor types whose tensor_traits has data()
};

/// A captured dict: (key, value) pairs in the order the map iterated them.
template <class C>
struct captured_dict {
  std::vector<std::pair<std::string, C>> entries;
  friend bool operator==(const captured_dict&, const captured_dict&) = default;
};

/// A captured struct: its class name, field names and the captured fields.
template <class Fields>
struct captured_struct {
  std::string_view name;
  std::span<const std::string_view> field_names;
  Fields fields;  // a std::tuple of captured fields
  friend bool operator==(const captured_struct& a, const captured_struct& b) { return a.fields == b.fields; }
};

/// A captured flatten_traits class: its name and its named children.
template <class Children>
struct captured_class {
  std::string_view name;
  Children children;  // a captured_dict, or a std::vector of (name, captured child) tuples
  friend bool operator==(const captured_class&, const captured_class&) = default;
};

namespace detail {

template <class T, capture_kind Kind = classify<T>()>
struct rule;

template <class T>
using rule_of = rule<std::remove_cvref_t<T>>;

/// Stands for the captured form of an uncapturable U inside the captured type of its parents; never defined.
template <class U>
struct uncapturable;

template <class T>
struct rule<T, capture_kind::unsupported> {
  static constexpr bool ok = false;
  using type = uncapturable<T>;
};

// The first uncapturable part of a captured type (void when there is none: then the type itself is at fault).
template <class C>
struct first_uncapturable {
  using type = void;
};
template <class U>
struct first_uncapturable<uncapturable<U>> {
  using type = U;
};
template <class C>
struct first_uncapturable<std::vector<C>> : first_uncapturable<C> {};
template <class C>
struct first_uncapturable<std::optional<C>> : first_uncapturable<C> {};
template <class C>
struct first_uncapturable<captured_dict<C>> : first_uncapturable<C> {};
template <class F>
struct first_uncapturable<captured_struct<F>> : first_uncapturable<F> {};
template <class C>
struct first_uncapturable<captured_class<C>> : first_uncapturable<C> {};
template <class C, class... Rest>
struct first_uncapturable<std::tuple<C, Rest...>> {
  using type =
      std::conditional_t<std::is_void_v<typename first_uncapturable<C>::type>,
                         typename first_uncapturable<std::tuple<Rest...>>::type, typename first_uncapturable<C>::type>;
};

template <class Part>
inline constexpr bool can_capture_part = false;

template <class Part>
struct cannot_capture {
  static_assert(can_capture_part<Part>,
                "hookscope: this parameter type cannot be captured: make it a tensor (specialise "
                "hookscope::tensor_traits<T>), an aggregate (of at most 32 fields) or a Hana struct, or name its "
                "children with a hookscope::flatten_traits<T> specialisation whose flatten(t) returns (name, child) "
                "pairs. The part at fault is the Part of cannot_capture<Part> below, in the T of checked_rule<T>.");
};

// The rule of a type about to be captured: an uncapturable one is reported, naming its part at fault.
template <class T, bool = rule<T>::ok>
struct checked_rule : rule<T> {};
template <class T>
struct checked_rule<T, false>
    : rule<T>,
      cannot_capture<std::conditional_t<std::is_void_v<typename first_uncapturable<typename rule<T>::type>::type>, T,
                                        typename first_uncapturable<typename rule<T>::type>::type>> {};

template <class T>
using captured_of = typename checked_rule<std::remove_cvref_t<T>>::type;

template <class T>
struct rule<T, capture_kind::tensor> {
  static constexpr bool ok = true;
  using type = tensor_spec;
  static type capture(const T& t, capture_options options) {
    type spec = spec_of(t);
    if (options.tensor_data) copy_tensor_data(t, spec);
    return spec;
  }
};

// flatten_traits children must be named: a map from strings, or a range of (string, child) pairs.
template <class C>
inline constexpr bool named_children = false;
template <class C>
inline constexpr bool named_children<captured_dict<C>> = true;
template <class C>
inline constexpr bool named_children<std::vector<std::tuple<std::string, C>>> = true;

template <class T>
struct rule<T, capture_kind::flattened> {
  using children = rule_of<decltype(flatten_traits<T>::flatten(std::declval<const T&>()))>;
  static constexpr bool ok = children::ok && named_children<typename children::type>;
  // Capturable children without names: this class is the part at fault.
  using type = std::conditional_t<children::ok && !ok, uncapturable<T>, captured_class<typename children::type>>;
  static type capture(const T& t, capture_options options) {
    std::string_view name = type_name<T>();
    if constexpr (requires { flatten_traits<T>::name; }) name = flatten_traits<T>::name;
    return {name, children::capture(flatten_traits<T>::flatten(t), options)};
  }
};

template <class T>
struct rule<T, capture_kind::boolean> {
  static constexpr bool ok = true;
  using type = bool;
  static type capture(bool b, capture_options) { return b; }
};

template <class T>
struct rule<T, capture_kind::arithmetic> {
  static constexpr bool ok = true;
  using type = std::conditional_t<std::is_integral_v<T>, std::int64_t, double>;
  static type capture(T v, capture_options) { return static_cast<type>(v); }
};

template <class T>
struct rule<T, capture_kind::null> {
  static constexpr bool ok = true;
  using type = std::monostate;
  static type capture(std::nullptr_t, capture_options) { return {}; }
};

template <class T>
struct rule<T, capture_kind::string> {
  static constexpr bool ok = true;
  using type = std::string;
  static type capture(const T& s, capture_options) { return std::string(std::string_view(s)); }
};

template <class T>
struct rule<T, capture_kind::optional> {
  using element = rule_of<typename T::value_type>;
  static constexpr bool ok = element::ok;
  using type = std::optional<typename element::type>;
  static type capture(const T& o, capture_options options) {
    if (!o) return std::nullopt;
    return element::capture(*o, options);
  }
};

template <class T>
struct rule<T, capture_kind::pointer> {
  using pointee = rule_of<decltype(*std::declval<const T&>())>;
  static constexpr bool ok = pointee::ok;
  using type = std::optional<typename pointee::type>;
  static type capture(const T& p, capture_options options) {
    if (p == nullptr) return std::nullopt;
    return pointee::capture(*p, options);
  }
};

template <class T>
struct rule<T, capture_kind::string_map> {
  using mapped = rule_of<typename T::mapped_type>;
  static constexpr bool ok = mapped::ok;
  using type = captured_dict<typename mapped::type>;
  static type capture(const T& m, capture_options options) {
    type out;
    if constexpr (std::ranges::sized_range<const T>) out.entries.reserve(std::ranges::size(m));
    for (const auto& [key, v] : m)
      out.entries.emplace_back(std::string(std::string_view(key)), mapped::capture(v, options));
    return out;
  }
};

template <class T>
struct rule<T, capture_kind::range> {
  using element = rule_of<std::ranges::range_reference_t<const T>>;
  static constexpr bool ok = element::ok;
  using type = std::vector<typename element::type>;
  static type capture(const T& r, capture_options options) {
    type out;
    if constexpr (std::ranges::sized_range<const T>) out.reserve(std::ranges::size(r));
    for (const auto& e : r) out.push_back(element::capture(e, options));
    return out;
  }
};

template <class T, class = std::make_index_sequence<std::tuple_size_v<T>>>
struct tuple_rule;
template <class T, std::size_t... I>
struct tuple_rule<T, std::index_sequence<I...>> {
  static constexpr bool ok = (rule_of<std::tuple_element_t<I, T>>::ok && ...);
  using type = std::tuple<typename rule_of<std::tuple_element_t<I, T>>::type...>;
  static type capture(const T& t, [[maybe_unused]] capture_options options) {
    return type{rule_of<std::tuple_element_t<I, T>>::capture(std::get<I>(t), options)...};
  }
};

template <class T>
struct rule<T, capture_kind::tuple_like> : tuple_rule<T> {};

// Structs (Hana structs and aggregates), captured field by field. `Access` gives their field types as a
// type_list, their field names, and calls Rule::capture_fields(options, fields...) with all the fields at once.
template <class T, class Access, class Fields = decltype(Access::types())>
struct struct_rule;
template <class T, class Access, class... F>
struct struct_rule<T, Access, type_list<F...>> {
  static constexpr bool ok = (rule<F>::ok && ...);
  using fields = std::tuple<typename rule<F>::type...>;
  using type = captured_struct<fields>;
  static fields capture_fields([[maybe_unused]] capture_options options, const F&... f) {
    return fields{rule<F>::capture(f, options)...};
  }
  static type capture(const T& t, capture_options options) {
    return {type_name<T>(), Access::names(), Access::template apply<struct_rule>(t, options)};
  }
};

template <class T>
struct hana_access {
  static auto types() {
    return boost::hana::unpack(boost::hana::accessors<T>(), [](auto... pairs) {
      return type_list<std::remove_cvref_t<decltype(boost::hana::second(pairs)(std::declval<const T&>()))>...>{};
    });
  }
  template <class Rule>
  static auto apply(const T& t, capture_options options) {
    return boost::hana::unpack(boost::hana::accessors<T>(), [&](auto... pairs) {
      return Rule::capture_fields(options, boost::hana::second(pairs)(t)...);
    });
  }
  static constexpr auto field_names = boost::hana::unpack(boost::hana::accessors<T>(), [](auto... pairs) {
    return std::array<std::string_view, sizeof...(pairs)>{
        std::string_view(boost::hana::to<const char*>(boost::hana::first(pairs)))...};
  });
  static constexpr std::span<const std::string_view> names() noexcept { return field_names; }
};

template <class T>
struct rule<T, capture_kind::hana_struct> : struct_rule<T, hana_access<T>> {};

// Field names "0", "1", ... for aggregates (Boost.PFR before 1.84 has no names).
inline constexpr std::string_view positional_field_names[max_aggregate_fields] = {
    "0",  "1",  "2",  "3",  "4",  "5",  "6",  "7",  "8",  "9",  "10", "11", "12", "13", "14", "15",
    "16", "17", "18", "19", "20", "21", "22", "23", "24", "25", "26", "27", "28", "29", "30", "31"};

// Aggregates: fields counted and bound by capture_fields.hpp.
template <class T>
struct aggregate_access {
  static constexpr std::size_t count = count_fields<T>();
  static auto types() -> decltype(fields_access<count>::types(std::declval<const T&>()));
  template <class Rule>
  static auto apply(const T& t, capture_options options) {
    return fields_access<count>::template apply<Rule>(t, options);
  }
  // Their real field names where Boost.PFR can read them (Boost >= 1.84 with BOOST_PFR_CORE_NAME_ENABLED),
  // positional names otherwise.
#if HOOKSCOPE_DETAIL_PFR_NAMES
  static constexpr auto field_names = boost::pfr::names_as_array<T>();
  static constexpr std::span<const std::string_view> names() noexcept { return field_names; }
#else
  static constexpr std::span<const std::string_view> names() noexcept { return {positional_field_names, count}; }
#endif
};

template <class T>
struct rule<T, capture_kind::aggregate> : struct_rule<T, aggregate_access<T>> {};

}  // namespace detail
HOOKSCOPE_DETAIL_END_NAMESPACE
