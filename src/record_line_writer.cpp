// The writer of one record line (to_record_line, records.hpp), and what it refuses: every value the record reader
// (records.cpp) would refuse, so that a writer never writes a line its reader refuses. Values are embedded through
// the value encoder's writers (json_writer.hpp), the line limit kept by eliding values (record_fit.hpp).
#include "hookscope/records.hpp"
#include "hookscope/exceptions.hpp"

#include "json_writer.hpp"

#include "json_reader.hpp"
#include "record_fit.hpp"
#include "record_parts.hpp"
#include "tensor_contents.hpp"

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_set>
#include <utility>
#include <vector>

HOOKSCOPE_DETAIL_BEGIN_NAMESPACE

namespace detail {

void append_json_signature(std::string& line, const parameter_list& parameters) {
  line.push_back('[');
  for (std::size_t i = 0; i < parameters.size(); ++i) {
    const parameter& p = parameters[i];
    if (i != 0) line.push_back(',');
    line += "{\"name\":";
    detail::append_json_string(line, p.name);
    if (p.kind == parameter_kind::var_positional) line += ",\"kind\":\"var_positional\"";
    if (p.kind == parameter_kind::var_keyword) line += ",\"kind\":\"var_keyword\"";
    if (p.default_value) {
      line += ",\"default\":";
      detail::append_json(line, *p.default_value);
    }
    line.push_back('}');
  }
  line.push_back(']');
}

}  // namespace detail

