// hookscope/detail/capture_to_value.hpp — the run-time value tree of a captured value, one overload per captured
// type of capture_rules.hpp (rvalues are moved in: a fresh capture converts without copies).
#pragma once

#include "hookscope/config.hpp"
#include "hookscope/detail/capture_rules.hpp"
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

template <class C>
value to_value_of(const std::optional<C>& o) {
  return o ? to_value_of(*o) : value();
}
template <class C>
value to_value_of(std::optional<C>&& o) {
  return o ? to_value_of(std::move(*o)) : value();
}
template <class C>
value to_value_of(const std::vector<C>& v) {
  std::vector<value> items;
  items.reserve(v.size());
  for (const C& c : v) items.push_back(to_value_of(c));
  return value::list(std::move(items));
}
template <class C>
value to_value_of(std::vector<C>&& v) {
  std::vector<value> items;
  items.reserve(v.size());
  for (C& c : v) items.push_back(to_value_of(std::move(c)));
  return value::list(std::move(items));
}
template <class... C>
value to_value_of(const std::tuple<C...>& t) {
  return std::apply([](const C&... c) { return value::tuple({to_value_of(c)...}); }, t);
}

// (name, captured) pairs -> fields: the entries of a dict, the children of a flatten_traits class.
template <class Pairs>
value_fields fields_of(const Pairs& pairs) {
  value_fields fields;
  fields.reserve(pairs.size());
  for (const auto& [key, c] : pairs) fields.emplace_back(key, to_value_of(c));
  return fields;
}

template <class C>
value to_value_of(const captured_dict<C>& d) {
  return value::dict(fields_of(d.entries));
}
template <class F>
value to_value_of(const captured_struct<F>& s) {
  value_fields fields;
  fields.reserve(std::tuple_size_v<F>);
  std::size_t i = 0;
  std::apply([&](const auto&... c) { (fields.emplace_back(std::string(s.field_names[i++]), to_value_of(c)), ...); },
             s.fields);
  return value::structure(std::string(s.name), std::move(fields));
}
template <class C>
value to_value_of(const captured_class<C>& c) {
  if constexpr (requires { c.children.entries; }) {
    return value::structure(std::string(c.name), fields_of(c.children.entries));  // a captured_dict
  } else {
    return value::structure(std::string(c.name), fields_of(c.children));  // (name, child) tuples
  }
}

}  // namespace detail
HOOKSCOPE_DETAIL_END_NAMESPACE
