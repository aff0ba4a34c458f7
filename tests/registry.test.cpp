#include "hookscope/registry.hpp"

#include "hookscope/observable.hpp"

#include "registry_shared.hpp"  // registry_other.cpp includes it by another spelling

#include <catch2/catch.hpp>

#include <set>
#include <stdexcept>
#include <string>
#include <string_view>
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

namespace text {
namespace impl {
inline int forward(int tokens) { return tokens * 2; }
}  // namespace impl
HOOKSCOPE_OBSERVABLE(forward, impl::forward, tokens);
}  // namespace text

template <class T>
struct model {
  T forward_impl(T x) { return x + 1; }
  HOOKSCOPE_OBSERVABLE_METHOD(model, forward, forward_impl, x);
};
template struct model<int>;
template struct model<double>;
inline const auto& model_int_observers = model<int>::forward_observers();  // registers both methods
inline const auto& model_double_observers = model<double>::forward_observers();

namespace {
inline int hidden(int x) { return x; }
HOOKSCOPE_OBSERVABLE(anonymous_namespace_hidden, hidden, x);
}  // namespace

int call_registry_other(int x);  // registry_other.cpp: its observable registers from another translation unit
const hookscope::function_info* shared_info_in_other_unit();
const char* shared_spelling_in_other_unit();
int call_vision_forward(int x);

#if HOOKSCOPE_ENABLED

TEST_CASE("registry lists every observable of the program") {
  std::set<std::string> names;
  for (const hookscope::function_info& f : hookscope::registry()) names.emplace(f.name);
  CHECK(names.count("registry_test::scale") == 1);
  CHECK(names.count("registry_test::consume") == 1);
  CHECK(names.count("registry_test::explode") == 1);
  CHECK(names.count("other_unit_twice") == 1);  // never called before this line: registered at start-up
  CHECK(hookscope::registry().size() == names.size());
}

TEST_CASE("find_observable") {
  const hookscope::function_info* f = hookscope::find_observable("registry_test::scale");
  REQUIRE(f != nullptr);
  CHECK(f == &registry_test::scale.info);
  CHECK(f->param_names.size() == 3);
  CHECK(f->param_names[2] == "label");
  CHECK(hookscope::find_observable("no_such_function") == nullptr);
}

TEST_CASE("erased_call through the registry") {
  const hookscope::function_info* f = hookscope::find_observable("registry_test::scale");
  REQUIRE(f != nullptr);
  std::vector<std::string> lines;
  auto pre = f->pre().add([&](const hookscope::erased_call& c) {
    CHECK_FALSE(c.is_post());
    CHECK(c.function().name == "registry_test::scale");
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
    auto s = hookscope::find_observable("registry_test::consume")->pre().add([&](const hookscope::erased_call& c) {
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
  SECTION("erased and typed callbacks are one event, run in registration order") {
    lines.clear();
    auto typed = registry_test::scale.observers.pre.add([&](const auto&) { lines.push_back("typed"); });
    registry_test::scale(0.0, 1, "");
    CHECK(lines == std::vector<std::string>{"value=0 times=1 label=\"\" ", "typed", "-> 0"});
    typed.reset();
    CHECK(registry_test::scale.observers.pre.has_callbacks());  // the erased one, added through the registry
    pre.reset();
    CHECK_FALSE(registry_test::scale.observers.pre.has_callbacks());
    CHECK_FALSE(f->pre().has_callbacks());
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

TEST_CASE("registry: one header reached by two include spellings is one observable") {
  REQUIRE(std::string_view(shared_header_spelling()) != shared_spelling_in_other_unit());  // the case at hand
  CHECK(shared_info_in_other_unit() == &shared_header::halve.info);
  CHECK(hookscope::find_observable("shared_header::halve") == &shared_header::halve.info);
  CHECK(shared_header::halve.info.file == "registry_shared.hpp");
  std::size_t registered = 0;
  for (const hookscope::function_info& f : hookscope::registry()) registered += f.name == "shared_header::halve";
  CHECK(registered == 1);
}

TEST_CASE("registry: names are qualified, so equal names in different scopes stay apart") {
  const hookscope::function_info* text_forward = hookscope::find_observable("text::forward");
  const hookscope::function_info* vision_forward = hookscope::find_observable("vision::forward");
  REQUIRE(text_forward != nullptr);
  REQUIRE(vision_forward != nullptr);
  CHECK(text_forward != vision_forward);
  CHECK(text_forward == &text::forward.info);

  const hookscope::function_info* int_forward = hookscope::find_observable("model<int>::forward");
  const hookscope::function_info* double_forward = hookscope::find_observable("model<double>::forward");
  REQUIRE(int_forward != nullptr);
  REQUIRE(double_forward != nullptr);
  CHECK(int_forward != double_forward);
  CHECK(int_forward == &model<int>::forward_observable::info);

  // Anonymous namespaces are left out of the name: it is then the same with every compiler.
  CHECK(hookscope::find_observable("anonymous_namespace_hidden") == &anonymous_namespace_hidden.info);

  int seen = 0;
  auto s = vision_forward->pre().add([&](const hookscope::erased_call& c) { seen = std::stoi(c.format_arg(0)); });
  CHECK(text::forward(5) == 10);
  CHECK(seen == 0);
  CHECK(call_vision_forward(7) == 8);
  CHECK(seen == 7);
}

namespace registry_test {
std::vector<std::string> told;  // by the hook below, in order
void remember(const hookscope::function_info& f) noexcept { told.emplace_back(f.name); }
}  // namespace registry_test

TEST_CASE("add_registration_hook") {
  SECTION("a hook installed late is told of every observable registered before it, once each") {
    std::multiset<std::string> registered;
    for (const hookscope::function_info& f : hookscope::registry()) registered.emplace(f.name);
    hookscope::detail::add_registration_hook(&registry_test::remember);
    CHECK(std::multiset<std::string>(registry_test::told.begin(), registry_test::told.end()) == registered);
    CHECK(registered.count("registry_test::scale") == 1);
  }
}

#else

TEST_CASE("registry is empty in a disabled build") {
  CHECK(hookscope::registry().size() == 0);
  CHECK(hookscope::registry().begin() == hookscope::registry().end());
  CHECK(hookscope::find_observable("registry_test::scale") == nullptr);
  CHECK(registry_test::scale(1.0, 1, "") == 1.0);
  CHECK(call_registry_other(21) == 42);
}

#endif
