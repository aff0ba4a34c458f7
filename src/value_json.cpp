// The value tree's JSON encoding: read with Boost.JSON (compiled in boost_json.cpp), written by hand so that the
// text is compact, ordered and prints floats in their shortest round-trip form. The reader of parsed documents
// (json_reader.hpp) is shared with the record reader.
#include "hookscope/value.hpp"

#include "json_writer.hpp"

#include "base64.hpp"
#include "json_reader.hpp"

#include <boost/json.hpp>

#include <algorithm>
#include <charconv>
#include <cstddef>
#include <cstdint>
#include <cmath>
#include <string>
#include <string_view>
#include <system_error>
#include <type_traits>
#include <utility>
#include <vector>

HOOKSCOPE_DETAIL_BEGIN_NAMESPACE

//=== writing ===//

namespace {

void write_string(std::string& out, std::string_view s) {
  out.push_back('"');
  for (const char c : s) {
    switch (c) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\n': out += "\\n"; break;
      case '\r': out += "\\r"; break;
      case '\t': out += "\\t"; break;
      default:
        if (static_cast<unsigned char>(c) < 0x20) {
          static constexpr char hex[] = "0123456789abcdef";
          out += "\\u00";
          out.push_back(hex[(c >> 4) & 0xf]);
          out.push_back(hex[c & 0xf]);
        } else {
          out.push_back(c);
        }
    }
  }
  out.push_back('"');
}

template <class Number>
void write_number(std::string& out, Number n) {
  char buffer[32];
  const auto [end, ec] = std::to_chars(buffer, buffer + sizeof buffer, n);
  out.append(buffer, ec == std::errc{} ? end : buffer);
}

void write(std::string& out, const value& v);

void write_items(std::string& out, const std::vector<value>& items) {
  out.push_back('[');
  for (std::size_t i = 0; i < items.size(); ++i) {
    if (i != 0) out.push_back(',');
    write(out, items[i]);
  }
  out.push_back(']');
}

void write_fields(std::string& out, const value_fields& fields) {
  out.push_back('[');
  for (std::size_t i = 0; i < fields.size(); ++i) {
    if (i != 0) out.push_back(',');
    out.push_back('[');
    write_string(out, fields[i].first);
    out.push_back(',');
    write(out, fields[i].second);
    out.push_back(']');
  }
  out.push_back(']');
}

void write(std::string& out, const value& v) {
  switch (v.type()) {
    case value::kind::none: out += "null"; return;
    case value::kind::tensor: {
      out += "{\"shape\":[";
      const auto& shape = v.as_tensor().shape;
      for (std::size_t i = 0; i < shape.size(); ++i) {
        if (i != 0) out.push_back(',');
        write_number(out, shape[i]);
      }
      out += "],\"dtype\":\"";
      out += to_string(v.as_tensor().dtype);
      out += '"';
      if (!v.as_tensor().data.empty()) {
        out += ",\"data\":\"";
        detail::append_base64(out, v.as_tensor().data);
        out += '"';
      }
      out += '}';
      return;
    }
    case value::kind::integer:
      out += "{\"int\":";
      write_number(out, v.as_int());
      break;
    case value::kind::floating: {
      out += "{\"float\":";
      const double f = v.as_float();
      if (std::isfinite(f)) {
        write_number(out, f);
      } else {
        write_string(out, std::isnan(f) ? "nan" : f > 0 ? "inf" : "-inf");  // JSON has no non-finite numbers
      }
      break;
    }
    case value::kind::boolean: out += v.as_bool() ? "{\"bool\":true" : "{\"bool\":false"; break;
    case value::kind::string:
      out += "{\"str\":";
      write_string(out, v.as_string());
      break;
    case value::kind::tuple:
      out += "{\"tuple\":";
      write_items(out, v.items());
      break;
    case value::kind::list:
      out += "{\"list\":";
      write_items(out, v.items());
      break;
    case value::kind::dict:
      out += "{\"dict\":";
      write_fields(out, v.fields());
      break;
    case value::kind::structure:
      out += "{\"struct\":";
      write_string(out, v.struct_name());
      out += ",\"fields\":";
      write_fields(out, v.fields());
      break;
  }
  out.push_back('}');
}

}  // namespace

