// src/shapes/values.hpp — private to the shape engine: how the engine sees a value tree. This file and values.cpp are
// the only places of the engine that look at value::kind: which values are scalars, Python's truthiness and scalar
// equality, and the one walk over a tree's containers and leaves that counting, flattening and paths all use. Also
// the one shape formatter ("1x7", "[]") shared by the engine's messages and the exporters.
#pragma once

#include "hookscope/shapes.hpp"

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

HOOKSCOPE_DETAIL_BEGIN_NAMESPACE
namespace detail::shapes {

using shape_t = std::vector<std::int64_t>;

//=== scalars ===//

/// int, float, bool or str.
bool is_scalar(const value& v) noexcept;
/// Python's truthiness, which decides whether a call "gives" an argument (rule B4): None, 0, "", empty containers
/// and empty custom classes (a cache without layers) are absent; a tensor always counts.
bool truthy(const value& v);
/// Python's == on scalars: 1 == 1.0 == True, strings only equal strings.
bool scalar_equal(const value& a, const value& b);
/// Constant sets are ordered by signature position when built, so equality is the dict equality of the reference.
bool constants_equal(const value_fields& a, const value_fields& b);
/// "{use_cache: false, mode: 'x'}" for the messages.
std::string constants_text(const value_fields& constants);

//=== the tree ===//

/// A tuple, a list, a dict or a struct: a node with children (tensors, scalars and none are leaves).
inline bool is_container(const value& v) noexcept {
  switch (v.type()) {
    case value::kind::tuple:
    case value::kind::list:
    case value::kind::dict:
    case value::kind::structure:
      return true;
    case value::kind::none:
    case value::kind::tensor:
    case value::kind::integer:
    case value::kind::floating:
    case value::kind::boolean:
    case value::kind::string:
      return false;
  }
  return false;
}

/// A tuple or a list (children without names); a dict or a struct has named children.
inline bool is_sequence(const value& v) noexcept {
  return v.type() == value::kind::tuple || v.type() == value::kind::list;
}

/// Visits a container's children in flattening order: f(index, name, child), name null for tuple and list items.
template <class F>
void for_each_child(const value& v, F&& f) {
  if (!is_container(v)) return;
  if (is_sequence(v)) {
    const std::vector<value>& items = v.items();
    for (std::size_t i = 0; i < items.size(); ++i) f(i, static_cast<const std::string*>(nullptr), items[i]);
    return;
  }
  const value_fields& fields = v.fields();
  for (std::size_t i = 0; i < fields.size(); ++i) f(i, &fields[i].first, fields[i].second);
}

/// A container of the same kind (and, for a dict or a struct, the same names and class name) as `like`, with new
/// children in its children's order.
value with_children(const value& like, std::vector<value> children);

/// The one walk over a tree's leaves (tensors, scalars, nones), in flattening order: f(leaf). When `path` is given,
/// it holds the leaf's path below `v` during f (tuple/list indices as "0", "1", dict/struct keys), after what the
/// caller had put in it.
template <class F>
void for_each_leaf(const value& v, F&& f, std::vector<std::string>* path = nullptr) {
  if (!is_container(v)) {
    f(v);
    return;
  }
  for_each_child(v, [&](std::size_t i, const std::string* name, const value& child) {
    if (path) path->push_back(name ? *name : std::to_string(i));
    for_each_leaf(child, f, path);
    if (path) path->pop_back();
  });
}

/// Leaves of the flattened tree (what for_each_leaf visits).
inline std::size_t leaf_count(const value& v) {
  std::size_t n = 0;
  for_each_leaf(v, [&](const value&) { ++n; });
  return n;
}

//=== text ===//

/// "1x7" (trtexec's spelling, also used in the messages and the report); "[]" for a rank-0 shape.
std::string shape_text(const std::vector<std::int64_t>& shape);
/// "past_key_values.0.key".
std::string join_path(const std::vector<std::string>& path);

}  // namespace detail::shapes
HOOKSCOPE_DETAIL_END_NAMESPACE
