// The value tree's operations: construction, copy, move and destruction of its nodes, comparison, the builders
// capture uses. Its JSON encoding is value_json_writer.cpp and value_json_reader.cpp.
#include "hookscope/value.hpp"
#include "hookscope/detail/value_builders.hpp"

#include <cstddef>
#include <string>
#include <string_view>
#include <utility>
#include <new>
#include <span>
#include <vector>

HOOKSCOPE_DETAIL_BEGIN_NAMESPACE

//=== value ===//

value::value(tensor_spec t) : kind_(kind::tensor), tensor_(std::move(t)) {}
value::value(std::string s) noexcept : kind_(kind::string), string_(std::move(s)) {}
value::value(const char* s) : kind_(kind::string), string_(s) {}

// The member of kind_ (that owns memory) made from other's, copied or moved as `Other` passes it, or destroyed: the one
// switch per operation over the kinds of the union.
template <class Other>
void value::construct_node(Other&& other) {
  switch (kind_) {
    case kind::tensor: ::new (&tensor_) tensor_spec(static_cast<Other&&>(other).tensor_); break;
    case kind::string: ::new (&string_) std::string(static_cast<Other&&>(other).string_); break;
    case kind::tuple: ::new (&tuple_) detail::value_tuple(static_cast<Other&&>(other).tuple_); break;
    case kind::list: ::new (&list_) detail::value_list(static_cast<Other&&>(other).list_); break;
    case kind::dict: ::new (&dict_) detail::value_dict(static_cast<Other&&>(other).dict_); break;
    case kind::structure: ::new (&structure_) detail::value_struct(static_cast<Other&&>(other).structure_); break;
    case kind::bytes: ::new (&string_) std::string(static_cast<Other&&>(other).string_); break;
    case kind::opaque: ::new (&opaque_) opaque_leaf(static_cast<Other&&>(other).opaque_); break;
    case kind::variant: ::new (&variant_) detail::value_variant(static_cast<Other&&>(other).variant_); break;
    case kind::none:
    case kind::integer:
    case kind::floating:
    case kind::boolean: break;
  }
}

void value::copy_node(const value& other) { construct_node(other); }
void value::move_node(value& other) noexcept { construct_node(std::move(other)); }

void value::destroy_node() noexcept {
  switch (kind_) {
    case kind::tensor: tensor_.~tensor_spec(); break;
    case kind::string: string_.~basic_string(); break;
    case kind::tuple: tuple_.~value_tuple(); break;
    case kind::list: list_.~value_list(); break;
    case kind::dict: dict_.~value_dict(); break;
    case kind::structure: structure_.~value_struct(); break;
    case kind::bytes: string_.~basic_string(); break;
    case kind::opaque: opaque_.~opaque_leaf(); break;
    case kind::variant: variant_.~value_variant(); break;
    case kind::none:
    case kind::integer:
    case kind::floating:
    case kind::boolean: break;
  }
}

value& value::operator=(const value& other) {
  if (this != &other) *this = value(other);  // copied first: a copy that throws leaves this value as it was
  return *this;
}

value& value::operator=(value&& other) noexcept {
  if (this == &other) return *this;
  if (owns_memory()) destroy_node();
  kind_ = other.kind_;
  if (owns_memory()) {
    move_node(other);
  } else {
    copy_scalar(other);
  }
  return *this;
}

value value::tuple(std::vector<value> items) {
  value v;
  ::new (&v.tuple_) detail::value_tuple{std::move(items)};
  v.kind_ = kind::tuple;
  return v;
}
value value::list(std::vector<value> items) {
  value v;
  ::new (&v.list_) detail::value_list{std::move(items)};
  v.kind_ = kind::list;
  return v;
}
value value::dict(value_fields entries) {
  value v;
  ::new (&v.dict_) detail::value_dict{std::move(entries)};
  v.kind_ = kind::dict;
  return v;
}
value value::structure(std::string name, value_fields fields) {
  value v;
  ::new (&v.structure_) detail::value_struct{std::move(name), std::move(fields)};
  v.kind_ = kind::structure;
  return v;
}