//=== reading ===//

namespace json = boost::json;

namespace detail {

std::string json_path::to_string() const {
  if (parent == nullptr) return "$";
  std::string text = parent->to_string();
  if (!key.empty()) {
    text.push_back('.');
    text += key;
  } else {
    text.push_back('[');  // not `"[" + ...`: GCC 12 -O3 false -Wrestrict (bug 105329)
    text += std::to_string(index);
    text.push_back(']');
  }
  return text;
}

void fail_at(const json_path& at, const std::string& what) { throw format_error(at.to_string() + ": " + what); }

std::string json_kind_of(const json::value& j) {
  switch (j.kind()) {
    case json::kind::null: return "null";
    case json::kind::bool_: return "a boolean";
    case json::kind::int64:
    case json::kind::uint64:
    case json::kind::double_: return "a number";
    case json::kind::string: return "a string";
    case json::kind::array: return "an array";
    case json::kind::object: return "an object";
  }
  return "?";
}

// Numbers as written in records (Boost's serializer would print 1.5 as "1.5E0").
std::string number_text(const json::value& j) {
  if (j.is_int64()) return std::to_string(j.get_int64());
  if (j.is_uint64()) return std::to_string(j.get_uint64());
  char buffer[32];
  const auto [end, ec] = std::to_chars(buffer, buffer + sizeof buffer, j.get_double());
  return std::string(buffer, ec == std::errc{} ? end : buffer);
}

std::string json_quoted(std::string_view s) {
  std::string text;
  append_json_string(text, s);
  return text;
}

//=== keys given twice ===//

// Boost.JSON keeps one of two equal keys of an object silently. A linear scan of the (valid) text: keys compared as
// written (escapes not decoded), pairwise in small objects, sorted in large ones; the path of the object is built
// only when one repeats a key.
std::optional<repeated_json_key> json_key_checker::find(std::string_view text) {
  keys_.clear();
  frames_.clear();
  bool expect_key = false;
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (c == '{' || c == '[') {
      frame f{keys_.size(), c == '{'};
      if (!frames_.empty()) {
        const frame& parent = frames_.back();
        if (parent.object) {
          f.key_in_parent = keys_.empty() ? std::string_view{} : keys_.back();
        } else {
          f.index_in_parent = parent.elements;
        }
      }
      frames_.push_back(f);
      expect_key = c == '{';
    } else if (c == '}' || c == ']') {
      if (frames_.empty()) return std::nullopt;
      const frame f = frames_.back();
      if (f.object) {
        if (auto repeated = repeated_key(f.first_key)) {
          // Appended, not `"\"" + std::string(...)`: GCC 12 at -O3 reports a false -Wrestrict for that form.
          std::string quoted(1, '"');
          quoted.append(*repeated).push_back('"');
          return repeated_json_key{std::move(quoted), path_of_top(), frames_.size(), i + 1};
        }
      }
      frames_.pop_back();
      keys_.resize(f.first_key);
      expect_key = false;
    } else if (c == ',') {
      if (!frames_.empty()) ++frames_.back().elements;
      expect_key = !frames_.empty() && frames_.back().object;
    } else if (c == '"') {
      const std::size_t start = ++i;
      while (i < text.size() && text[i] != '"') i += text[i] == '\\' ? 2 : 1;
      if (expect_key) keys_.push_back(text.substr(start, i - start));
      expect_key = false;
    }
  }
  return std::nullopt;
}

