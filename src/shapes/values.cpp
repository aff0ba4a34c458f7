// The engine's view of value kinds (values.hpp), each a visit of the kinds (hookscope::visit).
#include "values.hpp"

#include <cmath>

HOOKSCOPE_DETAIL_BEGIN_NAMESPACE
namespace detail::shapes {

bool is_scalar(const value& v) noexcept {
  return visit(v, value_handlers{[](value_node::integer) { return true; }, [](value_node::floating) { return true; },
                                 [](value_node::boolean) { return true; }, [](value_node::string) { return true; },
                                 [](value_node::bytes) { return true; }, [](value_node::opaque) { return true; },
                                 [](value_node::none) { return false; }, [](value_node::tensor) { return false; },
                                 [](value_node::tuple) { return false; }, [](value_node::list) { return false; },
                                 [](value_node::dict) { return false; }, [](value_node::structure) { return false; },
                                 [](value_node::variant) { return false; }});
}

bool truthy(const value& v) {
  return visit(
      v,
      value_handlers{
          [](value_node::none) { return false; }, [](value_node::tensor) { return true; },
          [](value_node::integer i) { return i.number != 0; }, [](value_node::floating f) { return f.number != 0.0; },
          [](value_node::boolean b) { return b.truth; }, [](value_node::string s) { return !s.text.empty(); },
          [](value_node::tuple t) { return !t.items.empty(); }, [](value_node::list l) { return !l.items.empty(); },
          [](value_node::dict d) { return !d.entries.empty(); },
          [](value_node::structure s) { return !s.fields.empty(); }, [](value_node::bytes b) { return !b.raw.empty(); },
          // an object Python knows nothing of is true
          [](value_node::opaque) { return true; }, [](value_node::variant x) { return truthy(x.alternative); }});
}

bool holds_no_dims(const value& v) {
  if (!is_container(v)) return false;
  bool none = true;
  for_each_leaf(v, [&](const value& leaf) { none = none && (!leaf.is_tensor() || leaf.as_tensor().shape.empty()); });
  return none;
}

namespace {

// How Python's == sees a scalar: its family. Every kind is named, so that a kind added to the tree is placed here.
enum class family { opaque, bytes, text, integral, floating, not_scalar };

family family_of(const value& v) {
  return visit(
      v,
      value_handlers{
          [](value_node::opaque) { return family::opaque; }, [](value_node::bytes) { return family::bytes; },
          [](value_node::string) { return family::text; }, [](value_node::integer) { return family::integral; },
          [](value_node::boolean) { return family::integral; }, [](value_node::floating) { return family::floating; },
          [](value_node::none) { return family::not_scalar; }, [](value_node::tensor) { return family::not_scalar; },
          [](value_node::tuple) { return family::not_scalar; }, [](value_node::list) { return family::not_scalar; },
          [](value_node::dict) { return family::not_scalar; }, [](value_node::structure) { return family::not_scalar; },
          [](value_node::variant) { return family::not_scalar; }});
}

// An int or a bool as Python's int; anything else is no int (as_bool throws value_error naming it).
std::int64_t integral(const value& v) {
  const auto none_such = [&](const auto&) { return std::int64_t{v.as_bool()}; };
  return visit(v, value_handlers{[](value_node::integer i) { return i.number; },
                                 [](value_node::boolean b) { return std::int64_t{b.truth}; }, none_such});
}

// A number as Python's float; anything else is no number (as_float throws value_error naming it).
double numeric(const value& v) {
  const auto none_such = [&](const auto&) { return v.as_float(); };
  return visit(v, value_handlers{[](value_node::integer i) { return static_cast<double>(i.number); },
                                 [](value_node::boolean b) { return b.truth ? 1.0 : 0.0; },
                                 [](value_node::floating f) { return f.number; }, none_such});
}

// A constant as the messages show it: text quoted, bools and ints as Python writes them, the rest in the encoding.
std::string scalar_text(const value& v) {
  const auto encoded = [&](const auto&) { return to_json(v); };
  return visit(v, value_handlers{[](value_node::string s) { return "'" + s.text + "'"; },
                                 [](value_node::boolean b) { return std::string(b.truth ? "true" : "false"); },
                                 [](value_node::integer i) { return std::to_string(i.number); }, encoded});
}

}  // namespace

bool scalar_equal(const value& a, const value& b) {
  const family fa = family_of(a), fb = family_of(b);
  // Bytes and opaque leaves equal only their own kind: bytes by content, opaque leaves by type (they hold no value).
  if (fa == family::opaque || fb == family::opaque) {
    // Only the type: the markers are no value, and a raw pointer's address differs from call to call.
    return fa == fb && a.opaque_type() == b.opaque_type();
  }
  if (fa == family::bytes || fb == family::bytes) return a == b;
  if (fa == family::text || fb == family::text) return fa == fb && a.as_string() == b.as_string();
  if (fa != family::floating && fb != family::floating) return integral(a) == integral(b);
  // NaN equals NaN here: a call's constant must equal itself (Python compares the same float object by identity).
  const double x = numeric(a), y = numeric(b);
  return x == y || (std::isnan(x) && std::isnan(y));
}

bool constants_equal(const value_fields& a, const value_fields& b) {
  if (a.size() != b.size()) return false;
  for (std::size_t i = 0; i < a.size(); ++i) {
    if (a[i].first != b[i].first || !scalar_equal(a[i].second, b[i].second)) return false;
  }
  return true;
}

std::string constants_text(const value_fields& constants) {
  std::string out = "{";
  for (std::size_t i = 0; i < constants.size(); ++i) {
    if (i) out += ", ";
    out += constants[i].first + ": " + scalar_text(constants[i].second);
  }
  return out + "}";
}

value with_children(const value& like, std::vector<value> children) {
  const auto named = [&](const value_fields& names) {
    value_fields fields;
    fields.reserve(children.size());
    for (std::size_t i = 0; i < children.size(); ++i) fields.emplace_back(names[i].first, std::move(children[i]));
    return fields;
  };
  return visit(
      like, value_handlers{[&](value_node::tuple) { return value::tuple(std::move(children)); },
                           [&](value_node::list) { return value::list(std::move(children)); },
                           [&](value_node::dict d) { return value::dict(named(d.entries)); },
                           [&](value_node::structure s) { return value::structure(s.name, named(s.fields)); },
                           [&](value_node::variant x) { return value::variant(x.index, std::move(children.front())); },
                           // a leaf has no children
                           [&](value_node::none) { return like; }, [&](value_node::tensor) { return like; },
                           [&](value_node::integer) { return like; }, [&](value_node::floating) { return like; },
                           [&](value_node::boolean) { return like; }, [&](value_node::string) { return like; },
                           [&](value_node::bytes) { return like; }, [&](value_node::opaque) { return like; }});
}

std::string shape_text(const std::vector<std::int64_t>& shape) {
  if (shape.empty()) return "[]";
  std::string out;
  for (std::size_t d = 0; d < shape.size(); ++d) {
    if (d) out += 'x';
    out += std::to_string(shape[d]);
  }
  return out;
}

std::string join_path(const std::vector<std::string>& path) {
  std::string out;
  for (std::size_t i = 0; i < path.size(); ++i) {
    if (i) out += '.';
    out += path[i];
  }
  return out;
}

}  // namespace detail::shapes
HOOKSCOPE_DETAIL_END_NAMESPACE
