// The value tree's JSON encoding, written by hand so that the text is compact, ordered and prints floats in their
// shortest round-trip form: to_json, and the writers json_writer.hpp declares for the record writer and the
// exporters. (Its reader is value_json_reader.cpp.)
#include "hookscope/value.hpp"

#include "json_writer.hpp"

#include "base64.hpp"
#include "json_reader.hpp"

#include <algorithm>
#include <charconv>
#include <cstddef>
#include <cstdint>
#include <cmath>
#include <span>
#include <string>
#include <string_view>
#include <system_error>
#include <type_traits>
#include <utility>
#include <vector>

HOOKSCOPE_DETAIL_BEGIN_NAMESPACE

//=== writing ===//

namespace {

using detail::fixed_text;
using detail::json_counter;
using detail::json_replacing_writer;

// The writers below are templates over their output (json_writer.hpp): a std::string, a json_counter or a
// json_replacing_writer. These are the parts that differ.
void put_base64(std::string& out, std::span<const std::byte> bytes) { detail::append_base64(out, bytes); }
void put_base64(json_replacing_writer& out, std::span<const std::byte> bytes) {
  detail::append_base64(out.text, bytes);
}
void put_base64(json_counter& out, std::span<const std::byte> bytes) { out.add((bytes.size() + 2) / 3 * 4); }
void put_base64(fixed_text& out, std::span<const std::byte> bytes) { detail::append_base64(out, bytes); }

// A JSON string: UTF-8 text as is, control characters escaped. (write_text decides when a string is text.) Runs of
// characters that need no escape are appended whole.
template <class Out>
void write_string(Out& out, std::string_view s) {
  out.push_back('"');
  const char* run = s.data();  // the start of the characters not written yet
  const char* const end = s.data() + s.size();
  for (const char* p = run; p != end; ++p) {
    const char c = *p;
    if (static_cast<unsigned char>(c) >= 0x20 && c != '"' && c != '\\') continue;
    out.append(run, p);
    run = p + 1;
    switch (c) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\n': out += "\\n"; break;
      case '\r': out += "\\r"; break;
      case '\t': out += "\\t"; break;
      default: {
        static constexpr char hex[] = "0123456789abcdef";
        out += "\\u00";
        out.push_back(hex[(c >> 4) & 0xf]);
        out.push_back(hex[c & 0xf]);
      }
    }
  }
  out.append(run, end);
  out.push_back('"');
}

// Program-supplied text (a str, a dict key, a name): a JSON string when it is UTF-8, else {"base64":"..."} in its
// place, which every JSON parser accepts and which reads back to the same bytes (JSON's \u escapes carry code
// points, not bytes, and strict parsers refuse the lone surrogates other encodings of bytes would need).
template <class Out>
void write_text(Out& out, std::string_view s) {
  if (detail::is_utf8(s)) {
    write_string(out, s);
    return;
  }
  out += "{\"base64\":\"";
  put_base64(out, std::as_bytes(std::span<const char>(s.data(), s.size())));
  out += "\"}";
}

template <class Out, class Number>
void write_number(Out& out, Number n) {
  char buffer[32];
  const auto [end, ec] = std::to_chars(buffer, buffer + sizeof buffer, n);
  out.append(buffer, ec == std::errc{} ? end : buffer);
}

template <class Out>
void write(Out& out, const value& v);

template <class Out>
void write_items(Out& out, const std::vector<value>& items) {
  out.push_back('[');
  for (std::size_t i = 0; i < items.size(); ++i) {
    if (i != 0) out.push_back(',');
    write(out, items[i]);
  }
  out.push_back(']');
}

template <class Out>
void write_fields(Out& out, const value_fields& fields) {
  out.push_back('[');
  for (std::size_t i = 0; i < fields.size(); ++i) {
    if (i != 0) out.push_back(',');
    out.push_back('[');
    write_text(out, fields[i].first);
    out.push_back(',');
    write(out, fields[i].second);
    out.push_back(']');
  }
  out.push_back(']');
}

// Leaves the object open, as the other kinds' cases do.
template <class Out>
void write_opaque(Out& out, const opaque_leaf& leaf) {
  out += "{\"opaque\":";
  write_text(out, leaf.type_name);
  if (leaf.depth_limited) out += ",\"depth_limited\":true";
  if (leaf.address) {
    char digits[2 + 16];
    const auto end = std::to_chars(digits, digits + sizeof digits, *leaf.address, 16).ptr;
    out += ",\"address\":\"0x";
    out.append(digits, end);
    out += "\"";
  }
  if (leaf.unreadable) out += ",\"unreadable\":true";
  if (leaf.length) {
    out += ",\"length\":";
    write_number(out, *leaf.length);
  }
  if (leaf.too_large) out += ",\"too_large\":true";
}