std::optional<std::string_view> json_key_checker::repeated_key(std::size_t first) const {
  const std::size_t n = keys_.size() - first;
  if (n <= 16) {
    for (std::size_t a = first + 1; a < keys_.size(); ++a) {
      for (std::size_t b = first; b < a; ++b) {
        if (keys_[a] == keys_[b]) return keys_[a];
      }
    }
    return std::nullopt;
  }
  std::vector<std::string_view> sorted(keys_.begin() + static_cast<std::ptrdiff_t>(first), keys_.end());
  std::sort(sorted.begin(), sorted.end());
  const auto it = std::adjacent_find(sorted.begin(), sorted.end());
  if (it != sorted.end()) return *it;
  return std::nullopt;
}

std::string json_key_checker::path_of_top() const {
  std::string path = "$";
  for (std::size_t d = 1; d < frames_.size(); ++d) {
    if (frames_[d - 1].object) {
      path.push_back('.');
      path += frames_[d].key_in_parent;
    } else {
      path.push_back('[');
      path += std::to_string(frames_[d].index_in_parent);
      path.push_back(']');
    }
  }
  return path;
}

// The first entry that repeats an earlier entry's name. Few entries (the usual case) are compared pairwise, which
// allocates nothing; many are sorted (n log n: a record with 40,000 keyword arguments). Keyword arguments (the
// record reader), dicts and structs are all checked by it.
std::optional<std::size_t> first_repeated_name(const value_fields& fields) {
  constexpr std::size_t pairwise = 16;
  std::optional<std::size_t> repeat;
  if (fields.size() <= pairwise) {
    for (std::size_t i = 1; i < fields.size() && !repeat; ++i) {
      for (std::size_t k = 0; k < i; ++k) {
        if (fields[i].first == fields[k].first) repeat = i;
      }
    }
    return repeat;
  }
  std::vector<std::size_t> order(fields.size());
  for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
    return fields[a].first != fields[b].first ? fields[a].first < fields[b].first : a < b;
  });
  for (std::size_t i = 1; i < order.size(); ++i) {
    if (fields[order[i]].first == fields[order[i - 1]].first) repeat = std::min(repeat.value_or(order[i]), order[i]);
  }
  return repeat;
}

//=== values: the encoding of value.hpp, with value_from_json's messages ===//

value read_json_value(const json::value& j, const json_path& at);

std::vector<value> read_items(const json::value& j, const json_path& at) {
  if (!j.is_array()) fail_at(at, "expected an array, found " + json_kind_of(j));
  const json::array& a = j.get_array();
  std::vector<value> items;
  items.reserve(a.size());
  for (std::size_t i = 0; i < a.size(); ++i) items.push_back(read_json_value(a[i], at[i]));
  return items;
}

void read_json_fields_into(value_fields& fields, const json::value& j, const json_path& at) {
  if (!j.is_array()) fail_at(at, "expected an array of [name, value] pairs, found " + json_kind_of(j));
  const json::array& a = j.get_array();
  fields.clear();
  fields.reserve(a.size());
  for (std::size_t i = 0; i < a.size(); ++i) {
    const json::array* pair = a[i].if_array();
    if (pair == nullptr || pair->size() != 2 || !(*pair)[0].is_string())
      fail_at(at[i], "expected a [\"name\", value] pair");
    const json::string& name = (*pair)[0].get_string();
    fields.emplace_back(std::string(name.data(), name.size()), read_json_value((*pair)[1], at[i][1]));
  }
}

// The fields of a dict or a struct: names unique within it (a Python dict cannot hold a key twice).
value_fields read_fields(const json::value& j, const json_path& at) {
  value_fields fields;
  read_json_fields_into(fields, j, at);
  if (const auto repeat = first_repeated_name(fields)) {
    fail_at(at[*repeat][0], "duplicate key " + json_quoted(fields[*repeat].first));
  }
  return fields;
}

