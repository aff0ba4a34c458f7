// The value tree's JSON encoding, read: value_from_json, parsed with Boost.JSON (compiled in boost_json.cpp), and the
// reader of parsed documents (json_reader.hpp) it shares with the record reader. (Its writer is value_json_writer.cpp;
// the text is parsed once by json_document.hpp, which applies the rules Boost.JSON does not.)
#include "hookscope/value.hpp"

#include "json_document.hpp"
#include "json_reader.hpp"
#include "json_writer.hpp"

#include "base64.hpp"
#include "tensor_contents.hpp"

#include <boost/json.hpp>

#include <charconv>
#include <cstddef>
#include <cstdint>
#include <cmath>
#include <cstring>
#include <iterator>
#include <limits>
#include <span>
#include <string>
#include <string_view>
#include <system_error>
#include <utility>
#include <vector>

HOOKSCOPE_DETAIL_BEGIN_NAMESPACE

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
//=== values: the encoding of value.hpp, with value_from_json's messages ===//

std::vector<std::byte> read_base64(const json::string& text, const json_path& at);

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
  // The key names a kind (to_string's names, in the enum's order); a switch without default, so that -Wswitch names
  // a kind added to the tree until its reading is written here.
  static constexpr std::string_view kind_keys[] = {"none", "tensor", "int",    "float", "bool",   "str",    "tuple",
                                                   "list", "dict",   "struct", "bytes", "opaque", "variant"};
  std::size_t k = 0;
  while (k < std::size(kind_keys) && kind_keys[k] != key) ++k;
  if (k == std::size(kind_keys)) fail_at(at, "unknown value kind " + json_quoted(key));
  switch (static_cast<value::kind>(k)) {
    case value::kind::integer: return value(read_json_integer(inner, inner_at));
    case value::kind::floating: return read_float(inner, inner_at);
    case value::kind::boolean:
      if (!inner.is_bool()) fail_at(inner_at, "expected true or false, found " + json_kind_of(inner));
      return value(inner.get_bool());
    case value::kind::string: return value(read_json_text(inner, inner_at));
    case value::kind::bytes: {
      if (!inner.is_string()) fail_at(inner_at, "expected base64 text, found " + json_kind_of(inner));
      const std::vector<std::byte> raw = read_base64(inner.get_string(), inner_at);
      return value::bytes(raw);
    }
    case value::kind::tuple: return value::tuple(read_items(inner, inner_at));
    case value::kind::list: return value::list(read_items(inner, inner_at));
    case value::kind::dict: return value::dict(read_fields(inner, inner_at));
    // Not one-key objects: null, and the objects read above by their first key (a struct, an opaque leaf and a
    // variant never reach here); "none" and "tensor" are no keys of the encoding.
    case value::kind::none:
    case value::kind::tensor:
    case value::kind::structure:
    case value::kind::opaque:
    case value::kind::variant: break;
  }
  fail_at(at, "unknown value kind " + json_quoted(key));
}

}  // namespace detail

value value_from_json(std::string_view text) {
  boost::system::error_code ec;
  json::parse_options options;
  options.max_depth = detail::max_value_json_levels;  // what a record can hold below its kwargs pairs
  detail::json_document_parser parser(options);
  (void)parser.write(text, ec);
  if (ec) throw format_error("$: not JSON: " + ec.message());
  if (parser.repeated_key()) {
    const auto repeated = detail::json_key_checker().find(text);
    throw format_error(repeated ? repeated->path + ": duplicate key " + repeated->key : "$: a key given twice");
  }
  return detail::read_json_value(parser.release(), detail::json_path{});
}
HOOKSCOPE_DETAIL_END_NAMESPACE
