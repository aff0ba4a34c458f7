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
#include "hookscope/exceptions.hpp"
#include "hookscope/tensor.hpp"

#include <concepts>
#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <optional>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

HOOKSCOPE_DETAIL_BEGIN_NAMESPACE

class value;

/// An opaque leaf: a value recorded without its contents. `type_name` says what it was; the other members say why
/// (all optional, and what the record format's opaque object carries: docs/record_format.md).
struct opaque_leaf {
  std::string type_name;
  /// A recursive value cut at the capture's depth bound (the part below is not captured).
  bool depth_limited = false;
  /// A raw pointer's address: recorded, never followed unless the user opted in.
  std::optional<std::uint64_t> address;
  /// The user opted in to read the pointee, and the memory at `address` could not be read.
  bool unreadable = false;
  /// The element or byte count of a value too large to record (`too_large`), when it is known.
  std::optional<std::uint64_t> length;
  /// A value left out because it is larger than the capture's bounds or a record line allows.
  bool too_large = false;
  friend bool operator==(const opaque_leaf&, const opaque_leaf&) = default;
};

/// Ordered (name, value) pairs: the entries of a dict, the fields of a struct.
using value_fields = std::vector<std::pair<std::string, value>>;

namespace detail {

// The container nodes (members of value's union, made, copied and destroyed only in src/value.cpp).
struct value_tuple {
  std::vector<value> items;
};
struct value_list {
  std::vector<value> items;
};
struct value_dict {
  value_fields entries;
};
struct value_struct {
  std::string name;
  value_fields fields;
};
struct value_variant {
  std::size_t index;
  std::vector<value> alternative;  // exactly one: a value cannot hold a value by value
};

}  // namespace detail

/// The node types `visit` hands a visitor, one per `value::kind` and named after it: views of the node's contents,
/// valid while the value lives.
namespace value_node {
struct none {};
struct tensor {
  const tensor_spec& spec;
};
struct integer {
  std::int64_t number;
};
struct floating {
  double number;
};
struct boolean {
  bool truth;
};
struct string {
  const std::string& text;
};
struct tuple {
  const std::vector<value>& items;
};
struct list {
  const std::vector<value>& items;
};
struct dict {
  const value_fields& entries;
};
struct structure {
  const std::string& name;
  const value_fields& fields;
};
struct bytes {
  std::span<const std::byte> raw;
};
struct opaque {
  const opaque_leaf& leaf;
};
struct variant {
  std::size_t index;
  const value& alternative;
};
}  // namespace value_node

template <class F>
decltype(auto) visit(const value& v, F&& f);

/// A node of the value tree. Default-constructed: none (an absent optional, a null pointer, None).
///
/// A tagged union rather than a std::variant: every translation unit that calls an observable includes this header,
/// in disabled builds too, and instantiating a variant of ten alternatives cost each of them more than the rest of
/// the header (~180 M of GCC 12's instructions, `tools/annotation_cost.py --instructions`). Scalars are read, copied
/// and destroyed inline; tensors, strings and containers own memory, and their copies, moves and destruction are
/// compiled once, in the library (src/value.cpp).
class value {
 public:
  enum class kind : std::uint8_t {
    none,
    tensor,
    integer,
    floating,
    boolean,
    string,
    tuple,
    list,
    dict,
    structure,
    bytes,
    opaque,
    variant
  };

  value() noexcept {}
  // Implicit: a tensor, a number, a bool or a string is a value.
  value(tensor_spec t);
  template <std::integral I>
    requires(!std::same_as<I, bool>)
  value(I i)
  noexcept : kind_(kind::integer), integer_(static_cast<std::int64_t>(i)) {}
  template <std::floating_point F>
  value(F f) noexcept : kind_(kind::floating), floating_(static_cast<double>(f)) {}
  value(bool b) noexcept : kind_(kind::boolean), boolean_(b) {}
  value(std::string s) noexcept;
  value(const char* s);

  value(const value& other) : kind_(other.kind_) {
    if (owns_memory()) {
      copy_node(other);
    } else {
      copy_scalar(other);
    }
  }
  value(value&& other) noexcept : kind_(other.kind_) {
    if (owns_memory()) {
      move_node(other);
    } else {
      copy_scalar(other);
    }
  }
  value& operator=(const value& other);
  value& operator=(value&& other) noexcept;
  ~value() {
    if (owns_memory()) destroy_node();
  }