std::int64_t read_json_integer(const json::value& j, const json_path& at) {
  if (j.is_int64()) return j.get_int64();
  if (j.is_uint64() && j.get_uint64() <= static_cast<std::uint64_t>(INT64_MAX))
    return static_cast<std::int64_t>(j.get_uint64());
  if (j.is_double() && std::trunc(j.get_double()) == j.get_double() && std::abs(j.get_double()) < 9.0e18) {
    return static_cast<std::int64_t>(j.get_double());
  }
  fail_at(at, "expected an integer, found " + (j.is_number() ? number_text(j) : json_kind_of(j)));
}

// Tensor contents, captured on request, in base64 (base64.hpp).
std::vector<std::byte> read_base64(const json::string& text, const json_path& at) {
  if (text.size() % 4 != 0)
    fail_at(at, "base64 text of " + std::to_string(text.size()) + " characters (not a multiple of 4)");
  std::vector<std::byte> bytes;
  if (const auto bad = decode_base64(std::string_view(text.data(), text.size()), bytes)) {
    fail_at(at, "invalid base64 character at offset " + std::to_string(*bad));
  }
  return bytes;
}

void read_tensor_data(tensor_spec& t, const json::value& data, const json_path& at) {
  if (!data.is_string()) fail_at(at / "data", "expected base64 text, found " + json_kind_of(data));
  t.data = read_base64(data.get_string(), at / "data");
  std::size_t expected = dtype_size(t.dtype);
  for (const std::int64_t d : t.shape) {
    if (__builtin_mul_overflow(expected, static_cast<std::size_t>(d), &expected)) {
      fail_at(at / "shape", "too many elements for contents to be given");
    }
  }
  if (t.data.size() != expected) {
    fail_at(at / "data", std::to_string(t.data.size()) + " bytes for a tensor that holds " + std::to_string(expected));
  }
}

value read_tensor(const json::object& o, const json_path& at) {
  const json::value* dtype_name = o.if_contains("dtype");
  const json::value* data = o.if_contains("data");
  if (o.size() != (data != nullptr ? 3U : 2U) || dtype_name == nullptr) {
    fail_at(at, "a tensor has the keys \"shape\" and \"dtype\" (and \"data\" when its contents were captured)");
  }
  const json::value& shape = o.at("shape");
  if (!shape.is_array()) fail_at(at / "shape", "expected an array of dimensions, found " + json_kind_of(shape));
  tensor_spec t;
  t.shape.reserve(shape.get_array().size());
  for (std::size_t i = 0; i < shape.get_array().size(); ++i) {
    const std::int64_t d = read_json_integer(shape.get_array()[i], (at / "shape")[i]);
    if (d < 0) fail_at((at / "shape")[i], "negative dimension " + std::to_string(d));
    t.shape.push_back(d);
  }
  if (!dtype_name->is_string()) fail_at(at / "dtype", "expected a string, found " + json_kind_of(*dtype_name));
  const json::string& name = dtype_name->get_string();
  const auto parsed = parse_dtype(std::string_view(name.data(), name.size()));
  if (!parsed) {
    std::string known;  // the names of tensor.hpp's table, in its order
    for (const detail::dtype_info& entry : detail::dtypes) {
      if (!known.empty()) known.push_back(' ');
      known += entry.name;
    }
    fail_at(at / "dtype", "unknown dtype " + json_quoted(name) + " (expected one of " + known + ")");
  }
  t.dtype = *parsed;
  if (data != nullptr) read_tensor_data(t, *data, at);
  return value(std::move(t));
}

value read_struct(const json::object& o, const json_path& at) {
  const json::value* fields = o.if_contains("fields");
  if (o.size() != 2 || fields == nullptr) fail_at(at, "a struct has exactly the keys \"struct\" and \"fields\"");
  const json::value& name = o.at("struct");
  if (!name.is_string()) fail_at(at / "struct", "expected the class name, found " + json_kind_of(name));
  return value::structure(std::string(name.get_string()), read_fields(*fields, at / "fields"));
}

