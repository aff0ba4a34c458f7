// Writing the value encoding piece by piece: shared by to_json (value_json.cpp), the record writer (records.cpp) and
// the exporters (shapes/export.cpp), so that larger documents embed values without copying them. Internal to the
// library.
//
// The writers are templates over where the text goes, instantiated in value_json.cpp for three outputs: a
// std::string; a json_counter, which counts the bytes the same code would write (so a size is exact by
// construction); a json_replacing_writer, which writes some values of a tree as others (the record writer's elisions,
// record_fit.hpp).
#pragma once

#include "hookscope/value.hpp"

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>

HOOKSCOPE_DETAIL_BEGIN_NAMESPACE
namespace detail {

/// The bytes a writer would write, counted without writing them. Remembers the size of each value of at least
/// `remember_from` bytes it counts (by address, while the tree is alive), so that asking again costs nothing.
class json_counter {
 public:
  explicit json_counter(std::size_t remember_from = 0) noexcept : remember_from_(remember_from) {}

  void push_back(char) noexcept { ++size_; }
  json_counter& operator+=(std::string_view s) noexcept {
    size_ += s.size();
    return *this;
  }
  void append(const char* first, const char* last) noexcept { size_ += static_cast<std::size_t>(last - first); }
  void add(std::size_t n) noexcept { size_ += n; }
  std::size_t size() const noexcept { return size_; }

  /// Called by the writer after each value it counted.
  void counted(const value& v, std::size_t n) {
    if (remember_from_ != 0 && n >= remember_from_) remembered_.emplace(&v, n);
  }
  /// The size of `v`'s encoding: remembered, or counted now.
  std::size_t size_of(const value& v);

 private:
  std::size_t size_ = 0;
  std::size_t remember_from_;
  std::unordered_map<const value*, std::size_t> remembered_;
};

/// What json_replacing_writer writes for a value: the replacement, or (null) the value itself with replacements
/// below it. A value that is not a key is written as it is, and nothing below it is looked up.
using value_replacements = std::unordered_map<const value*, const value*>;

/// Writes into `text`, the values of `replacements` in place of their keys.
struct json_replacing_writer {
  std::string& text;
  const value_replacements& replacements;

  void push_back(char c) { text.push_back(c); }
  json_replacing_writer& operator+=(std::string_view s) {
    text += s;
    return *this;
  }
  void append(const char* first, const char* last) { text.append(first, last); }
};

template <class Out>
void append_json(Out& out, const value& v);
/// Program-supplied text (a str, a dict key, a name from the program): a JSON string when `s` is UTF-8, else
/// {"base64":"..."} in its place (docs/record_format.md); read back by read_json_text.
template <class Out>
void append_json_text(Out& out, std::string_view s);
template <class Out>
void append_json_fields(Out& out, const value_fields& fields);  // [["name",V],...]

extern template void append_json(std::string&, const value&);
extern template void append_json(json_counter&, const value&);
extern template void append_json(json_replacing_writer&, const value&);
extern template void append_json_text(std::string&, std::string_view);
extern template void append_json_text(json_counter&, std::string_view);
extern template void append_json_text(json_replacing_writer&, std::string_view);
extern template void append_json_fields(std::string&, const value_fields&);
extern template void append_json_fields(json_counter&, const value_fields&);
extern template void append_json_fields(json_replacing_writer&, const value_fields&);

/// True when `s` is UTF-8 (strictly: no overlong forms, no surrogates): what the writers write as a JSON string.
bool is_utf8(std::string_view s) noexcept;
/// `s` as a JSON string (UTF-8 text: a name the library makes, a format's keyword).
void append_json_string(std::string& out, std::string_view s);

}  // namespace detail
HOOKSCOPE_DETAIL_END_NAMESPACE
