// hookscope/detail/value.hpp — the run-time value tree itself (value, its kinds, opaque_leaf, value_fields), below
// the capture rules that build it, the erased call that returns it and the recorders that store it;
// hookscope/value.hpp is its documented front door, with the walks over a tree and its JSON encoding.
#pragma once

#include "hookscope/detail/config.hpp"
#include "hookscope/detail/tensor.hpp"

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

HOOKSCOPE_DETAIL_END_NAMESPACE
