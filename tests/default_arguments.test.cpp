// Calls of annotated functions that leave trailing arguments to their defaults (hookscope/observable.hpp): what the
// call gives the function, in each mode. How callbacks, captures and records see them is
// default_arguments_observed.test.cpp.
#include "hookscope/observable.hpp"
#include "hookscope/load.hpp"
#include "hookscope/recorder.hpp"
#include "hookscope/records.hpp"
#include "hookscope/registry.hpp"
#include "hookscope/value_errors.hpp"

#include <catch2/catch.hpp>

#include "default_arguments_functions.hpp"

#include <array>
#include <atomic>
#include <climits>
#include <csignal>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <initializer_list>
#include <limits>
#include <memory>
#include <optional>
#include <random>
#include <stdexcept>
#include <string>
#include <string_view>
#include <thread>
#include <tuple>
#include <sys/wait.h>
#include <unistd.h>
#include <utility>
#include <vector>

using Catch::Matchers::Contains;
using hookscope::dtype;
using hookscope::tensor_spec;
using hookscope::value;

using namespace defaults;

TEST_CASE("observable call with default arguments") {
  SECTION("a free function: each trailing argument left out takes the function's default") {
    CHECK(defaults::scale(3.0) == 6.0);
    CHECK(defaults::scale(3.0, 3.0) == 9.0);
    CHECK(defaults::scale(3.0, 3.0, 2) == 18.0);
    CHECK(defaults::mix() == 321);
    CHECK(defaults::mix(2) == 322);
    CHECK(defaults::mix(2, 0) == 302);
  }
  SECTION("the arguments given are converted to the annotated parameter types, as a full call converts them") {
    CHECK(defaults::scale(3) == 6.0);  // int to double
    CHECK(defaults::pick(3) == 30.0);  // the annotated overload, not pick(int)
    CHECK(defaults::pick(3.0) == 30.0);
    CHECK(defaults::pick(3, 2) == 6.0);
    CHECK(impl::pick(3) == -3.0);  // what the name alone would have called
  }
  SECTION("an omitted by-value move-only argument; the given one is moved in once") {
    CHECK(defaults::consume(std::make_unique<int>(1)) == 101);
    CHECK(defaults::consume(std::make_unique<int>(1), std::make_unique<int>(2)) == 3);
  }
  SECTION("reference parameters bind to the caller's objects") {
    int counter = 0;
    defaults::bump(counter);
    defaults::bump(counter, 5);
    CHECK(counter == 6);
    std::string out;
    defaults::append(out);
    defaults::append(out, "!");
    CHECK(out == "<default>!");
  }
  SECTION("noexcept and void functions keep their type") {
    STATIC_REQUIRE(noexcept(defaults::quiet(2)));
    STATIC_REQUIRE(noexcept(defaults::quiet(2, 3)));
    STATIC_REQUIRE(std::is_void_v<decltype(defaults::append(std::declval<std::string&>()))>);
    CHECK(defaults::quiet(2) == 10);
  }
  SECTION("member functions, const and not, with defaults on several parameters") {
    model m;
    const model& cm = m;
    CHECK(cm.forward(2) == 207);
    CHECK(cm.forward(2, 1) == 201);
    CHECK(m.step() == 123);
    CHECK(m.step(4) == 423);
    CHECK(m.step(4, 5) == 453);
    CHECK(m.step(4, 5, 6) == 456);
    CHECK(m.offset == 13);
    CHECK(m.forward(0, 0) == 13);
  }
  SECTION("a member function of a class template") {
    CHECK(typed_model<int>{}.scale(3) == 6);
    CHECK(typed_model<double>{}.scale(1.5, 3.0) == 4.5);
  }
  SECTION("a braced initialiser for an argument given, as the function itself takes it") {
    CHECK(defaults::describe({}) == impl::describe({}));
    CHECK(defaults::describe({"ab"}, {}) == impl::describe("ab", 0.0));
  }
  SECTION("a recursion through a defaulted call") { CHECK(defaults::countdown(5) == 5); }
}

TEST_CASE("observable call with default arguments: parameter kinds") {
  SECTION("an initializer_list parameter given a braced list") {
    CHECK(defaults::sum({1, 2, 3}) == 6);
    CHECK(defaults::sum({}, 5) == 0);
  }
  SECTION("a reference returned refers to the caller's object") {
    std::vector<int> v{7, 8};
    defaults::element(v) = 9;
    CHECK(&defaults::element(v) == v.data());
    CHECK(v == std::vector<int>{9, 8});
  }
  SECTION("an rvalue-reference parameter given a temporary") {
    CHECK(defaults::sink(std::string("abcdef")) == 2);
    CHECK(defaults::sink("abcdef") == 2);
  }
  SECTION("a static member function and a using-declaration") {
    CHECK(defaults::twice(4) == 8);
    CHECK(defaults::scale_through_using(3.0) == 6.0);
  }
  SECTION("a method of a class template whose default is a braced vector of T") {
    typed_model<int> m;
    CHECK(m.fill(2) == std::vector<int>{0, 0, 1, 2});
    CHECK(m.fill(1, std::vector<int>{5}) == std::vector<int>{0, 5});
  }
}

