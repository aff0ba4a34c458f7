// A string usable as a template argument (observable names, parameter lists), and compile-time helpers on it.
#pragma once

#include "hookscope/config.hpp"

#include <array>
#include <cstddef>
#include <string_view>

HOOKSCOPE_DETAIL_BEGIN_NAMESPACE

/// A string literal as a class-type template argument: `observable<&f, "name", "a, b">`.
template <std::size_t N>
struct fixed_string {
  char data[N]{};
  constexpr fixed_string(const char (&text)[N]) noexcept {  // NOLINT(google-explicit-constructor): literal in
    for (std::size_t i = 0; i < N; ++i) data[i] = text[i];
  }
  constexpr std::string_view view() const noexcept { return {data, N - 1}; }
  constexpr std::size_t size() const noexcept { return N - 1; }
};

namespace detail {

constexpr bool is_space(char c) noexcept { return c == ' ' || c == '\t' || c == '\n'; }

constexpr std::string_view trim(std::string_view s) noexcept {
  while (!s.empty() && is_space(s.front())) s.remove_prefix(1);
  while (!s.empty() && is_space(s.back())) s.remove_suffix(1);
  return s;
}

/// Number of names in a comma-separated list ("" has none).
constexpr std::size_t count_names(std::string_view list) noexcept {
  if (trim(list).empty()) return 0;
  std::size_t n = 1;
  for (char c : list) n += c == ',' ? 1 : 0;
  return n;
}

/// The names of a comma-separated list, trimmed. (Index loops rather than string_view::find, which GCC
/// cannot evaluate at compile time on a template argument's characters under -fsanitize=undefined.)
template <std::size_t N>
constexpr std::array<std::string_view, N> split_names(std::string_view list) noexcept {
  std::array<std::string_view, N> names{};
  std::size_t start = 0;
  std::size_t name = 0;
  for (std::size_t i = 0; i <= list.size() && name < N; ++i) {
    if (i == list.size() || list[i] == ',') {
      names[name++] = trim(list.substr(start, i - start));
      start = i + 1;
    }
  }
  return names;
}

/// Position of `needle` in `text` at or after `from`, or `text.size()`.
constexpr std::size_t find_text(std::string_view text, std::string_view needle, std::size_t from = 0) noexcept {
  for (std::size_t i = from; i + needle.size() <= text.size(); ++i) {
    if (text.substr(i, needle.size()) == needle) return i;
  }
  return text.size();
}

/// Index of `name` in `names`, or N when absent.
template <std::size_t N>
constexpr std::size_t index_of(const std::array<std::string_view, N>& names, std::string_view name) noexcept {
  for (std::size_t i = 0; i < N; ++i) {
    if (names[i] == name) return i;
  }
  return N;
}

/// A readable name of T, read off the compiler's pretty function name (GCC and Clang).
template <class T>
constexpr std::string_view type_name() noexcept {
  const std::string_view p = __PRETTY_FUNCTION__;
  const std::size_t start = find_text(p, "T = ") + 4;
  std::size_t end = start;
  while (end < p.size() && p[end] != ';' && p[end] != ']') ++end;
  return p.substr(start, end - start);
}

}  // namespace detail
HOOKSCOPE_DETAIL_END_NAMESPACE
