// The value tree's JSON encoding: read with Boost.JSON (compiled in boost_json.cpp), written by hand so that the
// text is compact, ordered and prints floats in their shortest round-trip form. The reader of parsed documents
// (json_reader.hpp) is shared with the record reader.
#include "hookscope/value.hpp"

#include "json_writer.hpp"

#include "base64.hpp"
#include "json_reader.hpp"
#include "tensor_contents.hpp"

#include <boost/json.hpp>

#include <algorithm>
#include <charconv>
#include <cstddef>
#include <cstdint>
#include <cmath>
#include <cstring>
#include <limits>
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

//=== exact doubles ===//

namespace {

// The number tokens of a valid JSON text, in document order, one at a time.
class number_tokens {
 public:
  explicit number_tokens(std::string_view text) : text_(text) {}
  std::string_view next() {
    while (pos_ < text_.size()) {
      const char c = text_[pos_];
      if (c == '"') {
        for (++pos_; pos_ < text_.size() && text_[pos_] != '"'; pos_ += text_[pos_] == '\\' ? 2 : 1) {
        }
        ++pos_;
      } else if (c == '-' || (c >= '0' && c <= '9')) {
        const std::size_t start = pos_;
        while (pos_ < text_.size() && std::string_view("0123456789+-.eE").find(text_[pos_]) != std::string_view::npos) {
          ++pos_;
        }
        return text_.substr(start, pos_ - start);
      } else {
        ++pos_;
      }
    }
    return {};
  }

 private:
  std::string_view text_;
  std::size_t pos_ = 0;
};

// Objects are visited in their stored order, which is the text's (Boost.JSON keeps insertion order, and the
// readers refuse a key given twice, the one case where the two would differ).
void exact_doubles(json::value& j, number_tokens& tokens) {
  switch (j.kind()) {
    case json::kind::array:
      for (json::value& item : j.get_array()) exact_doubles(item, tokens);
      return;
    case json::kind::object:
      for (auto& entry : j.get_object()) exact_doubles(entry.value(), tokens);
      return;
    case json::kind::int64:
    case json::kind::uint64: (void)tokens.next(); return;
    case json::kind::double_: {
      const std::string_view token = tokens.next();
      double d = 0;
      const auto [end, ec] = std::from_chars(token.data(), token.data() + token.size(), d);
      // Boost's own reading is within an ulp or so: a token farther off is not this number's (which the key check
      // rules out), and Boost's reading is kept rather than a wrong one.
      const double boost = j.get_double();
      if (ec == std::errc{} && end == token.data() + token.size() &&
          (d == boost || std::abs(d - boost) <= 4 * std::numeric_limits<double>::epsilon() * std::abs(d))) {
        j.emplace_double() = d;
      }
      return;  // out of range (1e999): Boost's infinity stays
    }
    case json::kind::null:
    case json::kind::bool_:
    case json::kind::string: return;
  }
}

bool has_double(const json::value& j) {
  if (j.is_double()) return true;
  if (const json::array* a = j.if_array()) return std::any_of(a->begin(), a->end(), has_double);
  if (const json::object* o = j.if_object()) {
    return std::any_of(o->begin(), o->end(), [](const json::key_value_pair& e) { return has_double(e.value()); });
  }
  return false;
}

}  // namespace

void read_exact_doubles(json::value& doc, std::string_view text) {
  if (!has_double(doc)) return;  // the common record: shapes and ints only
  number_tokens tokens(text);
  exact_doubles(doc, tokens);
}

//=== keys given twice ===//