  static value tuple(std::vector<value> items);
  static value list(std::vector<value> items);
  static value dict(value_fields entries);
  static value structure(std::string name, value_fields fields);
  /// Raw bytes (ranges of std::byte).
  static value bytes(std::span<const std::byte> raw);
  /// A leaf for a value captured without its contents: its type's name. `depth_limited`: a recursive value cut at
  /// the capture's depth bound (the part below is not captured).
  static value opaque(std::string type_name, bool depth_limited = false);
  /// An opaque leaf with what it records beside its type's name (an address, why it holds no value).
  static value opaque(opaque_leaf leaf);
  /// The alternative `index` of a variant type, holding `alternative`.
  static value variant(std::size_t index, value alternative);

  kind type() const noexcept { return kind_; }
  bool is_none() const noexcept { return kind_ == kind::none; }
  bool is_tensor() const noexcept { return kind_ == kind::tensor; }

  const tensor_spec& as_tensor() const {
    expect(kind::tensor);
    return tensor_;
  }
  std::int64_t as_int() const {
    expect(kind::integer);
    return integer_;
  }
  double as_float() const {
    expect(kind::floating);
    return floating_;
  }
  bool as_bool() const {
    expect(kind::boolean);
    return boolean_;
  }
  const std::string& as_string() const {
    expect(kind::string);
    return string_;
  }
  /// The elements of a tuple or a list.
  const std::vector<value>& items() const;
  /// The entries of a dict or the fields of a struct, in order.
  const value_fields& fields() const;
  /// The class name of a struct.
  const std::string& struct_name() const {
    expect(kind::structure);
    return structure_.name;
  }
  std::span<const std::byte> as_bytes() const {
    expect(kind::bytes);
    return {reinterpret_cast<const std::byte*>(string_.data()), string_.size()};
  }
  /// The type name of an opaque leaf.
  const std::string& opaque_type() const {
    expect(kind::opaque);
    return opaque_.type_name;
  }
  /// Everything an opaque leaf records.
  const opaque_leaf& as_opaque() const {
    expect(kind::opaque);
    return opaque_;
  }
  /// True for the opaque leaf where a recursive value's capture stopped at its depth bound.
  bool depth_limited() const {
    expect(kind::opaque);
    return opaque_.depth_limited;
  }
  /// The index of a variant's alternative, and the alternative's value.
  std::size_t variant_index() const {
    expect(kind::variant);
    return variant_.index;
  }
  const value& alternative() const;

  /// Leaves of the flattened tree (tensors, scalars and nones; containers contribute their leaves): what
  /// for_each_leaf visits.
  std::size_t leaf_count() const noexcept;

  friend bool operator==(const value& a, const value& b) noexcept;
  template <class F>
  friend decltype(auto) visit(const value& v, F&& f);

 private:
  /// Tensors, strings and containers (their members are the ones with special member functions).
  /// (Switches over the kinds have no default: -Wswitch names each one a new kind must join.)
  bool owns_memory() const noexcept {
    switch (kind_) {
      case kind::none:
      case kind::integer:
      case kind::floating:
      case kind::boolean: return false;
      case kind::tensor:
      case kind::string:
      case kind::tuple:
      case kind::list:
      case kind::dict:
      case kind::structure:
      case kind::bytes:
      case kind::opaque:
      case kind::variant: return true;
    }
    return true;
  }
  void copy_scalar(const value& other) noexcept {
    switch (kind_) {
      case kind::integer: integer_ = other.integer_; break;
      case kind::floating: floating_ = other.floating_; break;
      case kind::boolean: boolean_ = other.boolean_; break;
      case kind::none:
      case kind::tensor:
      case kind::string:
      case kind::tuple:
      case kind::list:
      case kind::dict:
      case kind::structure:
      case kind::bytes:
      case kind::opaque:
      case kind::variant: break;  // nothing to copy, or owns memory: copy_node's
    }
  }
  // Construct the member of kind_ from other's (of the same kind), or destroy it: the library's.
  void copy_node(const value& other);
  void move_node(value& other) noexcept;
  template <class Other>
  void construct_node(Other&& other);  // both of them (src/value.cpp)
  void destroy_node() noexcept;
  void expect(kind k) const {
    if (kind_ != k) throw_wrong_kind(k);
  }
  [[noreturn]] void throw_wrong_kind(kind expected) const;

  kind kind_ = kind::none;
  union {
    std::int64_t integer_;
    double floating_;
    bool boolean_;
    tensor_spec tensor_;
    std::string string_;  // a str's text, or raw bytes
    detail::value_tuple tuple_;
    detail::value_list list_;
    detail::value_dict dict_;
    detail::value_struct structure_;
    opaque_leaf opaque_;
    detail::value_variant variant_;
  };
};

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
