// Reading the value encoding from a parsed Boost.JSON document: shared by value_from_json (value_json_reader.cpp) and
// the record reader (records.cpp), so that one set of rules and messages serves both; where a key given twice is
// (json_key_checker.cpp: the parse, json_document.hpp, finds that one is). Internal to the library.
#pragma once

#include "hookscope/value.hpp"

#include <boost/json/value.hpp>

#include <cstddef>
#include <cstdint>
#include <deque>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

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
/// How deep `v`'s encoding nests (objects and arrays, as Boost.JSON's max_depth counts them).
std::size_t json_levels(const value& v);
/// Throws format_error when `v`'s encoding nests deeper than max_value_json_levels.
void check_json_levels(const value& v);

value read_json_value(const boost::json::value& j, const json_path& at);
/// Program-supplied text: a JSON string, or {"base64":"..."} for bytes that are not UTF-8 (json_writer.hpp).
std::string read_json_text(const boost::json::value& j, const json_path& at);
/// [["name", value], ...] into `fields` (cleared first, its capacity reused). Names may repeat here (the caller says
/// what a repeat is: a keyword argument given twice); those of a dict or a struct that read_json_value reads may not.
/// What the names of [name, value] pairs may be: any program-supplied text (dict keys, struct fields: a JSON string
/// or {"base64":...}), or parameters' names (keyword arguments, constants: JSON strings only).
enum class field_names { any_text, parameters };
void read_json_fields_into(value_fields& fields, const boost::json::value& j, const json_path& at, field_names names);
std::int64_t read_json_integer(const boost::json::value& j, const json_path& at);
/// A count of things: an integer from 1 to 2^64 - 1 (an integral double reads as its integer, as above).
std::uint64_t read_json_count(const boost::json::value& j, const json_path& at);

/// A key that an object of a JSON text gives twice.
struct repeated_json_key {
  std::string key;     ///< as written, in quotes
  std::string path;    ///< the JSON path of the object that repeats it ("$" for the outermost)
  std::size_t depth;   ///< 1 for the outermost object
  std::size_t column;  ///< where the object ends (1-based)
};

/// The rule of docs/record_format.md that no JSON object gives a key twice, however it is spelled (`"int"` and
/// `"\u0069nt"` are one key to every JSON parser) (JSON libraries keep one of the two), for
/// the record reader and value_from_json alike. Keeps its buffers from one text to the next.
class json_key_checker {
 public:
  /// The first object of the valid JSON `text` (in the order they end) that gives a key twice, if any.
  std::optional<repeated_json_key> find(std::string_view text);

 private:
  struct frame {
    std::size_t first_key;
    bool object;
    std::size_t elements = 0;          // commas seen at this level (an array's index of its element)
    std::string_view key_in_parent{};  // where it is in its parent: the key, in an object
    std::size_t index_in_parent = 0;   // or the index, in an array
  };
  std::optional<std::string_view> repeated_key(std::size_t first) const;
  std::string path_of_top() const;

  std::vector<std::string_view> keys_;  // into the text, or into decoded_ for a key written with escapes
  std::deque<std::string> decoded_;     // (a deque: its strings stay where they are as it grows)
  std::vector<frame> frames_;
};

/// A key that `keys` (one object's, in order) gives twice, if any: the first that repeats an earlier one when they are
/// few (compared pairwise, nothing allocated), the smallest repeated one when they are many (sorted). What the key
/// scan (json_key_checker) and the one-pass parser (json_document.hpp) both decide.
std::optional<std::string_view> repeated_key_among(std::span<const std::string_view> keys);

/// The first entry of `fields` that repeats an earlier entry's name (a dict's key, a struct's field, a keyword
/// argument).
std::optional<std::size_t> first_repeated_name(const value_fields& fields);

}  // namespace detail
HOOKSCOPE_DETAIL_END_NAMESPACE
