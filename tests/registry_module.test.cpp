// The registry of a program that loads a shared library with annotations (registry_module.cpp): both modules'
// listed sites register, once each.
#include "hookscope/observable.hpp"
#include "hookscope/registry.hpp"

#include <catch2/catch.hpp>

#include <string>

int plugin_triple(int x);  // registry_module.cpp, in the shared library

namespace host {
namespace impl {
inline int square(int x) { return x * x; }
}  // namespace impl
HOOKSCOPE_OBSERVABLE(square, impl::square, x);
}  // namespace host

namespace {
std::size_t registered(std::string_view name) {
  std::size_t n = 0;
  for (const hookscope::function_info& f : hookscope::registry()) n += f.name == name ? 1 : 0;
  return n;
}
}  // namespace

TEST_CASE("registry: the sites of every module") {
  CHECK(host::square(4) == 16);
  CHECK(plugin_triple(5) == 15);
#if HOOKSCOPE_ENABLED
  SECTION("the program's and the shared library's annotations are registered once each") {
    CHECK(registered("host::square") == 1);
    CHECK(registered("plugin::triple") == 1);
    CHECK(registered("plugin::negate") == 1);  // never called
  }
  SECTION("a shared library's annotation is observed through the registry") {
    const hookscope::function_info* triple = hookscope::find_observable("plugin::triple");
    REQUIRE(triple != nullptr);
    CHECK(triple->file == "registry_module.cpp");
    std::string seen;
    auto s = triple->pre().add([&](const hookscope::erased_call& c) { seen = c.format_arg(0); });
    CHECK(plugin_triple(7) == 21);
    CHECK(seen == "7");
  }
#else
  CHECK(hookscope::registry().size() == 0);
  CHECK(registered("plugin::triple") == 0);
#endif
}
