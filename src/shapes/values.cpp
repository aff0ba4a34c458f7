// The engine's view of value kinds (values.hpp): hookscope::visit where every kind has an answer; the scalar
// comparisons look at scalars only.
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

namespace {

double numeric(const value& v) {
  switch (v.type()) {
    case value::kind::integer: return static_cast<double>(v.as_int());
    case value::kind::boolean: return v.as_bool() ? 1.0 : 0.0;
    default: return v.as_float();
  }
}

std::string scalar_text(const value& v) {
  switch (v.type()) {
    case value::kind::string: return "'" + v.as_string() + "'";
    case value::kind::boolean: return v.as_bool() ? "true" : "false";
    case value::kind::integer: return std::to_string(v.as_int());
    default: return to_json(v);
  }
}

}  // namespace

bool scalar_equal(const value& a, const value& b) {
  // Bytes and opaque leaves equal only their own kind: bytes by content, opaque leaves by type (they hold no value).
  if (a.type() == value::kind::opaque || b.type() == value::kind::opaque) {
    // Only the type: the markers are no value, and a raw pointer's address differs from call to call.
    return a.type() == b.type() && a.opaque_type() == b.opaque_type();
  }
  if (a.type() == value::kind::bytes || b.type() == value::kind::bytes) return a == b;
  const bool a_str = a.type() == value::kind::string, b_str = b.type() == value::kind::string;
  if (a_str || b_str) return a_str && b_str && a.as_string() == b.as_string();
  if (a.type() != value::kind::floating && b.type() != value::kind::floating) {
    const auto as_i = [](const value& v) {
      return v.type() == value::kind::integer ? v.as_int() : std::int64_t{v.as_bool()};
    };
    return as_i(a) == as_i(b);
  }
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
