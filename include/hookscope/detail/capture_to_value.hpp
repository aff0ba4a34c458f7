// hookscope/detail/capture_to_value.hpp — the run-time value tree of a captured value, one overload per captured
// type of capture_rules.hpp (rvalues are moved in: a fresh capture converts without copies).
#pragma once

#include "hookscope/config.hpp"
#include "hookscope/detail/capture_rules.hpp"
#include "hookscope/detail/capture_struct_rules.hpp"
#include "hookscope/detail/type_name.hpp"
#include "hookscope/detail/value_builders.hpp"
#include "hookscope/value.hpp"

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <tuple>
#include <utility>
#include <variant>
#include <vector>

HOOKSCOPE_DETAIL_BEGIN_NAMESPACE
namespace detail {

inline value to_value_of(const tensor_spec& t) { return value(t); }
inline value to_value_of(tensor_spec&& t) { return value(std::move(t)); }
inline value to_value_of(const std::string& s) { return value(s); }
inline value to_value_of(std::string&& s) { return value(std::move(s)); }
inline value to_value_of(bool b) { return value(b); }
inline value to_value_of(std::int64_t i) { return value(i); }
inline value to_value_of(double f) { return value(f); }
inline value to_value_of(std::monostate) { return {}; }
inline value to_value_of(const value& v) { return v; }  // a recursive part, captured at run time
inline value to_value_of(value&& v) { return std::move(v); }
inline value to_value_of(const captured_opaque& o) { return value::opaque(std::string(o.type_name)); }
inline value to_value_of(const captured_bytes& b) { return value::bytes(b.bytes); }

template <class C>
value to_value_of(const std::optional<C>& o);
template <class C>
value to_value_of(std::optional<C>&& o);
template <class C>
value to_value_of(const std::vector<C>& v);
template <class C>
value to_value_of(std::vector<C>&& v);
template <class... C>
value to_value_of(const std::tuple<C...>& t);
template <class C>
value to_value_of(const captured_dict<C>& d);
template <class F>
value to_value_of(const captured_struct<F>& s);
template <class C>
value to_value_of(const captured_class<C>& c);
template <class A>
value to_value_of(const captured_variant<A>& v);

template <class C>
value to_value_of(const std::optional<C>& o) {
  return o ? to_value_of(*o) : value();
}
template <class C>
value to_value_of(std::optional<C>&& o) {
  return o ? to_value_of(std::move(*o)) : value();
}

// Containers are built through items_builder and fields_builder, compiled in the library: a translation unit
// capturing a struct, a tuple, a range or a map compiles the capture of its elements only, no container code.
template <class C>
value to_value_of(const std::vector<C>& v) {
  items_builder items(v.size());
  for (const C& c : v) items.add(to_value_of(c));
  return std::move(items).list();
}
template <class C>
value to_value_of(std::vector<C>&& v) {
  items_builder items(v.size());
  for (auto&& c : v) items.add(to_value_of(static_cast<C&&>(c)));  // C&& converts std::vector<bool>'s proxy
  return std::move(items).list();
}
template <class... C>
value to_value_of(const std::tuple<C...>& t) {
  items_builder items(sizeof...(C));
  std::apply([&](const C&... c) { (items.add(to_value_of(c)), ...); }, t);
  return std::move(items).tuple();
}

// (name, captured) pairs -> fields: the entries of a dict, the children of a flatten_traits class.
template <class Pairs>
void add_fields(fields_builder& fields, const Pairs& pairs) {
  for (const auto& [key, c] : pairs) fields.add(std::string_view(key), to_value_of(c));
}

template <class C>
value to_value_of(const captured_dict<C>& d) {
  fields_builder fields(d.entries.size());
  add_fields(fields, d.entries);
  return std::move(fields).dict();
}
template <class F>
value to_value_of(const captured_struct<F>& s) {
  fields_builder fields(std::tuple_size_v<F>);
  std::size_t i = 0;
  std::apply([&](const auto&... c) { (fields.add(s.field_names[i++], to_value_of(c)), ...); }, s.fields);
  return std::move(fields).structure(s.name);
}
template <class C>
value to_value_of(const captured_class<C>& c) {
  const auto& pairs = [&]() -> const auto& {
    if constexpr (requires { c.children.entries; }) {
      return c.children.entries;  // a captured_dict
    } else {
      return c.children;  // (name, child) tuples
    }
  }
  ();
  fields_builder fields(pairs.size());
  add_fields(fields, pairs);
  return std::move(fields).structure(c.name);
}

// A variant valueless by exception has no alternative to show: none.
template <class A>
value to_value_of(const captured_variant<A>& v) {
  if (v.index == std::variant_npos) return {};
  return std::visit([&](const auto& alternative) { return value::variant(v.index, to_value_of(alternative)); },
                    v.alternative);
}

// Above the depth bound, a recursive part is captured as its type's rule would at the top (a fresh stack, so that
// the instantiations end); at the bound, as an opaque leaf marked depth_limited.
template <class T>
value recursive_rule<T>::capture(const T& t, capture_state state) {
  if (state.depth >= max_recursion_depth) return value::opaque(std::string(type_name<T>()), true);
  return to_value_of(rule_of<T>::capture(t, state));
}

}  // namespace detail
HOOKSCOPE_DETAIL_END_NAMESPACE
