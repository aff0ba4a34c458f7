// Reading the value encoding from a parsed Boost.JSON document: shared by value_from_json (value_json.cpp) and the
// record reader (records.cpp), so that one set of rules and messages serves both. Internal to the library.
#pragma once

#include "hookscope/value.hpp"

#include <boost/json/value.hpp>

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

HOOKSCOPE_DETAIL_BEGIN_NAMESPACE
namespace detail {

// One step from the root "$" down to the JSON value being read; lives on the reader's stack, so paths for
// error messages cost nothing until something fails.
struct json_path {
  const json_path* parent = nullptr;  // null: this is the root
  std::string_view key;               // ".key" when not empty, else "[index]"
  std::size_t index = 0;

  json_path operator/(std::string_view k) const { return {this, k, 0}; }
  json_path operator[](std::size_t i) const { return {this, {}, i}; }
  std::string to_string() const;
};

/// Throws format_error("<path>: <what>").
[[noreturn]] void fail_at(const json_path& at, const std::string& what);
/// "null", "a boolean", "a number", "a string", "an array", "an object".
std::string json_kind_of(const boost::json::value& j);
/// `s` as a JSON string literal, for messages.
std::string json_quoted(std::string_view s);

/// How deep a value's JSON may nest (objects and arrays): what a record line (at most 128 levels) holds below its
/// record object, the kwargs array and a pair. value_from_json reads this deep and to_json writes no deeper, so
/// that whatever one writes, the other and the record reader read back.
inline constexpr std::size_t max_value_json_levels = 125;
/// Throws format_error when `v`'s encoding nests deeper than max_value_json_levels.
void check_json_levels(const value& v);

value read_json_value(const boost::json::value& j, const json_path& at);
/// [["name", value], ...] into `fields` (cleared first, its capacity reused).
void read_json_fields_into(value_fields& fields, const boost::json::value& j, const json_path& at);
std::int64_t read_json_integer(const boost::json::value& j, const json_path& at);

}  // namespace detail
HOOKSCOPE_DETAIL_END_NAMESPACE