#if HOOKSCOPE_ENABLED
TEST_CASE("observable call with default arguments and callbacks: parameter kinds") {
  std::vector<std::string> seen;
  auto on_sum = defaults::sum.observers.pre.add([&](const auto& ctx) {
    int total = 0;
    for (const int v : ctx.template arg<"values">()) total += v;
    seen.push_back("sum " + std::to_string(total) + (ctx.template has_arg<"times">() ? " times" : ""));
  });
  auto on_sink = defaults::sink.observers.pre.add([&](const auto& ctx) {
    seen.push_back("sink " + ctx.template arg<"s">() + " " + std::to_string(ctx.args_given()));
  });
  auto on_fill = typed_model<int>::fill_observers().pre.add(
      [&](const auto& ctx) { seen.push_back("fill " + std::to_string(ctx.args_given())); });
  CHECK(defaults::sum({1, 2, 3}) == 6);
  CHECK(defaults::sink(std::string("abcdef")) == 2);
  typed_model<int> m;
  CHECK(m.fill(1).size() == 3);
  CHECK(seen == std::vector<std::string>{"sum 6", "sink abcdef 1", "fill 1"});
}
#endif

TEST_CASE(
    "observable call with default arguments: a default's temporary ends with the call by name (docs/observable.md)") {
  // In the plain call by name the default's temporary lives to the end of the caller's full-expression; a shorter
  // call evaluates the default inside the call by name, where it ends (the documented difference: a function that
  // returns a reference to a defaulted parameter must be given that argument). Each row: the live count after the
  // call within the same full-expression.
  using impl::counted;
  SECTION("the plain call (the control)") {
    CHECK((impl::fallback_live(0), counted::live) == 1);
    CHECK(counted::live == 0);
  }
  SECTION("the shorter call, nobody listening") {
    CHECK(defaults::fallback_live(0) == 1);  // alive inside the function
    CHECK((defaults::fallback_live(0), counted::live) == 0);
  }
#if HOOKSCOPE_ENABLED
  SECTION("the shorter call, observed") {
    auto sub =
        defaults::fallback_live.observers.pre.add([](const auto& ctx) { CHECK_FALSE(ctx.template has_arg<1>()); });
    CHECK((defaults::fallback_live(0), counted::live) == 0);
  }
#endif
}

#if HOOKSCOPE_ENABLED
TEST_CASE(
    "observable call with default arguments: a callback reading an omitted argument in each callback error mode") {
  std::vector<std::string> logged;
  hookscope::set_log_sink([&](std::string_view line) { logged.emplace_back(line); });
  struct restore_sink {
    ~restore_sink() { hookscope::set_log_sink({}); }
  } restore;
  int made = 0;  // calls of the function that returned (post callbacks)
  auto post = defaults::scale.observers.post.add([&](const auto&) { ++made; });
  auto pre = defaults::scale.observers.pre.add([](const auto& ctx) { (void)ctx.template arg<"factor">(); });
  SECTION("logged: the line names the argument; the call goes on with the function's default") {
    const hookscope::rethrow_callback_exceptions_scope log_mode(false);
    CHECK(defaults::scale(1.5) == 3.0);
    CHECK(made == 1);
    REQUIRE(logged.size() == 1);
    CHECK_THAT(logged[0], Contains("omitted argument 1 ('factor')"));
  }
  SECTION("rethrown: the caller gets the value_error and the function is not called") {
    const hookscope::rethrow_callback_exceptions_scope rethrow;
    CHECK_THROWS_AS(defaults::scale(1.5), hookscope::value_error);
    CHECK(made == 0);
    CHECK(defaults::scale(1.5, 1.0, 1) == 1.5);  // nothing omitted: nothing thrown
    CHECK(made == 1);
  }
}
#endif

TEST_CASE("observable call with default arguments: an overload as good a match is C++'s choice (docs/observable.md)") {
  // convert_long annotates convert<long>(long, int = 1). For the by-name call convert(2L) the non-template
  // convert(long) is as good a match, and C++ prefers a non-template: the shorter call calls it, as the plain call
  // convert(2L) would (docs/observable.md: annotate the overload whose defaults you rely on under a name of its own).
  CHECK(defaults::convert_long(2, 1) == 102);
  CHECK(defaults::convert_long(2) == impl::convert(2L));
  CHECK(defaults::convert_long(2) != impl::convert<long>(2));
}

