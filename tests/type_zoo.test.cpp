// The type zoo (tests/type_zoo.hpp): each entry's sample captured, in-process and through its annotated function's
// call_recorder, against the capture derived by hand in tests/type_zoo_expected.txt.
#include "type_zoo.hpp"

#include "hookscope/erased_call.hpp"
#include "hookscope/recorder.hpp"
#include "hookscope/registry.hpp"
#include "hookscope/value.hpp"

#include <catch2/catch.hpp>

#include <fstream>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#ifndef HOOKSCOPE_TEST_ZOO_EXPECTED
#error "HOOKSCOPE_TEST_ZOO_EXPECTED: the path of tests/type_zoo_expected.txt (tests/meson.build sets it)"
#endif

using hookscope::value;

namespace {

// The lines of type_zoo_expected.txt: entry -> value JSON.
std::map<std::string, std::string> expected_captures() {
  std::ifstream in(HOOKSCOPE_TEST_ZOO_EXPECTED);
  REQUIRE(in.good());
  std::map<std::string, std::string> expected;
  std::string line;
  while (std::getline(in, line)) {
    if (line.empty() || line[0] == '#') continue;
    const std::size_t space = line.find(' ');
    REQUIRE(space != std::string::npos);
    expected.emplace(line.substr(0, space), line.substr(space + 1));
  }
  return expected;
}

// Whether `v` is the capture `expected` describes: {"opaque~":"text", ...} an opaque leaf whose type name contains
// text and whose other keys are those given ("address":"any": any address), else the value the JSON encodes.
bool matches(const value& v, const std::string& expected) {
  const std::string opaque_prefix = "{\"opaque~\":\"";
  if (expected.rfind(opaque_prefix, 0) == 0) {
    const std::size_t text_end = expected.find('"', opaque_prefix.size());
    const std::string text = expected.substr(opaque_prefix.size(), text_end - opaque_prefix.size());
    if (v.type() != value::kind::opaque || v.opaque_type().find(text) == std::string::npos) return false;
    // The leaf as expected: its own type name, and its address where any is expected.
    std::string rest = expected.substr(text_end + 1);  // "}" or ",key:value...}"
    const std::string any_address = "\"address\":\"any\"";
    if (const std::size_t at = rest.find(any_address); at != std::string::npos) {
      if (!v.as_opaque().address) return false;
      const std::string written = hookscope::to_json(v);
      const std::size_t from = written.find("\"address\":");
      rest.replace(at, any_address.size(), written.substr(from, written.find('"', from + 11) + 1 - from));
    }
    std::string leaf = hookscope::to_json(value::opaque(v.opaque_type()));
    leaf.pop_back();  // its closing brace
    return v == hookscope::value_from_json(leaf + rest);
  }
  return v == hookscope::value_from_json(expected);
}

// An opaque leaf that the type's rules make (not a run-time bound: depth, size, memory that could not be read).
bool has_opaque_leaf(const value& v) {
  bool found =
      v.type() == value::kind::opaque && !v.depth_limited() && !v.as_opaque().too_large && !v.as_opaque().unreadable;
  hookscope::for_each_child(
      v, [&](std::size_t, const std::string*, const value& child) { found = found || has_opaque_leaf(child); });
  return found;
}

}  // namespace

