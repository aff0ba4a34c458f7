// hookscope/value.hpp — the run-time value tree: what a captured call holds, what records store, what the shape
// engine consumes. Nodes: none, tensor, scalars (int, float, bool, str, bytes), opaque leaves (a type captured without
// a value), tuple, list, dict, struct, variant (one alternative of several).
//
// It converts to and from the JSON value encoding of the record format (docs/record_format.md):
//   {"shape":[1,7],"dtype":"int64"}  null  {"int":3}  {"float":0.5}  {"bool":true}  {"str":"x"}  {"bytes":"AAE="}
//   {"opaque":"std::mutex"}  {"opaque":"const float*","address":"0x7f3a2c001000"}  {"tuple":[...]}  {"list":[...]}  {"dict":[["key",V],...]}
//   {"struct":"DynamicCache","fields":[["key_0",V],...]}  {"variant":1,"value":V}
// A string that is not UTF-8 (a str, a dict key) is written {"base64":"..."} in place of the JSON string.
#pragma once

#include "hookscope/config.hpp"
#include "hookscope/detail/value.hpp"
#include "hookscope/exceptions.hpp"
#include "hookscope/tensor.hpp"

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

HOOKSCOPE_DETAIL_BEGIN_NAMESPACE

//=== walking the tree ===//

/// A tuple, a list, a dict, a struct or a variant: a node with children (tensors, scalars, bytes, opaque leaves and
/// none are leaves).
inline bool is_container(const value& v) noexcept {
  switch (v.type()) {
    case value::kind::tuple:
    case value::kind::list:
    case value::kind::dict:
    case value::kind::structure:
    case value::kind::variant: return true;
    case value::kind::none:
    case value::kind::tensor:
    case value::kind::integer:
    case value::kind::floating:
    case value::kind::boolean:
    case value::kind::string:
    case value::kind::bytes:
    case value::kind::opaque: return false;
  }
  return false;
}

/// A tuple or a list (children without names); a dict or a struct has named children.
inline bool is_sequence(const value& v) noexcept {
  return v.type() == value::kind::tuple || v.type() == value::kind::list;
}

/// Visits a container's children in flattening order: f(index, name, child), name null for tuple and list items and
/// for a variant's alternative (whose index is the alternative's: calls holding different alternatives differ in
/// their leaves' paths).
template <class F>
void for_each_child(const value& v, F&& f) {
  if (!is_container(v)) return;
  if (v.type() == value::kind::variant) {
    f(v.variant_index(), static_cast<const std::string*>(nullptr), v.alternative());
    return;
  }
  if (is_sequence(v)) {
    const std::vector<value>& items = v.items();
    for (std::size_t i = 0; i < items.size(); ++i) f(i, static_cast<const std::string*>(nullptr), items[i]);
    return;
  }
  const value_fields& fields = v.fields();
  for (std::size_t i = 0; i < fields.size(); ++i) f(i, &fields[i].first, fields[i].second);
}

/// The one walk over a tree's leaves (tensors, scalars, bytes, opaque leaves, nones), in flattening order: f(leaf). When `path` is given,
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

/// The record format's name of a kind: "none", "tensor", "int", "float", "bool", "str", "tuple", ..., "bytes",
/// "opaque", "variant".
std::string_view to_string(value::kind k) noexcept;

/// The value in the record format's JSON encoding, compact, keys in a fixed order.
std::string to_json(const value& v);

/// Reads one value in the JSON encoding; a format_error names the path (e.g. `$.tuple[1].shape[0]`) and the fault.
value value_from_json(std::string_view text);

HOOKSCOPE_DETAIL_END_NAMESPACE
