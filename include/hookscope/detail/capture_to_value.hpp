// hookscope/detail/capture_to_value.hpp — the run-time value tree of a captured value, one overload per captured
// type of capture_rules.hpp (rvalues are moved in: a fresh capture converts without copies); and one whole capture of
// a value, with its own budget, which capture() and the erased call's tables both run; and the capturable<T> concept,
// which the tables ask too.
#pragma once

#include "hookscope/detail/config.hpp"
#include "hookscope/detail/capture_pointer_rules.hpp"
#include "hookscope/detail/capture_rules.hpp"
#include "hookscope/detail/capture_struct_rules.hpp"
#include "hookscope/detail/type_name.hpp"
#include "hookscope/detail/value_builders.hpp"
#include "hookscope/detail/value.hpp"

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
inline value to_value_of(const captured_opaque& o) {
  return value::opaque(opaque_leaf{std::string(o.type_name), false, o.address, o.unreadable, o.length, o.too_large});
}
inline value to_value_of(const captured_bytes& b) { return value::bytes(b.bytes); }

template <class C>
value to_value_of(const std::optional<C>& o);
template <class C>
value to_value_of(std::optional<C>&& o);
template <class C>
value to_value_of(const or_opaque<C>& v);
template <class C>
value to_value_of(or_opaque<C>&& v);
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

// By index: C may be captured_opaque too (a pointer to an opaque class, read).
template <class C>
value to_value_of(const or_opaque<C>& v) {
  return v.index() == 0 ? to_value_of(*std::get_if<0>(&v)) : to_value_of(*std::get_if<1>(&v));
}
template <class C>
value to_value_of(or_opaque<C>&& v) {
  return v.index() == 0 ? to_value_of(std::move(*std::get_if<0>(&v))) : to_value_of(*std::get_if<1>(&v));
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

// A field's name: a dict's key, or a flatten_traits child's name (a captured string: its type name in the unlikely
// case that it was over the capture's byte bound).
inline std::string_view field_name(const std::string& name) noexcept { return name; }
inline std::string_view field_name(const or_opaque<std::string>& name) noexcept {
  return name.index() == 0 ? std::string_view(*std::get_if<0>(&name)) : std::get_if<1>(&name)->type_name;
}

// (name, captured) pairs -> fields: the entries of a dict, the children of a flatten_traits class.
template <class Pairs>
void add_fields(fields_builder& fields, const Pairs& pairs) {
  for (const auto& [key, c] : pairs) fields.add(field_name(key), to_value_of(c));
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
// Children over the capture's bounds: the class's opaque leaf (with its type name, the children's count).
template <class C>
value to_value_of(const captured_class<C>& c) {
  if (c.children.index() == 1) return to_value_of(*std::get_if<1>(&c.children));
  const auto& children = *std::get_if<0>(&c.children);
  const auto& pairs = [&]() -> const auto& {
    if constexpr (requires { children.entries; }) {
      return children.entries;  // a captured_dict
    } else {
      return children;  // (name, child) tuples
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

/// One capture of `v`, with its own budget (capture_options' bounds hold for the whole value).
template <class T>
captured_of<T> capture_whole(const T& v, const capture_options& options) {
  capture_budget budget{options.max_elements, options.max_bytes};
  return rule_of<T>::capture(v, capture_state{options, 0, true, &budget});
}
}  // namespace detail

/// True when hookscope captures a T structurally all the way down, with no opaque leaf: `std::vector<U>` is when U
/// is. Every type can be captured; this tells which captures hold values. Asking never fails to compile, whatever
/// T is (incomplete, abstract, void, a function, a reference, an array).
template <class T>
concept capturable = detail::rule_of<T>::ok;
HOOKSCOPE_DETAIL_END_NAMESPACE