TEST_CASE("type zoo: every entry captured as derived by hand") {
  const std::map<std::string, std::string> expected = expected_captures();
  std::size_t entries = 0;
  // A `*v` entry's argument is captured as capture_options::read_pointee captures it.
  const hookscope::capture_options plain{};
  const hookscope::capture_options pointee{.read_pointee = true};
#define ZOO_CHECK_WITH(options, entry, type, structural, ...)                                                   \
  SECTION(#entry) {                                                                                             \
    const value captured = hookscope::capture_value<type>(__VA_ARGS__, options);                                \
    INFO(#entry ": " << hookscope::to_json(captured));                                                          \
    REQUIRE(expected.count(#entry) == 1);                                                                       \
    CHECK(matches(captured, expected.at(#entry)));                                                              \
    CHECK(hookscope::value_from_json(hookscope::to_json(captured)) == captured); /* written, then read */       \
    CHECK(has_opaque_leaf(captured) == !(structural)); /* capturable<T> is "no opaque leaf", at run time too */ \
  }                                                                                                             \
  ++entries;
#define ZOO_CHECK(...) ZOO_CHECK_WITH(plain, __VA_ARGS__)
#define ZOO_CHECK_POINTEE(...) ZOO_CHECK_WITH(pointee, __VA_ARGS__)
  ZOO_PLAIN_ENTRIES(ZOO_CHECK)
  ZOO_POINTEE_ENTRIES(ZOO_CHECK_POINTEE)
#undef ZOO_CHECK
#undef ZOO_CHECK_POINTEE
#undef ZOO_CHECK_WITH
  CHECK(entries >= 50);
  CHECK(entries == expected.size());  // no expectation without an entry
}

TEST_CASE("type zoo: every annotated function recorded by call_recorder") {
  const std::map<std::string, std::string> expected = expected_captures();
#define ZOO_RECORD(entry, type, structural, ...)                                  \
  SECTION(#entry) {                                                               \
    hookscope::call_recorder rec(zoo::entry);                                     \
    (void)zoo::entry(__VA_ARGS__);                                                \
    if (HOOKSCOPE_ENABLED) {                                                      \
      const std::vector<hookscope::call_record> calls = rec.calls(); /* a copy */ \
      REQUIRE(calls.size() == 1);                                                 \
      const hookscope::value_fields& kwargs = calls[0].inputs.kwargs;             \
      REQUIRE(kwargs.size() == 1);                                                \
      CHECK(kwargs[0].first == "v");                                              \
      INFO(#entry ": " << hookscope::to_json(kwargs[0].second));                  \
      CHECK(matches(kwargs[0].second, expected.at(#entry)));                      \
      CHECK(calls[0].result == value(static_cast<int>(sizeof(zoo::cref<type>)))); \
    } else {                                                                      \
      CHECK(rec.num_calls() == 0);                                                \
    }                                                                             \
  }
  ZOO_ENTRIES(ZOO_RECORD)
#undef ZOO_RECORD
}

TEST_CASE("type zoo: erased_call::capture_args always works, can_capture_args says it holds no opaque leaf") {
  const std::map<std::string, std::string> expected = expected_captures();
#define ZOO_ERASED(entry, type, structural, ...)                                                                   \
  SECTION(#entry) {                                                                                                \
    const hookscope::function_info* f = hookscope::find_observable("zoo::" #entry);                                \
    if (HOOKSCOPE_ENABLED) {                                                                                       \
      REQUIRE(f != nullptr);                                                                                       \
      std::vector<std::pair<bool, hookscope::value_fields>> pre;                                                   \
      std::vector<std::optional<value>> post;                                                                      \
      auto on_pre = f->pre().add([&](const hookscope::erased_call& call) {                                         \
        pre.emplace_back(call.can_capture_args(), call.capture_args());                                            \
      });                                                                                                          \
      auto on_post =                                                                                               \
          f->post().add([&](const hookscope::erased_call& call) { post.push_back(call.capture_return_value()); }); \
      (void)zoo::entry(__VA_ARGS__);                                                                               \
      REQUIRE(pre.size() == 1);                                                                                    \
      CHECK(pre[0].first == (structural));                                                                         \
      REQUIRE(pre[0].second.size() == 1);                                                                          \
      CHECK(matches(pre[0].second[0].second, expected.at(#entry)));                                                \
      REQUIRE(post.size() == 1);                                                                                   \
      CHECK(post[0] == std::optional<value>(value(static_cast<int>(sizeof(zoo::cref<type>)))));                    \
    } else {                                                                                                       \
      CHECK(f == nullptr);                                                                                         \
    }                                                                                                              \
  }
  ZOO_ENTRIES(ZOO_ERASED)
#undef ZOO_ERASED
}