namespace detail {
namespace {

// Why the record reader would refuse the tensor `t` (docs/record_format.md), or "".
std::string tensor_problem(const tensor_spec& t, std::string& path) {
  for (std::size_t i = 0; i < t.shape.size(); ++i) {
    if (t.shape[i] < 0) {
      path += ".shape[" + std::to_string(i) + "]";
      return "negative dimension " + std::to_string(t.shape[i]) +
             " (a tensor's dimensions are sizes: the record format and its reader refuse it)";
    }
  }
  if (t.data_too_large && !t.data.empty()) return "contents given and marked too large at once";
  if (t.data.empty()) return {};
  const std::optional<std::size_t> expected = contents_bytes(t);
  if (!expected) return "too many elements";
  if (t.data.size() == *expected) return {};
  path += ".data";
  if (*expected == 0) return std::to_string(t.data.size()) + " bytes of contents for a tensor of no element";
  return std::to_string(t.data.size()) + " bytes of contents for a tensor that holds " + std::to_string(*expected);
}

// Why the record reader would refuse the opaque leaf `o`, or "".
std::string opaque_problem(const opaque_leaf& o) {
  if (o.unreadable && !o.address) return "an unreadable leaf without its address";
  if (o.length && !o.too_large) return "a length without too_large";
  if (o.length && *o.length > static_cast<std::uint64_t>(INT64_MAX)) return "a length past 2^63 - 1";
  return {};
}

// The first part of `v` the record reader would refuse, as its path (appended to `path`) and why; "" if none. The
// checks the encoding itself cannot make: the writer writes every value it is given.
std::string find_refused(const value& v, std::string& path) {
  const std::size_t length = path.size();
  const auto in_items = [&](const std::vector<value>& items) -> std::string {
    for (std::size_t i = 0; i < items.size(); ++i) {
      // Appended piece by piece: GCC 12's -O3 -Wrestrict misreads `"[" + std::string&&` as an overlapping copy.
      path += '[';
      path += std::to_string(i);
      path += ']';
      if (std::string why = find_refused(items[i], path); !why.empty()) return why;
      path.resize(length);
    }
    return {};
  };
  const auto in_fields = [&](const value_fields& fields) -> std::string {
    std::unordered_set<std::string_view> names;
    for (const auto& [name, field] : fields) {
      if (!names.insert(name).second) return "the key \"" + name + "\" given twice";
      path += '.';
      path += name;
      if (std::string why = find_refused(field, path); !why.empty()) return why;
      path.resize(length);
    }
    return {};
  };
  return visit(
      v,
      value_handlers{
          [&](value_node::tensor t) { return tensor_problem(t.spec, path); },
          [](value_node::opaque o) { return opaque_problem(o.leaf); },
          [&](value_node::tuple t) { return in_items(t.items); }, [&](value_node::list l) { return in_items(l.items); },
          [&](value_node::variant x) {
            path += ".value";
            std::string why = find_refused(x.alternative, path);
            if (why.empty()) path.resize(length);
            return why;
          },
          [&](value_node::dict d) { return in_fields(d.entries); },
          [&](value_node::structure s) { return in_fields(s.fields); },
          // the encoding alone decides for the other kinds
          [](value_node::none) { return std::string(); }, [](value_node::integer) { return std::string(); },
          [](value_node::floating) { return std::string(); }, [](value_node::boolean) { return std::string(); },
          [](value_node::string) { return std::string(); }, [](value_node::bytes) { return std::string(); }});
}

// Whether `fields` holds a key twice: compared pairwise while they are few (no allocation), through a set beyond.
bool has_duplicate_key(const value_fields& fields) {
  constexpr std::size_t pairwise_up_to = 16;
  if (fields.size() <= pairwise_up_to) {
    for (std::size_t i = 1; i < fields.size(); ++i) {
      for (std::size_t j = 0; j < i; ++j) {
        if (fields[i].first == fields[j].first) return true;
      }
    }
    return false;
  }
  std::unordered_set<std::string_view> names;
  for (const auto& field : fields) {
    if (!names.insert(field.first).second) return true;
  }
  return false;
}

constexpr std::size_t refused_value = static_cast<std::size_t>(-1);

std::size_t writable_levels(const value& v);

// writable_levels' cases, one per kind.
struct writable_levels_of {
  std::size_t operator()(value_node::none) const { return 0; }
  std::size_t operator()(value_node::integer) const { return 1; }
  std::size_t operator()(value_node::floating) const { return 1; }
  std::size_t operator()(value_node::boolean) const { return 1; }
  std::size_t operator()(value_node::bytes) const { return 1; }
  std::size_t operator()(value_node::string s) const { return is_utf8(s.text) ? 1 : 2; }
  std::size_t operator()(value_node::opaque o) const {
    if (!opaque_problem(o.leaf).empty()) return refused_value;
    return is_utf8(o.leaf.type_name) ? 1 : 2;
  }
  std::size_t operator()(value_node::tensor n) const {
    const tensor_spec& t = n.spec;
    const bool sizes = std::none_of(t.shape.begin(), t.shape.end(), [](std::int64_t d) { return d < 0; });
    if (sizes && t.data.empty()) return 2;  // a shape without contents: the common tensor
    std::string unused_path;
    return tensor_problem(t, unused_path).empty() ? 2 : refused_value;
  }
  std::size_t operator()(value_node::variant x) const {
    const std::size_t inner = writable_levels(x.alternative);
    return inner == refused_value ? refused_value : 1 + inner;
  }
  std::size_t operator()(value_node::tuple t) const { return items(t.items); }
  std::size_t operator()(value_node::list l) const { return items(l.items); }
  std::size_t operator()(value_node::dict d) const { return fields(d.entries); }
  std::size_t operator()(value_node::structure s) const { return fields(s.fields); }

  static std::size_t items(const std::vector<value>& children) {
    std::size_t deepest = 0;
    for (const value& item : children) {
      const std::size_t levels = writable_levels(item);
      if (levels == refused_value) return refused_value;
      deepest = std::max(deepest, levels);
    }
    return 2 + deepest;
  }
  static std::size_t fields(const value_fields& children) {
    if (has_duplicate_key(children)) return refused_value;
    std::size_t deepest = 0;
    for (const auto& [name, field] : children) {
      const std::size_t levels = writable_levels(field);
      if (levels == refused_value) return refused_value;
      deepest = std::max({deepest, levels, is_utf8(name) ? std::size_t{0} : std::size_t{1}});
    }
    return children.empty() ? 2 : 3 + deepest;
  }
};

// The JSON levels of `v`'s encoding, as json_levels counts them, or refused_value if find_refused would refuse a
// part of it: the common case's one walk, which builds no path and no message (a refused value is walked again by
// the checks that say where and why).
std::size_t writable_levels(const value& v) { return visit(v, writable_levels_of{}); }

}  // namespace

void check_writable(const value& v, std::string_view where) {
  if (writable_levels(v) <= max_value_json_levels) return;
  check_json_levels(v);
  std::string path(where);
  if (std::string why = find_refused(v, path); !why.empty()) throw value_error(path + ": " + why);
}

void check_writable(const value_fields& fields) {
  for (const auto& [name, v] : fields) check_writable(v, name);
}

}  // namespace detail

