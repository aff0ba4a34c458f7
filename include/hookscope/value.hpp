// hookscope/value.hpp — the run-time value tree: what a captured call holds, what records store, what the shape
// engine consumes. Nodes: none, tensor, scalars (int, float, bool, str, bytes), opaque leaves (a type captured without
// a value), tuple, list, dict, struct, variant (one alternative of several). `visit` is the one walk over a node's
// kinds, each handed to its handler as a `value_node` type; a visitor that misses a kind does not compile.
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

/// Handlers as one visitor: `visit(v, value_handlers{[](value_node::none) {...}, [](value_node::tensor t) {...}, ...})`.
template <class... F>
struct value_handlers : F... {
  using F::operator()...;
};
template <class... F>
value_handlers(F...) -> value_handlers<F...>;

namespace detail {
template <class F, class Node>
inline constexpr bool handles_node = std::is_invocable_v<F&, Node>;
}  // namespace detail

/// The one walk over the kinds of a node: calls `f` with the node as its `value_node` type and returns what it
/// returns (every handler returns the same type). Every consumer of the tree dispatches through it, so that a new kind
/// is a compile error (below) wherever it is not handled, rather than a case forgotten at run time; the kind itself is
/// named first by -Wswitch here. A generic handler (`[](const auto&)`) takes the kinds the others do not name: only
/// for a rule that holds of any kind ("anything else is no number"), never to skip kinds.
template <class F>
decltype(auto) visit(const value& v, F&& f) {
  using detail::handles_node;
  static_assert(handles_node<F, value_node::none>, "hookscope: visit(value, f): f handles no value_node::none");
  static_assert(handles_node<F, value_node::tensor>, "hookscope: visit(value, f): f handles no value_node::tensor");
  static_assert(handles_node<F, value_node::integer>, "hookscope: visit(value, f): f handles no value_node::integer");
  static_assert(handles_node<F, value_node::floating>, "hookscope: visit(value, f): f handles no value_node::floating");
  static_assert(handles_node<F, value_node::boolean>, "hookscope: visit(value, f): f handles no value_node::boolean");
  static_assert(handles_node<F, value_node::string>, "hookscope: visit(value, f): f handles no value_node::string");
  static_assert(handles_node<F, value_node::tuple>, "hookscope: visit(value, f): f handles no value_node::tuple");
  static_assert(handles_node<F, value_node::list>, "hookscope: visit(value, f): f handles no value_node::list");
  static_assert(handles_node<F, value_node::dict>, "hookscope: visit(value, f): f handles no value_node::dict");
  static_assert(handles_node<F, value_node::structure>,
                "hookscope: visit(value, f): f handles no value_node::structure");
  static_assert(handles_node<F, value_node::bytes>, "hookscope: visit(value, f): f handles no value_node::bytes");
  static_assert(handles_node<F, value_node::opaque>, "hookscope: visit(value, f): f handles no value_node::opaque");
  static_assert(handles_node<F, value_node::variant>, "hookscope: visit(value, f): f handles no value_node::variant");
  if constexpr (handles_node<F, value_node::none> && handles_node<F, value_node::tensor> &&
                handles_node<F, value_node::integer> && handles_node<F, value_node::floating> &&
                handles_node<F, value_node::boolean> && handles_node<F, value_node::string> &&
                handles_node<F, value_node::tuple> && handles_node<F, value_node::list> &&
                handles_node<F, value_node::dict> && handles_node<F, value_node::structure> &&
                handles_node<F, value_node::bytes> && handles_node<F, value_node::opaque> &&
                handles_node<F, value_node::variant>) {  // only the static_assert above speaks when one is missing
    using result = std::invoke_result_t<F&, value_node::none>;
    // The members are read directly: the switch has checked the kind, and an accessor would check it again.
    switch (v.kind_) {
      case value::kind::none: return static_cast<result>(f(value_node::none{}));
      case value::kind::tensor: return static_cast<result>(f(value_node::tensor{v.tensor_}));
      case value::kind::integer: return static_cast<result>(f(value_node::integer{v.integer_}));
      case value::kind::floating: return static_cast<result>(f(value_node::floating{v.floating_}));
      case value::kind::boolean: return static_cast<result>(f(value_node::boolean{v.boolean_}));
      case value::kind::string: return static_cast<result>(f(value_node::string{v.string_}));
      case value::kind::tuple: return static_cast<result>(f(value_node::tuple{v.tuple_.items}));
      case value::kind::list: return static_cast<result>(f(value_node::list{v.list_.items}));
      case value::kind::dict: return static_cast<result>(f(value_node::dict{v.dict_.entries}));
      case value::kind::structure:
        return static_cast<result>(f(value_node::structure{v.structure_.name, v.structure_.fields}));
      case value::kind::bytes:
        return static_cast<result>(f(value_node::bytes{
            std::span<const std::byte>(reinterpret_cast<const std::byte*>(v.string_.data()), v.string_.size())}));
      case value::kind::opaque: return static_cast<result>(f(value_node::opaque{v.opaque_}));
      case value::kind::variant:
        return static_cast<result>(f(value_node::variant{v.variant_.index, v.variant_.alternative.front()}));
    }
    __builtin_unreachable();  // kind_ is always one of the kinds
  }
}

/// A tuple, a list, a dict, a struct or a variant: a node with children (tensors, scalars, bytes, opaque leaves and
/// none are leaves). (A switch rather than visit: every translation unit that includes this header compiles it.)
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
/// their leaves' paths). A leaf has none.
template <class F>
void for_each_child(const value& v, F&& f) {
  const auto items = [&](const std::vector<value>& children) {
    for (std::size_t i = 0; i < children.size(); ++i) f(i, static_cast<const std::string*>(nullptr), children[i]);
  };
  const auto fields = [&](const value_fields& children) {
    for (std::size_t i = 0; i < children.size(); ++i) f(i, &children[i].first, children[i].second);
  };
  visit(v,
        value_handlers{
            [](value_node::none) {}, [](value_node::tensor) {}, [](value_node::integer) {}, [](value_node::floating) {},
            [](value_node::boolean) {}, [](value_node::string) {}, [](value_node::bytes) {}, [](value_node::opaque) {},
            [&](value_node::tuple t) { items(t.items); }, [&](value_node::list l) { items(l.items); },
            [&](value_node::dict d) { fields(d.entries); }, [&](value_node::structure s) { fields(s.fields); },
            [&](value_node::variant x) { f(x.index, static_cast<const std::string*>(nullptr), x.alternative); }});
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