// Leaves the object open for the contents' keys.
template <class Out>
void write_shape_and_dtype(Out& out, std::span<const std::int64_t> shape, dtype type) {
  out += "{\"shape\":[";
  for (std::size_t i = 0; i < shape.size(); ++i) {
    if (i != 0) out.push_back(',');
    write_number(out, shape[i]);
  }
  out += "],\"dtype\":\"";
  out += to_string(type);
  out += "\"";
}

template <class Out>
void write_tensor(Out& out, const tensor_spec& t) {
  write_shape_and_dtype(out, t.shape, t.dtype);
  if (!t.data.empty()) {
    out += ",\"data\":\"";
    put_base64(out, t.data);
    out += "\"";
  }
  if (t.data_too_large) out += ",\"data_too_large\":true";
  out.push_back('}');
}

// The scalars' objects, left open as write_node's cases leave them.
template <class Out>
void write_integer(Out& out, std::int64_t i) {
  out += "{\"int\":";
  write_number(out, i);
}
template <class Out>
void write_floating(Out& out, double f) {
  out += "{\"float\":";
  if (f == 0.0 && std::signbit(f)) {
    out += "-0.0";  // "-0" would read back as the integer 0
  } else if (std::isfinite(f)) {
    write_number(out, f);
  } else {
    write_string(out, std::isnan(f) ? "nan" : f > 0 ? "inf" : "-inf");  // JSON has no non-finite numbers
  }
}
template <class Out>
void write_str(Out& out, std::string_view s) {
  out += "{\"str\":";
  write_text(out, s);
}

// One node's encoding: a visitor over the kinds. Each writes its whole object (none is `null`).
template <class Out>
struct node_writer {
  Out& out;
  void operator()(value_node::none) { out += "null"; }
  void operator()(value_node::tensor t) { write_tensor(out, t.spec); }
  void operator()(value_node::integer i) {
    write_integer(out, i.number);
    out.push_back('}');
  }
  void operator()(value_node::floating f) {
    write_floating(out, f.number);
    out.push_back('}');
  }
  void operator()(value_node::boolean b) { out += b.truth ? "{\"bool\":true}" : "{\"bool\":false}"; }
  void operator()(value_node::string s) {
    write_str(out, s.text);
    out.push_back('}');
  }
  void operator()(value_node::bytes b) {
    out += "{\"bytes\":\"";
    put_base64(out, b.raw);
    out += "\"}";
  }
  void operator()(value_node::opaque o) {
    write_opaque(out, o.leaf);
    out.push_back('}');
  }
  void operator()(value_node::variant v) {
    out += "{\"variant\":";
    write_number(out, v.index);
    out += ",\"value\":";
    write(out, v.alternative);
    out.push_back('}');
  }
  void operator()(value_node::tuple t) {
    out += "{\"tuple\":";
    write_items(out, t.items);
    out.push_back('}');
  }
  void operator()(value_node::list l) {
    out += "{\"list\":";
    write_items(out, l.items);
    out.push_back('}');
  }
  void operator()(value_node::dict d) {
    out += "{\"dict\":";
    write_fields(out, d.entries);
    out.push_back('}');
  }
  void operator()(value_node::structure s) {
    out += "{\"struct\":";
    write_text(out, s.name);
    out += ",\"fields\":";
    write_fields(out, s.fields);
    out.push_back('}');
  }
};

template <class Out>
void write_node(Out& out, const value& v) {
  visit(v, node_writer<Out>{out});
}

template <class Out>
void write(Out& out, const value& v) {
  if constexpr (std::is_same_v<Out, json_counter>) {
    const std::size_t before = out.size();
    write_node(out, v);
    out.counted(v, out.size() - before);
  } else if constexpr (std::is_same_v<Out, json_replacing_writer>) {
    const auto it = out.replacements.find(&v);
    if (it == out.replacements.end()) {
      write_node(out.text, v);  // nothing replaced below: the plain writer, without looking anything up
    } else if (it->second != nullptr) {
      write_node(out.text, *it->second);
    } else {
      write_node(out, v);
    }
  } else {
    write_node(out, v);
  }
}

}  // namespace

namespace detail {

// A strict UTF-8 check (RFC 3629: no overlong forms, no surrogates, nothing above U+10FFFF), as Boost.JSON's
// parser applies it: what passes is written as a JSON string.
bool is_utf8(std::string_view s) noexcept {
  const auto* p = reinterpret_cast<const unsigned char*>(s.data());
  const auto* const end = p + s.size();
  while (p != end) {
    // ASCII eight bytes at a time: most text is, and the writers ask of each string (record_fit.hpp counts first).
    std::uint64_t word = 0;
    while (end - p >= 8 && (std::memcpy(&word, p, 8), (word & 0x8080808080808080U) == 0)) p += 8;
    if (p == end) break;
    const unsigned char c = *p;
    if (c < 0x80) {
      ++p;
      continue;
    }
    std::size_t n = 0;
    unsigned char low = 0x80;
    unsigned char high = 0xbf;  // the bounds of the second byte
    if (c >= 0xc2 && c <= 0xdf) {
      n = 1;
    } else if (c >= 0xe0 && c <= 0xef) {
      n = 2;
      if (c == 0xe0) low = 0xa0;   // overlong
      if (c == 0xed) high = 0x9f;  // surrogates
    } else if (c >= 0xf0 && c <= 0xf4) {
      n = 3;
      if (c == 0xf0) low = 0x90;   // overlong
      if (c == 0xf4) high = 0x8f;  // above U+10FFFF
    } else {
      return false;
    }
    if (static_cast<std::size_t>(end - p) <= n) return false;
    if (p[1] < low || p[1] > high) return false;
    for (std::size_t k = 2; k <= n; ++k) {
      if (p[k] < 0x80 || p[k] > 0xbf) return false;
    }
    p += n + 1;
  }
  return true;
}

}  // namespace detail

