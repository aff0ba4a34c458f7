// hookscope/value.hpp — the run-time value tree: what a captured call holds, what records store, what the shape
// engine consumes. Nodes: none, tensor, scalars (int, float, bool, str), tuple, list, dict, struct.
//
// It converts to and from the JSON value encoding of the record format:
//   {"shape":[1,7],"dtype":"int64"}  null  {"int":3}  {"float":0.5}  {"bool":true}  {"str":"x"}
//   {"tuple":[...]}  {"list":[...]}  {"dict":[["key",V],...]}  {"struct":"DynamicCache","fields":[["key_0",V],...]}
#pragma once

#include "hookscope/config.hpp"
#include "hookscope/errors.hpp"
#include "hookscope/tensor.hpp"

#include <concepts>
#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <stdexcept>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <variant>
#include <vector>

HOOKSCOPE_DETAIL_BEGIN_NAMESPACE

class value;

/// Ordered (name, value) pairs: the entries of a dict, the fields of a struct.
using value_fields = std::vector<std::pair<std::string, value>>;

namespace detail {

// The container nodes' special members are compiled in the library (src/value.cpp): value's own (inline, so that
// moving and destroying a scalar or a tensor stays cheap) then compile no container code where they are used.
#define HOOKSCOPE_DETAIL_VALUE_NODE(type) \
  type(const type&);                      \
  type(type&&) noexcept;                  \
  type& operator=(const type&);           \
  type& operator=(type&&) noexcept;       \
  ~type()

struct value_tuple {
  std::vector<value> items;
  explicit value_tuple(std::vector<value>&& i) noexcept;
  HOOKSCOPE_DETAIL_VALUE_NODE(value_tuple);
};
struct value_list {
  std::vector<value> items;
  explicit value_list(std::vector<value>&& i) noexcept;
  HOOKSCOPE_DETAIL_VALUE_NODE(value_list);
};
struct value_dict {
  value_fields entries;
  explicit value_dict(value_fields&& e) noexcept;
  HOOKSCOPE_DETAIL_VALUE_NODE(value_dict);
};
struct value_struct {
  std::string name;
  value_fields fields;
  value_struct(std::string&& n, value_fields&& f) noexcept;
  HOOKSCOPE_DETAIL_VALUE_NODE(value_struct);
};
#undef HOOKSCOPE_DETAIL_VALUE_NODE

}  // namespace detail

/// A node of the value tree. Default-constructed: none (an absent optional, a null pointer, None).
///
/// Its constructors and the container nodes' special members are compiled in the library (src/value.cpp): a
/// translation unit that includes this header compiles none of std::variant's construction machinery, and one that
/// captures, copies, moves and destroys values no container code (together ~0.07 s and ~25 KB per annotating
/// translation unit, GCC 12 -O2). Reading, copying, moving and destroying stay inline, and cheap to compile: the
/// containers' parts of them are calls.
class value {
 public:
  enum class kind : std::uint8_t { none, tensor, integer, floating, boolean, string, tuple, list, dict, structure };

  value() noexcept;
  value(tensor_spec t);           // NOLINT(google-explicit-constructor): a tensor is a value
  template <std::integral I>
    requires(!std::same_as<I, bool>)
  value(I i) noexcept : value(integer_tag{}, static_cast<std::int64_t>(i)) {}  // NOLINT(google-explicit-constructor)
  template <std::floating_point F>
  value(F f) noexcept : value(floating_tag{}, static_cast<double>(f)) {}  // NOLINT(google-explicit-constructor)
  value(bool b) noexcept;           // NOLINT(google-explicit-constructor)
  value(std::string s) noexcept;    // NOLINT(google-explicit-constructor)
  value(const char* s);             // NOLINT(google-explicit-constructor)

  static value tuple(std::vector<value> items);
  static value list(std::vector<value> items);
  static value dict(value_fields entries);
  static value structure(std::string name, value_fields fields);

  kind type() const noexcept { return static_cast<kind>(node_.index()); }
  bool is_none() const noexcept { return type() == kind::none; }
  bool is_tensor() const noexcept { return type() == kind::tensor; }

  const tensor_spec& as_tensor() const { return get<tensor_spec>(kind::tensor); }
  std::int64_t as_int() const { return get<std::int64_t>(kind::integer); }
  double as_float() const { return get<double>(kind::floating); }
  bool as_bool() const { return get<bool>(kind::boolean); }
  const std::string& as_string() const { return get<std::string>(kind::string); }
  /// The elements of a tuple or a list.
  const std::vector<value>& items() const;
  /// The entries of a dict or the fields of a struct, in order.
  const value_fields& fields() const;
  /// The class name of a struct.
  const std::string& struct_name() const { return get<detail::value_struct>(kind::structure).name; }

  /// Leaves of the flattened tree (tensors, scalars and nones; containers contribute their leaves): what
  /// for_each_leaf visits.
  std::size_t leaf_count() const noexcept;

  friend bool operator==(const value& a, const value& b) noexcept;

 private:
  struct integer_tag {};
  struct floating_tag {};
  value(integer_tag, std::int64_t i) noexcept;
  value(floating_tag, double f) noexcept;

  using node = std::variant<std::monostate, tensor_spec, std::int64_t, double, bool, std::string, detail::value_tuple,
                            detail::value_list, detail::value_dict, detail::value_struct>;
  explicit value(node n) noexcept;

  template <class T>
  const T& get(kind expected) const {
    if (const T* p = std::get_if<T>(&node_)) return *p;
    throw_wrong_kind(expected);
  }
  [[noreturn]] void throw_wrong_kind(kind expected) const;

  node node_;

  // kind is the index of the node's alternative: type() reads it off the variant, so the two orders are one.
  template <kind K>
  using alternative = std::variant_alternative_t<static_cast<std::size_t>(K), node>;
  static_assert(std::variant_size_v<node> == static_cast<std::size_t>(kind::structure) + 1, "one alternative per kind");
  static_assert(std::is_same_v<alternative<kind::none>, std::monostate>);
  static_assert(std::is_same_v<alternative<kind::tensor>, tensor_spec>);
  static_assert(std::is_same_v<alternative<kind::integer>, std::int64_t>);
  static_assert(std::is_same_v<alternative<kind::floating>, double>);
  static_assert(std::is_same_v<alternative<kind::boolean>, bool>);
  static_assert(std::is_same_v<alternative<kind::string>, std::string>);
  static_assert(std::is_same_v<alternative<kind::tuple>, detail::value_tuple>);
  static_assert(std::is_same_v<alternative<kind::list>, detail::value_list>);
  static_assert(std::is_same_v<alternative<kind::dict>, detail::value_dict>);
  static_assert(std::is_same_v<alternative<kind::structure>, detail::value_struct>);
};

//=== walking the tree ===//

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



/// The record format's name of a kind: "none", "tensor", "int", "float", "bool", "str", "tuple", ...
std::string_view to_string(value::kind k) noexcept;

/// The value in the record format's JSON encoding, compact, keys in a fixed order.
std::string to_json(const value& v);

/// Reads one value in the JSON encoding; a format_error names the path (e.g. `$.tuple[1].shape[0]`) and the fault.
value value_from_json(std::string_view text);

HOOKSCOPE_DETAIL_END_NAMESPACE