// Values are embedded through the value encoder's writers: nothing is copied into an intermediate document. What
// the record reader would refuse is refused here: a writer never writes a line its reader refuses.
namespace {
// The names a record holds are the library's or the program's identifiers: JSON strings, which must be UTF-8.
void check_name_is_text(std::string_view name, std::string_view what) {
  if (!detail::is_utf8(name)) {
    std::string message = "to_record_line: ";
    message += what;
    message += " is not UTF-8 (";
    message += to_json(value(std::string(name)));
    message += "): the record format's names are text";
    throw format_error(message);
  }
}

// What follows the function's name and signature: `,"args":[...],"kwargs":[...]` and the optional keys, through
// any of the value writers (json_writer.hpp).
template <class Out>
void append_record_rest(Out& out, const call_record& record) {
  out += ",\"args\":[";
  for (std::size_t i = 0; i < record.inputs.args.size(); ++i) {
    if (i != 0) out.push_back(',');
    detail::append_json(out, record.inputs.args[i]);
  }
  out += "],\"kwargs\":";
  detail::append_json_fields(out, record.inputs.kwargs);
  if (record.result) {
    out += ",\"result\":";
    detail::append_json(out, *record.result);
  }
  if (record.threw) out += ",\"threw\":true";
  if (record.latency_ns) {
    out += ",\"latency_ns\":";
    out += std::to_string(*record.latency_ns);
  }
  out.push_back('}');
}

}  // namespace

std::string to_record_line(const call_record& record, std::size_t max_line_bytes) {
  if (record.function.empty()) throw value_error("function: an empty function name (the record reader refuses it)");
  check_name_is_text(record.function, "the function's name");
  for (const value& a : record.inputs.args) detail::check_writable(a, "args");
  for (const auto& kw : record.inputs.kwargs) check_name_is_text(kw.first, "a keyword argument's name");
  detail::check_writable(record.inputs.kwargs);
  if (record.result) detail::check_writable(*record.result, "result");
  if (record.parameters) {
    for (const parameter& p : *record.parameters) {
      check_name_is_text(p.name, "a parameter's name");
      if (p.default_value) detail::check_json_levels(*p.default_value);
    }
  }
  std::string line = "{\"function\":";
  detail::append_json_string(line, record.function);
  if (record.parameters) {
    line += ",\"signature\":";
    detail::append_json_signature(line, *record.parameters);
  }
  // Measured first, by the writers' own code: the common record is written once, in one allocation, and one too long
  // is never written whole.
  detail::json_counter rest(detail::record_elisions::remembered_size);
  append_record_rest(rest, record);
  const std::size_t size = line.size() + rest.size();
  if (size <= max_line_bytes) {
    line.reserve(size);
    append_record_rest(line, record);
    return line;
  }
  // The record's values, in the line's order: the candidates for elision (names and the signature are kept whole:
  // a function's signature must read the same on each of its records).
  std::vector<const value*> values;
  values.reserve(record.inputs.args.size() + record.inputs.kwargs.size() + 1);
  for (const value& a : record.inputs.args) values.push_back(&a);
  for (const auto& kw : record.inputs.kwargs) values.push_back(&kw.second);
  if (record.result) values.push_back(&*record.result);
  const detail::record_elisions elisions(values, size - max_line_bytes, rest);
  if (elisions.saved() < size - max_line_bytes) {
    throw format_error("to_record_line: the record takes " + std::to_string(size - elisions.saved()) +
                       " bytes with its values elided, more than the line limit of " + std::to_string(max_line_bytes) +
                       " bytes: its names, its signature and the values that cannot be elided do not fit");
  }
  detail::json_replacing_writer writer{line, elisions.replacements()};
  line.reserve(size - elisions.saved());
  append_record_rest(writer, record);
  if (line.size() > max_line_bytes) {  // the sizes are the writers' own counts: never met
    throw format_error("to_record_line: the elided record takes " + std::to_string(line.size()) +
                       " bytes, more than the line limit of " + std::to_string(max_line_bytes));
  }
  return line;
}

HOOKSCOPE_DETAIL_END_NAMESPACE
