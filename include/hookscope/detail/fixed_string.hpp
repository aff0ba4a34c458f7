// A string usable as a template argument (observable names, parameter lists), and compile-time helpers on it.
#pragma once

#include "hookscope/detail/config.hpp"
#include "hookscope/detail/capture_traits.hpp"

#include <array>
#include <cstddef>
#include <string_view>
#include <utility>

HOOKSCOPE_DETAIL_BEGIN_NAMESPACE

/// A string literal as a class-type template argument: `observable<&f, "name", "a, b">`.
template <std::size_t N>
struct fixed_string {
  char data[N]{};
  constexpr fixed_string(const char (&text)[N]) noexcept  // implicit: a string literal is a template argument
      : fixed_string(text, std::make_index_sequence<N>{}) {}
  constexpr std::string_view view() const noexcept { return {data, N - 1}; }
  constexpr std::size_t size() const noexcept { return N - 1; }

 private:
  // Copied by a pack expansion rather than a loop: every annotation converts three literals at compile time,
  // and the constant evaluator pays for each statement a loop runs.
  template <std::size_t... I>
  constexpr fixed_string(const char (&text)[N], std::index_sequence<I...>) noexcept : data{text[I]...} {}
};

namespace detail {

constexpr bool is_space(char c) noexcept { return c == ' ' || c == '\t' || c == '\n'; }
constexpr bool is_identifier_char(char c) noexcept {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
}

constexpr std::string_view trim(std::string_view s) noexcept {
  while (!s.empty() && is_space(s.front())) s.remove_prefix(1);
  while (!s.empty() && is_space(s.back())) s.remove_suffix(1);
  return s;
}

/// Where the default written after a parameter's name ends in an annotation's list p[0, n), from `i` (just after its
/// '='): the comma that ends the parameter, or n. Commas inside the default's parentheses, brackets, braces, angle
/// brackets and literals do not count (`b = std::pair<int, int>{1, 2}`, `sep = ","`, `f = (x < y)`). Inside
/// parentheses, brackets or braces a '<' is never looked at (its commas are enclosed already): only at the top level
/// can it open a template's argument list, and there `<<`, `<=` and `>>` with nothing open are operators. Digit
/// separators (`1'000`) and raw strings (`R"(...)"`) are skipped whole.
constexpr std::size_t skip_default(const char* p, std::size_t i, std::size_t n) noexcept {
  std::size_t enclosing = 0;  // ( [ {
  std::size_t angles = 0;     // < at the top level
  const auto is_digit = [](char c) {
    return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
  };
  for (; i < n; ++i) {
    const char c = p[i];
    if (c == 'R' && i + 1 < n && p[i + 1] == '"' &&
        (i == 0 || !is_identifier_char(p[i - 1]) || p[i - 1] == 'u' || p[i - 1] == 'U' || p[i - 1] == 'L' ||
         p[i - 1] == '8')) {
      std::size_t open = i + 2;  // R"delim( ... )delim"
      while (open < n && p[open] != '(') ++open;
      const std::size_t delim = open - (i + 2);
      for (i = open + 1; i < n; ++i) {
        if (p[i] != ')' || i + delim + 1 >= n || p[i + delim + 1] != '"') continue;
        bool same = true;
        for (std::size_t k = 0; k < delim; ++k) same = same && p[i + 1 + k] == p[open - delim + k];
        if (same) {
          i += delim + 1;
          break;
        }
      }
    } else if (c == '\'' && i > 0 && is_digit(p[i - 1]) && i + 1 < n && is_digit(p[i + 1])) {
      continue;  // a digit separator
    } else if (c == '"' || c == '\'') {
      for (++i; i < n && p[i] != c; ++i) {
        if (p[i] == '\\') ++i;
      }
    } else if (c == '(' || c == '[' || c == '{') {
      ++enclosing;
    } else if ((c == ')' || c == ']' || c == '}') && enclosing > 0) {
      --enclosing;
    } else if (enclosing == 0 && c == '<') {
      if (i + 1 < n && (p[i + 1] == '<' || p[i + 1] == '=') && angles == 0) {
        ++i;  // << or <= as an operator
      } else {
        ++angles;
      }
    } else if (enclosing == 0 && c == '>' && angles > 0) {
      --angles;
    } else if (c == ',' && enclosing == 0 && angles == 0) {
      return i;
    }
  }
  return n;
}

/// A parameter as written in an annotation's list (trimmed, its default left out), without the `*` that asks for its
/// pointee to be captured (`*path`, `* path`): its name.
constexpr std::string_view unmarked(std::string_view written) noexcept {
  if (!written.empty() && written.front() == '*') return trim(written.substr(1));
  return written;
}

/// The parameters of a comma-separated list as written, trimmed; a parameter written with its default (`b = 3`,
/// copied from a declaration) is what precedes the '='. (Index loops rather than string_view::find, which GCC
/// cannot evaluate at compile time on a template argument's characters under -fsanitize=undefined.)
template <std::size_t N>
constexpr std::array<std::string_view, N> split_written(std::string_view list) noexcept {
  std::array<std::string_view, N> written{};
  const std::size_t n = list.size();
  std::size_t start = 0;
  std::size_t name = 0;
  for (std::size_t i = 0; i <= n && name < N; ++i) {
    if (i == n || list[i] == ',') {
      written[name++] = trim(list.substr(start, i - start));
      start = i + 1;
    } else if (list[i] == '=') {
      written[name++] = trim(list.substr(start, i - start));
      i = skip_default(list.data(), i + 1, n);
      start = i + 1;
    }
  }
  return written;
}

/// The names of a comma-separated parameter list (a `*` before one left out).
template <std::size_t N>
constexpr std::array<std::string_view, N> split_names(std::string_view list) noexcept {
  std::array<std::string_view, N> names = split_written<N>(list);
  for (std::string_view& name : names) name = unmarked(name);
  return names;
}

/// Which parameters of a list are written with a `*` before their name: their pointee is captured (a C string for
/// a `char` pointer), read without faulting.
template <std::size_t N>
constexpr std::array<bool, N> split_pointee_marks(std::string_view list) noexcept {
  const std::array<std::string_view, N> written = split_written<N>(list);
  std::array<bool, N> marks{};
  for (std::size_t i = 0; i < N; ++i) marks[i] = !written[i].empty() && written[i].front() == '*';
  return marks;
}

/// The names of a parameter list given as a template argument, as an array that lives in static storage.
template <fixed_string List, std::size_t N>
inline constexpr std::array<std::string_view, N> names_of = split_names<N>(List.view());

/// Which parameters of a list given as a template argument are marked with a `*` (split_pointee_marks).
template <fixed_string List, std::size_t N>
inline constexpr std::array<bool, N> pointee_marks_of = split_pointee_marks<N>(List.view());

/// Whether a parameter list has a `*` outside its defaults (a cheap test before pointee_marks_of).
constexpr bool has_pointee_mark(std::string_view list) noexcept {
  const char* p = list.data();
  const std::size_t n = list.size();
  for (std::size_t i = 0; i < n; ++i) {
    if (p[i] == '*') return true;
    if (p[i] == '=') i = skip_default(p, i + 1, n);
  }
  return false;
}

/// Whether every parameter marked `*` in `Params` (a list for the parameter types A...) is a pointee_parameter: the
/// annotation's check, which asks nothing more of a list without a `*`.
template <fixed_string Params, class... A>
consteval bool pointee_marks_fit() {
  if constexpr (!has_pointee_mark(Params.view())) {
    return true;
  } else {
    return []<std::size_t... I>(std::index_sequence<I...>) {
      return ((!pointee_marks_of<Params, sizeof...(A)>[I] || pointee_parameter<A>)&&...);
    }
    (std::index_sequence_for<A...>{});
  }
}

/// Index of `name` in `names`, or N when absent.
template <std::size_t N>
constexpr std::size_t index_of(const std::array<std::string_view, N>& names, std::string_view name) noexcept {
  for (std::size_t i = 0; i < N; ++i) {
    if (names[i] == name) return i;
  }
  return N;
}

/// What is wrong with an annotation's parameter names, if anything (one reason, the first found).
enum class names_problem { none, not_identifier, empty, duplicate, count };

/// Whether p[b, e) is one of the names in p[0, upto) (trimmed, defaults left out): a rescan of the names before it, no
/// arrays (constant evaluation pays for every element an array is initialised with).
constexpr bool named_before(const char* p, std::size_t b, std::size_t e, std::size_t upto) noexcept {
  for (std::size_t start = 0; start < upto;) {
    std::size_t stop = start;
    while (stop < upto && p[stop] != ',' && p[stop] != '=') ++stop;
    std::size_t pb = start;
    std::size_t pe = stop;
    while (pb < pe && is_space(p[pb])) ++pb;
    if (pb < pe && p[pb] == '*') ++pb;  // `*name` is named `name`
    while (pb < pe && is_space(p[pb])) ++pb;
    while (pe > pb && is_space(p[pe - 1])) --pe;
    bool same = pe - pb == e - b;
    for (std::size_t k = 0; same && k < e - b; ++k) same = p[pb + k] == p[b + k];
    if (same) return true;
    if (stop < upto && p[stop] == '=') stop = skip_default(p, stop + 1, upto);
    start = stop + 1;
  }
  return false;
}

/// One pass over the list (it runs at compile time for every annotation, also in disabled builds), on a raw
/// pointer: GCC's constant evaluation pays for every call (string_view's operator[] included) and every statement
/// it runs.
constexpr names_problem check_names(std::string_view list, std::size_t arity) noexcept {
  const char* p = list.data();
  const std::size_t n = list.size();
  std::size_t count = 0;
  std::size_t start = 0;                    // where the current name's part of the list starts
  std::size_t b = n;                        // its first character that is not a space (n: none yet)
  std::size_t e = 0;                        // one past its last character that is not a space
  names_problem bad = names_problem::none;  // what is wrong with the current name, if anything
  bool any = false;                         // a character that is not a space anywhere
  bool marked = false;                      // a `*` before the current name (its pointee is captured)
  for (std::size_t i = 0; i <= n; ++i) {
    char c = i < n ? p[i] : ',';
    if (c == '=') {  // the name ends here; its default (the function's declaration has it) is skipped
      any = true;
      i = skip_default(p, i + 1, n);
      c = ',';
    }
    if (c != ',') {
      if (is_space(c)) continue;
      any = true;
      if (c == '*' && b == n && !marked) {  // one `*` before the name, spaces around it or not
        marked = true;
        continue;
      }
      if (bad == names_problem::none &&
          ((b != n && e != i) ||  // a space inside the name ("int a")
           !((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' || (b != n && c >= '0' && c <= '9')))) {
        bad = names_problem::not_identifier;
      }
      if (b == n) b = i;
      e = i + 1;
      continue;
    }
    if (i == n && !any) return arity == 0 ? names_problem::none : names_problem::count;
    if (b == n) return names_problem::empty;
    if (bad != names_problem::none) return bad;
    if (named_before(p, b, e, start)) return names_problem::duplicate;
    ++count;
    start = i + 1;
    b = n;
    marked = false;
  }
  return count == arity ? names_problem::none : names_problem::count;
}

/// The file name of a path: an annotation's `file` must not depend on how its header was reached ("a/x.hpp" and
/// "../a/x.hpp" are one file), so only this part of __FILE__ goes into it (where the compiler has no __FILE_NAME__).
constexpr std::string_view file_name(std::string_view path) noexcept {
  for (std::size_t i = path.size(); i > 0; --i) {
    if (path[i - 1] == '/' || path[i - 1] == '\\') return path.substr(i);
  }
  return path;
}

}  // namespace detail
HOOKSCOPE_DETAIL_END_NAMESPACE