// Boost.JSON keeps one of two equal keys of an object silently. A linear scan of the (valid) text: keys compared as
// written (escapes not decoded), pairwise in small objects, sorted in large ones; the path of the object is built
// only when one repeats a key.
namespace {

void append_utf8(std::string& out, std::uint32_t code) {
  if (code < 0x80) {
    out.push_back(static_cast<char>(code));
  } else if (code < 0x800) {
    out.push_back(static_cast<char>(0xc0 | (code >> 6)));
    out.push_back(static_cast<char>(0x80 | (code & 0x3f)));
  } else if (code < 0x10000) {
    out.push_back(static_cast<char>(0xe0 | (code >> 12)));
    out.push_back(static_cast<char>(0x80 | ((code >> 6) & 0x3f)));
    out.push_back(static_cast<char>(0x80 | (code & 0x3f)));
  } else {
    out.push_back(static_cast<char>(0xf0 | (code >> 18)));
    out.push_back(static_cast<char>(0x80 | ((code >> 12) & 0x3f)));
    out.push_back(static_cast<char>(0x80 | ((code >> 6) & 0x3f)));
    out.push_back(static_cast<char>(0x80 | (code & 0x3f)));
  }
}

std::uint32_t hex4(std::string_view s, std::size_t at) {
  std::uint32_t code = 0;
  if (at + 4 <= s.size()) (void)std::from_chars(s.data() + at, s.data() + at + 4, code, 16);
  return code;
}

// The text of a JSON string's contents (valid JSON: the parser accepted it), its escapes decoded as a parser does.
std::string decode_json_escapes(std::string_view raw) {
  std::string out;
  for (std::size_t i = 0; i < raw.size(); ++i) {
    if (raw[i] != '\\' || i + 1 >= raw.size()) {
      out.push_back(raw[i]);
      continue;
    }
    const char e = raw[++i];
    switch (e) {
      case 'b': out.push_back('\b'); break;
      case 'f': out.push_back('\f'); break;
      case 'n': out.push_back('\n'); break;
      case 'r': out.push_back('\r'); break;
      case 't': out.push_back('\t'); break;
      case 'u': {
        std::uint32_t code = hex4(raw, i + 1);
        i += 4;
        if (code >= 0xd800 && code < 0xdc00 && i + 6 < raw.size() && raw[i + 1] == '\\' && raw[i + 2] == 'u') {
          const std::uint32_t low = hex4(raw, i + 3);
          if (low >= 0xdc00 && low < 0xe000) {
            code = 0x10000 + ((code - 0xd800) << 10) + (low - 0xdc00);
            i += 6;
          }
        }
        append_utf8(out, code);
        break;
      }
      default: out.push_back(e);  // \" \\ \/
    }
  }
  return out;
}

}  // namespace