value value::bytes(std::span<const std::byte> raw) {
  value v;
  ::new (&v.string_) std::string(reinterpret_cast<const char*>(raw.data()), raw.size());
  v.kind_ = kind::bytes;
  return v;
}
value value::opaque(std::string type_name, bool depth_limited) {
  opaque_leaf leaf;
  leaf.type_name = std::move(type_name);
  leaf.depth_limited = depth_limited;
  return opaque(std::move(leaf));
}
value value::opaque(opaque_leaf leaf) {
  value v;
  ::new (&v.opaque_) opaque_leaf(std::move(leaf));
  v.kind_ = kind::opaque;
  return v;
}
value value::variant(std::size_t index, value alternative) {
  std::vector<value> one;
  one.push_back(std::move(alternative));
  value v;
  ::new (&v.variant_) detail::value_variant{index, std::move(one)};
  v.kind_ = kind::variant;
  return v;
}

const value& value::alternative() const {
  expect(kind::variant);
  return variant_.alternative.front();
}

namespace detail {

items_builder::items_builder(std::size_t expected) { items_.reserve(expected); }
items_builder::~items_builder() = default;
void items_builder::add(value&& v) { items_.push_back(std::move(v)); }
value items_builder::tuple() && { return value::tuple(std::move(items_)); }
value items_builder::list() && { return value::list(std::move(items_)); }

fields_builder::fields_builder(std::size_t expected) { fields_.reserve(expected); }
fields_builder::~fields_builder() = default;
void fields_builder::add(std::string_view name, value&& v) { fields_.emplace_back(std::string(name), std::move(v)); }
value fields_builder::dict() && { return value::dict(std::move(fields_)); }
value fields_builder::structure(std::string_view name) && {
  return value::structure(std::string(name), std::move(fields_));
}

}  // namespace detail

const std::vector<value>& value::items() const {
  if (kind_ == kind::tuple) return tuple_.items;
  if (kind_ == kind::list) return list_.items;
  throw value_error("value: expected a tuple or a list, found " + std::string(to_string(type())));
}

const value_fields& value::fields() const {
  if (kind_ == kind::dict) return dict_.entries;
  if (kind_ == kind::structure) return structure_.fields;
  throw value_error("value: expected a dict or a struct, found " + std::string(to_string(type())));
}

void value::throw_wrong_kind(kind expected) const {
  throw value_error("value: expected " + std::string(to_string(expected)) + ", found " +
                    std::string(to_string(type())));
}

std::size_t value::leaf_count() const noexcept {
  std::size_t n = 0;
  for_each_leaf(*this, [&](const value&) noexcept { ++n; });
  return n;
}

bool operator==(const value& a, const value& b) noexcept {
  if (a.kind_ != b.kind_) return false;
  // a's node against b's member of the same kind (the kinds are equal).
  return visit(
      a, value_handlers{
             [](value_node::none) { return true; }, [&](value_node::tensor t) { return t.spec == b.tensor_; },
             [&](value_node::integer i) { return i.number == b.integer_; },
             [&](value_node::floating f) { return f.number == b.floating_; },
             [&](value_node::boolean x) { return x.truth == b.boolean_; },
             [&](value_node::string s) { return s.text == b.string_; },
             [&](value_node::tuple t) { return t.items == b.tuple_.items; },
             [&](value_node::list l) { return l.items == b.list_.items; },
             [&](value_node::dict d) { return d.entries == b.dict_.entries; },
             [&](value_node::structure s) { return s.name == b.structure_.name && s.fields == b.structure_.fields; },
             [&](value_node::bytes) { return a.string_ == b.string_; },
             [&](value_node::opaque o) { return o.leaf == b.opaque_; },
             [&](value_node::variant v) {
               return v.index == b.variant_.index && v.alternative == b.variant_.alternative.front();
             }});
}

std::string_view to_string(value::kind k) noexcept {
  static constexpr std::string_view names[] = {"none", "tensor", "int",    "float", "bool",   "str",    "tuple",
                                               "list", "dict",   "struct", "bytes", "opaque", "variant"};
  return names[static_cast<std::size_t>(k)];
}

HOOKSCOPE_DETAIL_END_NAMESPACE
