// hookscope/detail/capture_struct_rules.hpp — the rules of the kinds that name their parts: flatten_traits classes,
// Hana structs and aggregates. Their parts are captured with the struct pushed onto the stack of struct types above
// (capture_rules.hpp), so that a recursive type (a tree node holding a vector of nodes, a list item pointing to
// the next) ends at its second occurrence in its captured type and is captured at run time below it.
#pragma once

#include "hookscope/detail/config.hpp"
#include "hookscope/detail/capture_classify.hpp"
#include "hookscope/detail/capture_fields.hpp"
#include "hookscope/detail/capture_rules.hpp"
#include "hookscope/detail/type_name.hpp"

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
#include <span>
#include <string>
#include <string_view>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

HOOKSCOPE_DETAIL_BEGIN_NAMESPACE

/// A captured struct: its class name, field names and the captured fields.
template <class Fields>
struct captured_struct {
  std::string_view name;
  std::span<const std::string_view> field_names;
  Fields fields;  // a std::tuple of captured fields
  friend bool operator==(const captured_struct& a, const captured_struct& b) { return a.fields == b.fields; }
};

namespace detail {

template <class Stack, class T>
struct push;
template <class... S, class T>
struct push<type_list<S...>, T> {
  using type = type_list<S..., T>;
};

// flatten_traits children must be named: a map from strings, or a range of (string, child) pairs (captured as
// ranges are: or_opaque, over the capture's bounds).
template <class C>
inline constexpr bool named_children = false;
template <class C>
inline constexpr bool named_children<or_opaque<captured_dict<C>>> = true;
template <class C>
inline constexpr bool named_children<or_opaque<std::vector<std::tuple<or_opaque<std::string>, C>>>> = true;

template <class T, class Stack>
struct rule<T, Stack, capture_kind::flattened> {
  using children =
      rule_in<decltype(flatten_traits<T>::flatten(std::declval<const T&>())), typename push<Stack, T>::type>;
  static constexpr bool named = named_children<typename children::type>;
  static constexpr bool ok = children::ok && named;
  using type = captured_class<typename children::type>;
  static type capture(const T& t, capture_state state) {
    static_assert(named,
                  "hookscope: flatten_traits<T>::flatten(t) must return named children: a range of "
                  "std::pair<std::string, X> or a map from strings (T is the first argument of rule<T, ...> below)");
    std::string_view name = type_name<T>();
    if constexpr (requires { flatten_traits<T>::name; }) name = flatten_traits<T>::name;
    // The children's range counts their levels (one more than the class's node for (name, child) pairs: the bound
    // is then reached a level early, never late). Over the capture's bounds, the class is left out by its name.
    type out{name, children::capture(flatten_traits<T>::flatten(t), state.part())};
    if (out.children.index() == 1) std::get_if<1>(&out.children)->type_name = type_name<T>();
    return out;
  }
};

// Structs (Hana structs and aggregates), captured field by field. `Access` gives their field types as a
// type_list, their field names, and calls Rule::capture_fields(state, fields...) with all the fields at once.
template <class T, class Stack, class Access, class Fields = decltype(Access::types())>
struct struct_rule;
template <class T, class Stack, class Access, class... F>
struct struct_rule<T, Stack, Access, type_list<F...>> {
  using below = typename push<Stack, T>::type;
  static constexpr bool ok = (rule_in<F, below>::ok && ...);
  using fields = std::tuple<typename rule_in<F, below>::type...>;
  using type = captured_struct<fields>;
  static fields capture_fields([[maybe_unused]] capture_state state, const F&... f) {
    return fields{rule_in<F, below>::capture(f, state)...};
  }
  static type capture(const T& t, capture_state state) {
    return {type_name<T>(), Access::names(), Access::template apply<struct_rule>(t, state.below())};
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
  static auto apply(const T& t, capture_state state) {
    return boost::hana::unpack(boost::hana::accessors<T>(), [&](auto... pairs) {
      return Rule::capture_fields(state, boost::hana::second(pairs)(t)...);
    });
  }
  static constexpr auto field_names = boost::hana::unpack(boost::hana::accessors<T>(), [](auto... pairs) {
    return std::array<std::string_view, sizeof...(pairs)>{
        std::string_view(boost::hana::to<const char*>(boost::hana::first(pairs)))...};
  });
  static constexpr std::span<const std::string_view> names() noexcept { return field_names; }
};

template <class T, class Stack>
struct rule<T, Stack, capture_kind::hana_struct> : struct_rule<T, Stack, hana_access<T>> {};

// Field names "0", "1", ... for aggregates (Boost.PFR before 1.84 has no names).
inline constexpr std::string_view positional_field_names[max_aggregate_fields] = {
    "0",  "1",  "2",  "3",  "4",  "5",  "6",  "7",  "8",  "9",  "10", "11", "12", "13", "14", "15",
    "16", "17", "18", "19", "20", "21", "22", "23", "24", "25", "26", "27", "28", "29", "30", "31"};

// Aggregates: fields counted and bound by capture_fields.hpp (classify_aggregate made sure both can be done).
template <class T>
struct aggregate_access {
  static constexpr std::size_t count = count_fields<T>();
  static auto types() -> decltype(fields_access<count>::types(std::declval<const T&>()));
  template <class Rule>
  static auto apply(const T& t, capture_state state) {
    return fields_access<count>::template apply<Rule>(t, state);
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

template <class T, class Stack>
struct rule<T, Stack, capture_kind::aggregate> : struct_rule<T, Stack, aggregate_access<T>> {};

}  // namespace detail
HOOKSCOPE_DETAIL_END_NAMESPACE
