// Readable type names computed at compile time (GCC and Clang), and the registry names of annotations built on them.
//
// Every annotation computes two at compile time (its signature and its scope), in enabled builds and wherever a
// disabled build uses `info`: the code avoids what the constant evaluator is slow at. It pays for every step of a
// loop, so the compiler's pretty name is cut at offsets found once, and an annotation's scope at the length of its
// tag's name. (GCC 12 folds __builtin_memchr and __builtin_strchr wrongly on a pointer into the middle of a string,
// so no scan jumps with them.)
#pragma once

#include "hookscope/detail/config.hpp"
#include "hookscope/detail/fixed_string.hpp"

#include <cstddef>
#include <string_view>

HOOKSCOPE_DETAIL_BEGIN_NAMESPACE
namespace detail {

/// This function's pretty name: T's name inside text that is the same for every T (GCC:
/// "... [with T = int; std::string_view = ...]", Clang: "... [T = int]").
template <class T>
constexpr std::string_view pretty_name() noexcept {
  return {__PRETTY_FUNCTION__, sizeof(__PRETTY_FUNCTION__) - 1};
}

/// How many characters of pretty_name<T>() come before T's name and after it.
struct pretty_frame {
  std::size_t prefix;
  std::size_t suffix;
};

/// Found once, on a type whose name is known, instead of searching every pretty name for where T starts.
constexpr pretty_frame find_pretty_frame() noexcept {
  constexpr std::string_view probe = pretty_name<double>();
  constexpr std::string_view known = "double";
  std::size_t at = probe.size() - known.size();
  while (at > 0 && probe.substr(at, known.size()) != known) --at;
  return {at, probe.size() - at - known.size()};
}
inline constexpr pretty_frame type_name_frame = find_pretty_frame();

/// T's name as the compiler spells it.
template <class T>
constexpr std::string_view raw_type_name() noexcept {
  constexpr std::string_view pretty = pretty_name<T>();
  return {pretty.data() + type_name_frame.prefix, pretty.size() - type_name_frame.prefix - type_name_frame.suffix};
}
static_assert(raw_type_name<int>() == "int" && raw_type_name<unsigned char>() == "unsigned char",
              "hookscope: this compiler's __PRETTY_FUNCTION__ does not have the form hookscope reads type names from");

/// The text of a type name without anonymous namespaces (GCC's "{anonymous}::", Clang's "(anonymous namespace)::"),
/// so that names are the same whichever compiler built the program: its length, and the text written to `out` when
/// given. One pass with one compare per character until a '{' or '(' (constant evaluation pays for every step).
constexpr std::size_t clean_type_name(std::string_view name, char* out) noexcept {
  constexpr std::string_view gcc = "{anonymous}::";
  constexpr std::string_view clang = "(anonymous namespace)::";
  const char* p = name.data();
  const std::size_t size = name.size();
  std::size_t n = 0;
  for (std::size_t i = 0; i < size;) {
    const char c = p[i];
    if (c == '{' || c == '(') {
      const std::string_view a = c == '{' ? gcc : clang;
      if (name.substr(i, a.size()) == a) {
        i += a.size();
        continue;
      }
    }
    if (out != nullptr) out[n] = c;
    ++n;
    ++i;
  }
  return n;
}

/// A string computed at compile time, stored with exactly its characters (not the whole pretty function name).
template <std::size_t N>
struct static_text {
  char data[N + 1]{};
  constexpr std::string_view view() const noexcept { return {data, N}; }
};

template <class T>
struct type_name_text {
  static constexpr std::string_view raw = raw_type_name<T>();
  static constexpr std::size_t size = clean_type_name(raw, nullptr);
  static constexpr static_text<size> text = [] {
    static_text<size> t;
    clean_type_name(raw, t.data);
    return t;
  }();
};

/// A readable name of T, without anonymous namespaces.
template <class T>
constexpr std::string_view type_name() noexcept {
  return type_name_text<T>::text.view();
}

//=== annotation names ===//

/// What starts the name of the site struct the annotation macros define in the annotation's namespace or class.
inline constexpr std::string_view site_marker = "hookscope_detail_site_";

/// The registry name of the annotation whose site struct is `Site` and whose own name has `NameSize` characters: the
/// site's name as the compiler spells it, without anonymous namespaces and without the marker ("ns::cls::" then
/// "hookscope_detail_site_" then the name: "ns::cls::name"). Cut at known lengths, without a scan.
template <class Site, std::size_t NameSize>
struct site_name {
  static constexpr std::string_view raw = raw_type_name<Site>();
  static constexpr std::string_view scope = raw.substr(0, raw.size() - site_marker.size() - NameSize);
  static constexpr std::size_t scope_size = clean_type_name(scope, nullptr);
  static constexpr static_text<scope_size + NameSize> text = [] {
    static_text<scope_size + NameSize> t;
    std::size_t n = clean_type_name(scope, t.data);
    const char* name = raw.data() + raw.size() - NameSize;
    for (std::size_t i = 0; i < NameSize; ++i) t.data[n++] = name[i];
    return t;
  }();
};

}  // namespace detail
HOOKSCOPE_DETAIL_END_NAMESPACE
