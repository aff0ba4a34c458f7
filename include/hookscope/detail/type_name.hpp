// Readable type names computed at compile time (GCC and Clang), and the registry names of annotations built on them.
//
// Every annotation computes two at compile time (its signature and its scope), in enabled builds and wherever a
// disabled build uses `info`: the code avoids what the constant evaluator is slow at. It pays for every step of a
// loop, so the compiler's pretty name is cut at offsets found once, and an annotation's scope at the length of its
// tag's name. (GCC 12 folds __builtin_memchr and __builtin_strchr wrongly on a pointer into the middle of a string,
// so no scan jumps with them.)
#pragma once

#include "hookscope/config.hpp"
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

// A scope gives its text as the compiler spells it (`raw`, told the length of the annotation's name); qualified_name
// cleans it.

/// The namespace an annotation is in, found from a tag struct it declares there: "ns::" for `ns::tag`, cut
/// without a scan: the tag's own name is `hookscope_detail_scope_of_` and the annotation's name.
template <class Tag>
struct scope_of_tag {
  static constexpr std::string_view tag_prefix = "hookscope_detail_scope_of_";
  static constexpr std::string_view raw(std::size_t name_size) noexcept {
    const std::string_view tag = raw_type_name<Tag>();
    return tag.substr(0, tag.size() - tag_prefix.size() - name_size);
  }
};

/// The scope of a method annotation: its class, e.g. "llm::model<int>".
template <class Class>
struct class_scope {
  static constexpr std::string_view raw(std::size_t) noexcept { return raw_type_name<Class>(); }
};

/// No scope: the name as given (make_observable, and observable<...> written by hand).
struct no_scope {
  static constexpr std::string_view raw(std::size_t) noexcept { return {}; }
};

/// "scope::name" (the scope without anonymous namespaces), or "name" in the global namespace.
template <class Scope, fixed_string Name>
struct qualified_name {
  static constexpr std::string_view scope = Scope::raw(Name.size());
  static constexpr std::size_t scope_size = clean_type_name(scope, nullptr);
  static constexpr bool separated = scope_size != 0 && scope.back() != ':';  // a class: "::" goes between
  static constexpr std::size_t size = scope_size + (separated ? 2 : 0) + Name.size();
  static constexpr static_text<size> text = [] {
    static_text<size> t;
    std::size_t n = clean_type_name(scope, t.data);
    if (separated) {
      t.data[n++] = ':';
      t.data[n++] = ':';
    }
    const char* name = Name.data;
    for (std::size_t i = 0; i < Name.size(); ++i) t.data[n++] = name[i];
    return t;
  }();
};

}  // namespace detail
HOOKSCOPE_DETAIL_END_NAMESPACE
