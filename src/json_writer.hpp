// Writing the value encoding piece by piece: shared by to_json (value_json_writer.cpp), the record writer
// (record_line_writer.cpp) and the exporters (shapes/export.cpp), so that larger documents embed values without copying them.
// Internal to the library.
//
// The writers are templates over where the text goes, instantiated in value_json_writer.cpp for three outputs: a
// std::string; a json_counter, which counts the bytes the same code would write (so a size is exact by
// construction); a json_replacing_writer, which writes some values of a tree as others (the record writer's elisions,
// record_fit.hpp).
#pragma once

#include "hookscope/value.hpp"

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <span>
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

/// Writes into a fixed buffer and never allocates: the record writer's output in a fatal signal's handler. Past its
/// capacity it keeps counting without writing (overflowed()).
class fixed_text {
 public:
  fixed_text(char* data, std::size_t capacity) noexcept : data_(data), capacity_(capacity) {}
  [[gnu::always_inline]] void push_back(char c) noexcept {
    if (size_ < capacity_) data_[size_] = c;
    ++size_;
  }
  [[gnu::always_inline]] void append(const char* first, const char* last) noexcept {
    const auto n = static_cast<std::size_t>(last - first);
    // Hides which object `first` points into: once the copy is split by length, GCC's -Warray-bounds sees the branch
    // for long pieces read past a caller's 24-byte digits, which only an n the caller cannot have would do.
    asm("" : "+r"(first));
    if (size_ + n <= capacity_) {
      if (n <= 32) {
        copy_short(data_ + size_, first, n);  // most pieces of a line: no call
      } else {
        std::memcpy(data_ + size_, first, n);  // async-signal-safe
      }
    }
    size_ += n;
  }
  [[gnu::always_inline]] fixed_text& operator+=(std::string_view s) noexcept {
    append(s.data(), s.data() + s.size());
    return *this;
  }
  std::size_t size() const noexcept { return size_; }
  bool overflowed() const noexcept { return size_ > capacity_; }
  const char* data() const noexcept { return data_; }
  void clear() noexcept { size_ = 0; }

 private:
  // n <= 32 bytes as two overlapping copies of a fixed width: a few moves where a loop or a call costs dozens.
  [[gnu::always_inline]] static void copy_short(char* to, const char* from, std::size_t n) noexcept {
    const auto both_ends = [&]<std::size_t Width>() {
      char head[Width], tail[Width];
      std::memcpy(head, from, Width);
      std::memcpy(tail, from + n - Width, Width);
      std::memcpy(to, head, Width);
      std::memcpy(to + n - Width, tail, Width);
    };
    if (n >= 16) {
      both_ends.template operator()<16>();
    } else if (n >= 8) {
      both_ends.template operator()<8>();
    } else if (n >= 4) {
      both_ends.template operator()<4>();
    } else if (n != 0) {
      to[0] = from[0];
      to[n / 2] = from[n / 2];
      to[n - 1] = from[n - 1];
    }
  }

  char* data_;
  std::size_t capacity_;
  std::size_t size_ = 0;
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
extern template void append_json_text(json_counter&, std::string_view);
extern template void append_json_text(json_replacing_writer&, std::string_view);
extern template void append_json_fields(std::string&, const value_fields&);
extern template void append_json_fields(json_counter&, const value_fields&);
extern template void append_json_fields(json_replacing_writer&, const value_fields&);

/// The record format's leaves, each as the value tree's writer writes it: `{"int":N}`, `{"float":X}` (-0.0, "nan",
/// "inf" and "-inf" spelled as the reader wants them), `{"bool":B}`, `{"str":S}` (append_json_text's rule) and a
/// tensor without contents (`{"shape":[...],"dtype":"..."}`). Instantiated for std::string and fixed_text: the
/// record writer formats calls copied in binary form with them (src/environment/record_lines.cpp).
template <class Out>
void append_json_integer(Out& out, std::int64_t i);
template <class Out>
void append_json_floating(Out& out, double f);
template <class Out>
void append_json_boolean(Out& out, bool b);
template <class Out>
void append_json_str(Out& out, std::string_view s);
template <class Out>
void append_json_tensor(Out& out, std::span<const std::int64_t> shape, dtype type);
#define HOOKSCOPE_DETAIL_JSON_LEAF_WRITERS(Out)                                        \
  extern template void append_json_integer(Out&, std::int64_t);                        \
  extern template void append_json_floating(Out&, double);                             \
  extern template void append_json_boolean(Out&, bool);                                \
  extern template void append_json_str(Out&, std::string_view);                        \
  extern template void append_json_tensor(Out&, std::span<const std::int64_t>, dtype); \
  extern template void append_json_text(Out&, std::string_view)
HOOKSCOPE_DETAIL_JSON_LEAF_WRITERS(std::string);
HOOKSCOPE_DETAIL_JSON_LEAF_WRITERS(fixed_text);
#undef HOOKSCOPE_DETAIL_JSON_LEAF_WRITERS

/// True when `s` is UTF-8 (strictly: no overlong forms, no surrogates): what the writers write as a JSON string.
bool is_utf8(std::string_view s) noexcept;
/// `s` as a JSON string (UTF-8 text: a name the library makes, a format's keyword).
void append_json_string(std::string& out, std::string_view s);

}  // namespace detail
HOOKSCOPE_DETAIL_END_NAMESPACE