TEST_CASE("observable call with default arguments: a noexcept function whose default throws") {
  // The plain call by name evaluates the default in the caller, outside the noexcept function: the exception reaches
  // the caller, and the call expression is not noexcept. A shorter call must do as the plain call does.
  SECTION("the plain call: the caller catches the default's exception (the control)") {
    STATIC_REQUIRE_FALSE(noexcept(impl::guarded(1)));
    const int status = status_in_child([] { (void)impl::guarded(1); });
    CHECK(WIFEXITED(status));
    CHECK(WEXITSTATUS(status) == 0);
  }
  SECTION("the shorter call is noexcept only where the plain call is") {
    CHECK(noexcept(defaults::guarded(1)) == noexcept(impl::guarded(1)));
  }
  SECTION("the shorter call, nobody listening: the caller catches the default's exception") {
    const int status = status_in_child([] { (void)defaults::guarded(1); });
    CHECK(WIFEXITED(status));
    CHECK(WEXITSTATUS(status) == 0);
    CHECK_FALSE(WIFSIGNALED(status));
  }
  SECTION("the shorter call, observed: the caller catches the default's exception") {
    const int status = status_in_child([] {
      auto sub = defaults::guarded.observers.pre.add([](const auto&) {});
      (void)defaults::guarded(1);
    });
    CHECK(WIFEXITED(status));
    CHECK(WEXITSTATUS(status) == 0);
    CHECK_FALSE(WIFSIGNALED(status));
  }
  SECTION("a full call is unaffected") { CHECK(defaults::guarded(1, "ab") == 3); }
}

TEST_CASE("observable call with default arguments: a default naming the call's line names the annotation's") {
  // The plain call by name evaluates the default where the call is written; a shorter call evaluates it in the call
  // by name, which the annotation wrote (docs/observable.md: a std::source_location::current() default names the
  // annotation, not the caller).
  SECTION("the plain call (the control)") {
    const unsigned line = __LINE__ + 1;
    const unsigned seen = impl::line_of_call(0);
    CHECK(seen == line);
  }
  SECTION("the shorter call") {
    const unsigned line = __LINE__ + 1;
    const unsigned seen = defaults::line_of_call(0);
    CHECK(seen != line);
    CHECK(seen == defaults::line_of_call(1 - 1));  // the same line, wherever the call is
  }
}

TEST_CASE("annotation parameter names with defaults copied from the declaration") {
  // What follows '=' is skipped up to the comma that ends the parameter; each list names two parameters, `a` and
  // `b`, and must be accepted as HOOKSCOPE_OBSERVABLE(f, impl::f, <list>) would (checked at run time here, so that a
  // failure is a failed CHECK rather than a test file that does not compile). The macro form of each failing row
  // fails with "hookscope: HOOKSCOPE_OBSERVABLE: give exactly one name per parameter of the function" (or "is not
  // an identifier"), which names the wrong problem.
  using hookscope::detail::check_names;
  using hookscope::detail::names_problem;
  using hookscope::detail::split_names;
  const auto accepted = [](std::string_view list) {
    INFO(list);
    CHECK(check_names(list, 2) == names_problem::none);
    const std::array<std::string_view, 2> names = split_names<2>(list);
    CHECK(names[0] == "a");
    CHECK(names[1] == "b");
  };
  SECTION("a parenthesised comparison (what docs/observable.md advises for `b = x < y`)") {
    accepted("a = (x < y), b");
    accepted("a = (x <= 1), b = 2");
  }
  SECTION("a comparison inside a call's parentheses") {
    accepted("a = f(x < y), b");
    accepted("a = std::max(x > y, z), b");
  }
  SECTION("a shift") { accepted("a = 1 << 4, b = 2"); }
  SECTION("a lambda whose body compares") { accepted("a = [](int x, int y) { return x < y; }, b"); }
  SECTION("digit separators") {
    accepted("a = 1'000, b = 2");
    accepted("a = 0x7fff'ffff'ffff, b");
  }
  SECTION("a raw string literal holding a quote") {
    accepted("a = R\"(\")\", b");
    accepted("a = R\"x(a\", b)x\", b");
  }
  SECTION("what is accepted now: template arguments, quotes and braces") {
    accepted("a = std::map<int, int>{}, b = std::vector<int>{1, 2}");
    accepted("a = std::vector<std::pair<int, int>>{{1, 2}}, b = '\\''");
    accepted("a = \"<,>\", b = ','");
    accepted("a = (x >= 1), b = p->q");
  }
}