std::optional<repeated_json_key> json_key_checker::find(std::string_view text) {
  keys_.clear();
  decoded_.clear();
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
      if (expect_key) {
        const std::string_view key = text.substr(start, i - start);
        if (key.find('\\') == std::string_view::npos) {
          keys_.push_back(key);
        } else {
          keys_.push_back(decoded_.emplace_back(decode_json_escapes(key)));
        }
      }
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

std::vector<std::byte> read_base64(const json::string& text, const json_path& at);

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

std::string read_json_text(const json::value& j, const json_path& at) {
  if (j.is_string()) return std::string(j.get_string());
  const json::object* o = j.if_object();
  const json::value* encoded = o != nullptr && o->size() == 1 ? o->if_contains("base64") : nullptr;
  if (encoded == nullptr || !encoded->is_string()) {
    fail_at(at, "expected a string (or {\"base64\":\"...\"} for bytes that are not UTF-8), found " + json_kind_of(j));
  }
  const std::vector<std::byte> bytes = read_base64(encoded->get_string(), at / "base64");
  return std::string(reinterpret_cast<const char*>(bytes.data()), bytes.size());
}

value read_json_value(const json::value& j, const json_path& at);

std::vector<value> read_items(const json::value& j, const json_path& at) {
  if (!j.is_array()) fail_at(at, "expected an array, found " + json_kind_of(j));
  const json::array& a = j.get_array();
  std::vector<value> items;
  items.reserve(a.size());
  for (std::size_t i = 0; i < a.size(); ++i) items.push_back(read_json_value(a[i], at[i]));
  return items;
}

void read_json_fields_into(value_fields& fields, const json::value& j, const json_path& at, field_names names) {
  if (!j.is_array()) fail_at(at, "expected an array of [name, value] pairs, found " + json_kind_of(j));
  const json::array& a = j.get_array();
  fields.clear();
  fields.reserve(a.size());
  for (std::size_t i = 0; i < a.size(); ++i) {
    const json::array* pair = a[i].if_array();
    if (pair == nullptr || pair->size() != 2 || !((*pair)[0].is_string() || (*pair)[0].is_object())) {
      fail_at(at[i], "expected a [\"name\", value] pair");
    }
    if (names == field_names::parameters && !(*pair)[0].is_string()) {
      fail_at(at[i][0],
              "a keyword argument's name is a string (a parameter's name is text), found " + json_kind_of((*pair)[0]));
    }
    fields.emplace_back(read_json_text((*pair)[0], at[i][0]), read_json_value((*pair)[1], at[i][1]));
  }
}

// The fields of a dict or a struct: names unique within it (a Python dict cannot hold a key twice).
value_fields read_fields(const json::value& j, const json_path& at) {
  value_fields fields;
  read_json_fields_into(fields, j, at, field_names::any_text);
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

std::uint64_t read_json_count(const json::value& j, const json_path& at) {
  // An integral double counts as its integer, as read_json_integer reads one (2^64 is the first double past the range).
  constexpr double past_range = 18446744073709551616.0;
  const bool integral =
      j.is_int64() || j.is_uint64() || (j.is_double() && std::trunc(j.get_double()) == j.get_double());
  if (!integral) fail_at(at, "expected an integer, found " + (j.is_number() ? number_text(j) : json_kind_of(j)));
  const bool below_one = j.is_int64() ? j.get_int64() < 1 : j.is_uint64() ? j.get_uint64() < 1 : j.get_double() < 1;
  if (below_one) fail_at(at, "expected a count >= 1, found " + number_text(j));
  if (j.is_int64()) return static_cast<std::uint64_t>(j.get_int64());
  if (j.is_uint64()) return j.get_uint64();
  if (j.get_double() >= past_range) {
    fail_at(at, "a count larger than " + std::to_string(std::numeric_limits<std::uint64_t>::max()) + " (found " +
                    number_text(j) + ")");
  }
  return static_cast<std::uint64_t>(j.get_double());
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
  const std::optional<std::size_t> expected = contents_bytes(t);
  if (!expected) fail_at(at / "shape", "too many elements for contents to be given");
  if (t.data.size() != *expected) {
    fail_at(at / "data", std::to_string(t.data.size()) + " bytes for a tensor that holds " + std::to_string(*expected));
  }
}

bool read_flag(const json::value& j, const json_path& at) {
  if (!j.is_bool()) fail_at(at, "expected true or false, found " + json_kind_of(j));
  return j.get_bool();
}

value read_tensor(const json::object& o, const json_path& at) {
  const json::value* dtype_name = o.if_contains("dtype");
  const json::value* data = o.if_contains("data");
  const json::value* data_too_large = o.if_contains("data_too_large");
  if (o.size() != 2U + (data != nullptr ? 1U : 0U) + (data_too_large != nullptr ? 1U : 0U) || dtype_name == nullptr) {
    fail_at(at,
            "a tensor has the keys \"shape\" and \"dtype\" (and \"data\" when its contents were captured, or "
            "\"data_too_large\" when they were left out of the record)");
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
  if (data_too_large != nullptr) {
    t.data_too_large = read_flag(*data_too_large, at / "data_too_large");
    if (t.data_too_large && data != nullptr)
      fail_at(at / "data_too_large", "a tensor left without its \"data\" has none");
  }
  if (data != nullptr) read_tensor_data(t, *data, at);
  return value(std::move(t));
}

value read_struct(const json::object& o, const json_path& at) {
  const json::value* fields = o.if_contains("fields");
  if (o.size() != 2 || fields == nullptr) fail_at(at, "a struct has exactly the keys \"struct\" and \"fields\"");
  return value::structure(read_json_text(o.at("struct"), at / "struct"), read_fields(*fields, at / "fields"));
}

// "0x" and lowercase hexadecimal digits without leading zeros: one spelling per address, so that equal leaves are
// equal text.
std::uint64_t read_address(const json::value& j, const json_path& at) {
  const json::string* text = j.if_string();
  const std::string_view digits = text != nullptr && text->size() > 2 && text->starts_with("0x")
                                      ? std::string_view(text->data() + 2, text->size() - 2)
                                      : std::string_view{};
  std::uint64_t address = 0;
  const auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), address, 16);
  const bool canonical = !digits.empty() && digits.size() <= 16 && (digits == "0" || digits.front() != '0') &&
                         digits.find_first_not_of("0123456789abcdef") == std::string_view::npos;
  if (!canonical || ec != std::errc() || end != digits.data() + digits.size()) {
    fail_at(at, "expected an address as \"0x\" and lowercase hexadecimal digits without leading zeros, found " +
                    (text != nullptr ? json_quoted(std::string_view(text->data(), text->size())) : json_kind_of(j)));
  }
  return address;
}

value read_opaque(const json::object& o, const json_path& at) {
  opaque_leaf leaf;
  for (const json::key_value_pair& entry : o) {
    const std::string_view key(entry.key().data(), entry.key().size());
    const json::value& j = entry.value();
    if (key == "opaque") {
      leaf.type_name = read_json_text(j, at / "opaque");
    } else if (key == "depth_limited") {
      leaf.depth_limited = read_flag(j, at / "depth_limited");
    } else if (key == "address") {
      leaf.address = read_address(j, at / "address");
    } else if (key == "unreadable") {
      leaf.unreadable = read_flag(j, at / "unreadable");
    } else if (key == "length") {
      const std::int64_t n = read_json_integer(j, at / "length");
      if (n < 0) fail_at(at / "length", "negative length " + std::to_string(n));
      leaf.length = static_cast<std::uint64_t>(n);
    } else if (key == "too_large") {
      leaf.too_large = read_flag(j, at / "too_large");
    } else {
      fail_at(at,
              "an opaque leaf has the key \"opaque\" and may have \"depth_limited\", \"address\", "
              "\"unreadable\", \"length\" and \"too_large\"; found " +
                  json_quoted(key));
    }
  }
  if (leaf.unreadable && !leaf.address) fail_at(at / "unreadable", "an unreadable leaf has its \"address\"");
  if (leaf.length && !leaf.too_large) fail_at(at / "length", "a \"length\" is given with \"too_large\": true");
  return value::opaque(std::move(leaf));
}

value read_variant(const json::object& o, const json_path& at) {
  const json::value* alternative = o.if_contains("value");
  if (o.size() != 2 || alternative == nullptr) fail_at(at, "a variant has exactly the keys \"variant\" and \"value\"");
  const json::value& index = o.at("variant");
  if (index.is_uint64()) return value::variant(index.get_uint64(), read_json_value(*alternative, at / "value"));
  const std::int64_t signed_index = read_json_integer(index, at / "variant");
  if (signed_index < 0) fail_at(at / "variant", "negative alternative index " + std::to_string(signed_index));
  return value::variant(static_cast<std::size_t>(signed_index), read_json_value(*alternative, at / "value"));
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
  if (o->contains("opaque")) return read_opaque(*o, at);
  if (o->contains("variant")) return read_variant(*o, at);
  if (o->size() != 1) {
    fail_at(at,
            "expected one key (int, float, bool, str, bytes, tuple, list, dict), found " + std::to_string(o->size()));
  }
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
  if (key == "str") return value(read_json_text(inner, inner_at));
  if (key == "bytes") {
    if (!inner.is_string()) fail_at(inner_at, "expected base64 text, found " + json_kind_of(inner));
    const std::vector<std::byte> raw = read_base64(inner.get_string(), inner_at);
    return value::bytes(raw);
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

value value_from_json(std::string_view text) {
  boost::system::error_code ec;
  json::parse_options options;
  options.max_depth = detail::max_value_json_levels;  // what a record can hold below its kwargs pairs
  json::value j = json::parse(json::string_view(text.data(), text.size()), ec, {}, options);
  if (ec) throw format_error("$: not JSON: " + ec.message());
  if (const auto repeated = detail::json_key_checker().find(text)) {
    throw format_error(repeated->path + ": duplicate key " + repeated->key);
  }
  detail::read_exact_doubles(j, text);
  return detail::read_json_value(j, detail::json_path{});
}

HOOKSCOPE_DETAIL_END_NAMESPACE