namespace detail {
// JSON nesting of a value's encoding (objects and arrays, as Boost.JSON's max_depth counts them).
std::size_t json_levels(const value& v) {
  const auto deepest_item = [](const std::vector<value>& items) {
    std::size_t deepest = 0;
    for (const value& item : items) deepest = std::max(deepest, json_levels(item));
    return 2 + deepest;
  };
  const auto deepest_field = [](const value_fields& fields) {
    std::size_t deepest = 0;
    for (const auto& field : fields) {
      deepest = std::max({deepest, json_levels(field.second), detail::is_utf8(field.first) ? std::size_t{0} : 1});
    }
    return fields.empty() ? std::size_t{2} : 3 + deepest;  // the object, its array, and [name, V] pairs if any
  };
  const auto text = [](std::string_view s) { return detail::is_utf8(s) ? std::size_t{1} : std::size_t{2}; };
  return visit(
      v, value_handlers{
             [](value_node::none) { return std::size_t{0}; }, [](value_node::tensor) { return std::size_t{2}; },
             [](value_node::integer) { return std::size_t{1}; }, [](value_node::floating) { return std::size_t{1}; },
             [](value_node::boolean) { return std::size_t{1}; }, [](value_node::bytes) { return std::size_t{1}; },
             [&](value_node::string s) { return text(s.text); },
             [&](value_node::opaque o) { return text(o.leaf.type_name); },
             [](value_node::variant x) { return 1 + json_levels(x.alternative); },
             [&](value_node::tuple t) { return deepest_item(t.items); },
             [&](value_node::list l) { return deepest_item(l.items); },
             [&](value_node::dict d) { return deepest_field(d.entries); },
             [&](value_node::structure s) { return deepest_field(s.fields); }});
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
template <class Out>
void append_json(Out& out, const value& v) {
  write(out, v);
}
template <class Out>
void append_json_text(Out& out, std::string_view s) {
  write_text(out, s);
}
template <class Out>
void append_json_fields(Out& out, const value_fields& fields) {
  write_fields(out, fields);
}
template void append_json(std::string&, const value&);
template void append_json(json_counter&, const value&);
template void append_json(json_replacing_writer&, const value&);
template void append_json_text(json_counter&, std::string_view);
template void append_json_text(json_replacing_writer&, std::string_view);
template void append_json_fields(std::string&, const value_fields&);
template void append_json_fields(json_counter&, const value_fields&);
template void append_json_fields(json_replacing_writer&, const value_fields&);

template <class Out>
void append_json_integer(Out& out, std::int64_t i) {
  write_integer(out, i);
  out.push_back('}');
}
template <class Out>
void append_json_floating(Out& out, double f) {
  write_floating(out, f);
  out.push_back('}');
}
template <class Out>
void append_json_boolean(Out& out, bool b) {
  out += b ? "{\"bool\":true}" : "{\"bool\":false}";
}
template <class Out>
void append_json_str(Out& out, std::string_view s) {
  write_str(out, s);
  out.push_back('}');
}
template <class Out>
void append_json_tensor(Out& out, std::span<const std::int64_t> shape, dtype type) {
  write_shape_and_dtype(out, shape, type);
  out.push_back('}');
}
#define HOOKSCOPE_DETAIL_JSON_LEAF_WRITERS(Out)                                 \
  template void append_json_integer(Out&, std::int64_t);                        \
  template void append_json_floating(Out&, double);                             \
  template void append_json_boolean(Out&, bool);                                \
  template void append_json_str(Out&, std::string_view);                        \
  template void append_json_tensor(Out&, std::span<const std::int64_t>, dtype); \
  template void append_json_text(Out&, std::string_view)
HOOKSCOPE_DETAIL_JSON_LEAF_WRITERS(std::string);
HOOKSCOPE_DETAIL_JSON_LEAF_WRITERS(fixed_text);
#undef HOOKSCOPE_DETAIL_JSON_LEAF_WRITERS

void append_json_string(std::string& out, std::string_view s) { write_string(out, s); }

std::size_t json_counter::size_of(const value& v) {
  if (const auto it = remembered_.find(&v); it != remembered_.end()) return it->second;
  json_counter count;
  write(count, v);
  return count.size();
}
}  // namespace detail
HOOKSCOPE_DETAIL_END_NAMESPACE