value read_float(const json::value& j, const json_path& at) {
  if (j.is_number()) return value(j.to_number<double>());
  if (j.is_string()) {
    const json::string& s = j.get_string();
    if (s == "nan") return value(std::nan(""));
    if (s == "inf") return value(HUGE_VAL);
    if (s == "-inf") return value(-HUGE_VAL);
  }
  fail_at(at, "expected a number, found " + json_kind_of(j));
}

value read_json_value(const json::value& j, const json_path& at) {
  if (j.is_null()) return {};
  const json::object* o = j.if_object();
  if (o == nullptr) fail_at(at, "expected null or an object, found " + json_kind_of(j));
  if (o->contains("shape")) return read_tensor(*o, at);
  if (o->contains("struct")) return read_struct(*o, at);
  if (o->size() != 1)
    fail_at(at, "expected one key (int, float, bool, str, tuple, list, dict), found " + std::to_string(o->size()));
  const json::key_value_pair& entry = *o->begin();
  const std::string_view key(entry.key().data(), entry.key().size());
  const json::value& inner = entry.value();
  const json_path inner_at = at / key;
  if (key == "int") return value(read_json_integer(inner, inner_at));
  if (key == "float") return read_float(inner, inner_at);
  if (key == "bool") {
    if (!inner.is_bool()) fail_at(inner_at, "expected true or false, found " + json_kind_of(inner));
    return value(inner.get_bool());
  }
  if (key == "str") {
    if (!inner.is_string()) fail_at(inner_at, "expected a string, found " + json_kind_of(inner));
    return value(std::string(inner.get_string()));
  }
  if (key == "tuple") return value::tuple(read_items(inner, inner_at));
  if (key == "list") return value::list(read_items(inner, inner_at));
  if (key == "dict") return value::dict(read_fields(inner, inner_at));
  fail_at(at, "unknown value kind " + json_quoted(key));
}

}  // namespace detail

namespace detail {
// JSON nesting of a value's encoding (objects and arrays, as Boost.JSON's max_depth counts them).
std::size_t json_levels(const value& v) {
  switch (v.type()) {
    case value::kind::none: return 0;
    case value::kind::tensor: return 2;
    case value::kind::integer:
    case value::kind::floating:
    case value::kind::boolean:
    case value::kind::string: return 1;
    case value::kind::tuple:
    case value::kind::list: {
      std::size_t deepest = 0;
      for (const value& item : v.items()) deepest = std::max(deepest, json_levels(item));
      return 2 + deepest;
    }
    case value::kind::dict:
    case value::kind::structure: {
      std::size_t deepest = 0;
      for (const auto& field : v.fields()) deepest = std::max(deepest, json_levels(field.second));
      return 3 + deepest;
    }
  }
  return 0;
}

void check_json_levels(const value& v) {
  if (json_levels(v) > max_value_json_levels) {
    throw format_error("$: the value nests deeper than " + std::to_string(max_value_json_levels) +
                       " JSON levels, more than value_from_json and the record reader accept");
  }
}
}  // namespace detail

std::string to_json(const value& v) {
  detail::check_json_levels(v);
  std::string out;
  write(out, v);
  return out;
}

namespace detail {
void append_json(std::string& out, const value& v) { write(out, v); }
void append_json_string(std::string& out, std::string_view s) { write_string(out, s); }
void append_json_fields(std::string& out, const value_fields& fields) { write_fields(out, fields); }
}  // namespace detail

value value_from_json(std::string_view text) {
  boost::system::error_code ec;
  json::parse_options options;
  options.max_depth = detail::max_value_json_levels;  // what a record can hold below its kwargs pairs
  const json::value j = json::parse(json::string_view(text.data(), text.size()), ec, {}, options);
  if (ec) throw format_error("$: not JSON: " + ec.message());
  if (const auto repeated = detail::json_key_checker().find(text)) {
    throw format_error(repeated->path + ": duplicate key " + repeated->key);
  }
  return detail::read_json_value(j, detail::json_path{});
}

HOOKSCOPE_DETAIL_END_NAMESPACE
