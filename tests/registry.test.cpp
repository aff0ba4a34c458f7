#include "hookscope/registry.hpp"

#include "hookscope/observable.hpp"

#include <catch2/catch.hpp>

#include <set>
#include <stdexcept>
#include <string>
#include <vector>

namespace registry_test {

struct opaque {
  int hidden = 0;
};

namespace impl {
inline double scale(double value, int times, const std::string& label) { return value * times + double(label.size()); }
inline void consume(const opaque&, bool) {}
inline int explode(int) { throw std::runtime_error("kaboom"); }
}  // namespace impl

HOOKSCOPE_OBSERVABLE(scale, impl::scale, value, times, label);
HOOKSCOPE_OBSERVABLE(consume, impl::consume, thing, flag);
HOOKSCOPE_OBSERVABLE(explode, impl::explode, x);

}  // namespace registry_test

int call_registry_other(int x);  // registry_other.cpp: its observable registers from another translation unit

#if HOOKSCOPE_ENABLED

TEST_CASE("registry lists every observable of the program") {
  std::set<std::string> names;
  for (const hookscope::function_info& f : hookscope::registry()) names.emplace(f.name);
  CHECK(names.count("scale") == 1);
  CHECK(names.count("consume") == 1);
  CHECK(names.count("explode") == 1);
  CHECK(names.count("other_unit_twice") == 1);  // never called before this line: registered at start-up
  CHECK(hookscope::registry().size() == names.size());
}

TEST_CASE("find_observable") {
  const hookscope::function_info* f = hookscope::find_observable("scale");
  REQUIRE(f != nullptr);
  CHECK(f == &registry_test::scale.info);
  CHECK(f->param_names.size() == 3);
  CHECK(f->param_names[2] == "label");
  CHECK(hookscope::find_observable("no_such_function") == nullptr);
}

TEST_CASE("erased_call through the registry") {
  const hookscope::function_info* f = hookscope::find_observable("scale");
  REQUIRE(f != nullptr);
  std::vector<std::string> lines;
  auto pre = f->pre().add([&](const hookscope::erased_call& c) {
    CHECK_FALSE(c.is_post());
    CHECK(c.function().name == "scale");
    REQUIRE(c.arg_count() == 3);
    std::string line;
    for (std::size_t i = 0; i < c.arg_count(); ++i) line += std::string(c.arg_name(i)) + "=" + c.format_arg(i) + " ";
    lines.push_back(line);
    CHECK(c.format_return_value().empty());
    CHECK(c.format_arg(3).empty());
    CHECK(c.arg_name(3).empty());
  });
  auto post = f->post().add([&](const hookscope::erased_call& c) {
    CHECK(c.is_post());
    lines.push_back("-> " + c.format_return_value());
  });
  CHECK(registry_test::scale(1.5, 2, "abc") == 6.0);
  CHECK(lines == std::vector<std::string>{"value=1.5 times=2 label=\"abc\" ", "-> 6"});

  SECTION("types without operator<< print their name; bools print as words") {
    std::string thing;
    std::string flag;
    auto s = hookscope::find_observable("consume")->pre().add([&](const hookscope::erased_call& c) {
      thing = c.format_arg(0);
      flag = c.format_arg(1);
    });
    registry_test::consume(registry_test::opaque{}, true);
    CHECK(thing == "<registry_test::opaque>");
    CHECK(flag == "true");
  }
  SECTION("a call that throws") {
    bool saw_exception = false;
    std::string result = "unset";
    auto s = registry_test::explode.info.post().add([&](const hookscope::erased_call& c) {
      saw_exception = static_cast<bool>(c.exception());
      result = c.format_return_value();
    });
    CHECK_THROWS_AS(registry_test::explode(1), std::runtime_error);
    CHECK(saw_exception);
    CHECK(result.empty());
  }
  SECTION("erased and typed callbacks run together, typed first") {
    lines.clear();
    auto typed = registry_test::scale.observers.pre.add([&](const auto&) { lines.push_back("typed"); });
    registry_test::scale(0.0, 1, "");
    REQUIRE(lines.size() == 3);
    CHECK(lines[0] == "typed");
  }
}

TEST_CASE("registry: an observable of another translation unit") {
  const hookscope::function_info* f = hookscope::find_observable("other_unit_twice");
  REQUIRE(f != nullptr);
  CHECK(f->file.ends_with("registry_other.cpp"));
  std::string seen;
  auto s = f->pre().add([&](const hookscope::erased_call& c) { seen = c.format_arg(0); });
  CHECK(call_registry_other(21) == 42);
  CHECK(seen == "21");
}

#else

TEST_CASE("registry is empty in a disabled build") {
  CHECK(hookscope::registry().size() == 0);
  CHECK(hookscope::registry().begin() == hookscope::registry().end());
  CHECK(hookscope::find_observable("scale") == nullptr);
  CHECK(registry_test::scale(1.0, 1, "") == 1.0);
  CHECK(call_registry_other(21) == 42);
}

#endif
