// Calls of annotated functions that leave trailing arguments to their defaults (hookscope/observable.hpp), and how
// callbacks, captures and records see them: the omitted arguments are absent (call_context.hpp, erased_call.hpp).
#include "hookscope/observable.hpp"
#include "hookscope/load.hpp"
#include "hookscope/recorder.hpp"
#include "hookscope/records.hpp"
#include "hookscope/registry.hpp"
#include "hookscope/value_errors.hpp"

#include <catch2/catch.hpp>

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

namespace defaults {

namespace impl {
inline double scale(double x, double factor = 2.0, int times = 1) { return x * factor * times; }
// Two overloads: a call by name with an int would pick the second; the annotated one takes doubles.
inline double pick(double x, double s = 10.0) { return x * s; }
inline double pick(int x) { return -x; }
inline int consume(std::unique_ptr<int> p, std::unique_ptr<int> q = nullptr) { return *p + (q ? *q : 100); }
inline void bump(int& counter, const int& by = 1) { counter += by; }
inline int quiet(int x, int y = 5) noexcept { return x * y; }
inline void append(std::string& out, const std::string& s = "<default>") { out += s; }
inline int countdown(int n, int step = 1);
inline int mix(int a = 1, int b = 20, int c = 300) { return a + b + c; }
inline std::string describe(std::string s, double d = -1.5, long long n = LLONG_MIN) {
  return s + "|" + std::to_string(d) + "|" + std::to_string(n);
}
inline std::string throwing_default() { throw std::runtime_error("the default threw"); }
// noexcept covers the function's body; its default is evaluated by the caller, so what it throws reaches the caller.
inline int guarded(int a, std::string s = throwing_default()) noexcept { return a + static_cast<int>(s.size()); }
// A default naming where the call is written (what std::source_location::current() also does): the caller's line.
inline unsigned line_of_call(int a, unsigned line = __builtin_LINE()) { return a == 0 ? line : 0; }
inline int sum(std::initializer_list<int> values, int times = 1) {
  int total = 0;
  for (const int v : values) total += v;
  return total * times;
}
inline int& element(std::vector<int>& v, std::size_t i = 0) { return v[i]; }
inline std::size_t sink(std::string&& s, std::size_t keep = 2) {
  return std::string(std::move(s)).substr(0, keep).size();
}
// Counts its live objects: a default's temporary lives to the end of the full-expression that holds the call.
struct counted {
  static inline int live = 0;
  counted() noexcept { ++live; }
  counted(const counted&) noexcept { ++live; }
  ~counted() { --live; }
};
// What engineers write as `const std::string& get(key, const std::string& fallback = {})`, returning `fallback`:
// the caller may use the result until the end of its full-expression.
inline int fallback_live(int a, const counted& fallback = counted()) { return (void)fallback, a + counted::live; }
// A template and a non-template overload: the annotated one is the template's specialisation for long.
template <class T>
inline int convert(T x, int k = 1) {
  return 100 + static_cast<int>(x) * k;
}
inline int convert(long x) { return -static_cast<int>(x); }
struct tools {
  static int twice(int x, int by = 2) { return x * by; }
};
inline tensor_spec forward(const tensor_spec& input_ids,
                           const std::optional<tensor_spec>& attention_mask = std::nullopt) {
  (void)attention_mask;
  return {{input_ids.shape[0], input_ids.shape[1], 8}, dtype::float32};
}
}  // namespace impl

HOOKSCOPE_OBSERVABLE(scale, impl::scale, x, factor = 2.0, times = 1);
HOOKSCOPE_OBSERVABLE_OVERLOAD(pick, double(double, double), impl::pick, x, s = 10.0);
HOOKSCOPE_OBSERVABLE(consume, impl::consume, p, q = nullptr);
HOOKSCOPE_OBSERVABLE(bump, impl::bump, counter, by = 1);
HOOKSCOPE_OBSERVABLE(quiet, impl::quiet, x, y = 5);
HOOKSCOPE_OBSERVABLE(append, impl::append, out, s = "<default>, with a comma");
HOOKSCOPE_OBSERVABLE(countdown, impl::countdown, n, step = 1);
HOOKSCOPE_OBSERVABLE(mix, impl::mix, a = 1, b = 20, c = 300);
HOOKSCOPE_OBSERVABLE(describe, impl::describe, s, d = -1.5, n = LLONG_MIN);
HOOKSCOPE_OBSERVABLE(guarded, impl::guarded, a, s = throwing_default());
HOOKSCOPE_OBSERVABLE(line_of_call, impl::line_of_call, a, line = __builtin_LINE());
HOOKSCOPE_OBSERVABLE(sum, impl::sum, values, times = 1);
HOOKSCOPE_OBSERVABLE(element, impl::element, v, i = 0);
HOOKSCOPE_OBSERVABLE(sink, impl::sink, s, keep = 2);
HOOKSCOPE_OBSERVABLE(fallback_live, impl::fallback_live, a, fallback = counted());
HOOKSCOPE_OBSERVABLE(twice, impl::tools::twice, x, by = 2);
HOOKSCOPE_OBSERVABLE_OVERLOAD(convert_long, int(long, int), impl::convert, x, k = 1);
namespace api {
using impl::scale;  // a using-declaration: the by-name call through it sees the same defaults
}  // namespace api
HOOKSCOPE_OBSERVABLE(scale_through_using, api::scale, x, factor = 2.0, times = 1);
HOOKSCOPE_OBSERVABLE(forward, impl::forward, input_ids, attention_mask = std::nullopt);

inline int impl::countdown(int n, int step) { return n <= 0 ? 0 : 1 + defaults::countdown(n - step); }

struct model {
  int offset = 0;
  int forward_impl(int ids, int mask = 7) const { return ids * 100 + mask + offset; }
  int step_impl(int a = 1, int b = 2, int c = 3) {
    offset += a;
    return a * 100 + b * 10 + c;
  }
  HOOKSCOPE_OBSERVABLE_METHOD(model, forward, forward_impl, ids, mask = 7);
  HOOKSCOPE_OBSERVABLE_METHOD(model, step, step_impl, a = 1, b = 2, c = 3);
};

template <class T>
struct typed_model {
  T scale_impl(T x, T by = T(2)) const { return x * by; }
  std::vector<T> fill_impl(std::size_t n, std::vector<T> tail = std::vector<T>{T(1), T(2)}) {
    tail.insert(tail.begin(), n, T(0));
    return tail;
  }
  HOOKSCOPE_OBSERVABLE_METHOD(typed_model, scale, scale_impl, x, by = T(2));
  HOOKSCOPE_OBSERVABLE_METHOD(typed_model, fill, fill_impl, n, tail = std::vector<T>{T(1), T(2)});
};

tensor_spec ids(std::int64_t batch, std::int64_t length) { return {{batch, length}, dtype::int64}; }

/// Runs `call` in a child process and returns its wait status: exit 0 when the call threw std::runtime_error to its
/// caller, exit 1 when it returned; std::terminate shows as SIGABRT.
template <class Call>
int status_in_child(Call call) {
  std::fflush(nullptr);
  const pid_t pid = ::fork();
  if (pid == 0) {
    std::signal(SIGABRT, SIG_DFL);  // std::terminate ends the child, not Catch2's handler that reports and goes on
    try {
      call();
    } catch (const std::runtime_error&) {
      ::_exit(0);
    }
    ::_exit(1);
  }
  int status = -1;
  if (pid > 0) ::waitpid(pid, &status, 0);
  return status;
}

}  // namespace defaults

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

#if HOOKSCOPE_ENABLED

TEST_CASE("call_context::has_arg, find_arg and arg with omitted arguments") {
  std::vector<std::string> seen;
  auto sub = defaults::scale.observers.pre.add([&](const auto& ctx) {
    std::string line = std::to_string(ctx.args_given());
    line += ctx.template has_arg<0>() ? " x" : " -";
    line += ctx.template has_arg<"factor">() ? " factor" : " -";
    line += ctx.template has_arg<2>() ? " times" : " -";
    CHECK(ctx.template find_arg<"x">() == &ctx.template arg<0>());
    CHECK((ctx.template find_arg<1>() == nullptr) == !ctx.template has_arg<1>());
    CHECK((ctx.template find_arg<"times">() == nullptr) == !ctx.has_arg(2));  // the erased form too
    if (ctx.template has_arg<"factor">()) line += " " + std::to_string(ctx.template arg<"factor">());
    seen.push_back(line);
  });
  defaults::scale(1.0);
  defaults::scale(1.0, 4.0);
  defaults::scale(1.0, 4.0, 2);
  CHECK(seen == std::vector<std::string>{"1 x - -", "2 x factor - 4.000000", "3 x factor times 4.000000"});

  SECTION("arg and args on an omitted argument throw value_error naming the function and the argument") {
    std::vector<std::string> errors;
    auto thrower = defaults::scale.observers.pre.add([&](const auto& ctx) {
      try {
        (void)ctx.template arg<"times">();
      } catch (const hookscope::value_error& e) {
        errors.emplace_back(e.what());
      }
      try {
        (void)ctx.template arg<2>();
      } catch (const hookscope::value_error& e) {
        errors.emplace_back(e.what());
      }
      try {
        (void)ctx.args();
      } catch (const hookscope::value_error& e) {
        errors.emplace_back(e.what());
      }
    });
    defaults::scale(1.0, 2.0);
    REQUIRE(errors.size() == 3);
    CHECK_THAT(errors[0], Contains("hookscope: call_context::arg<\"times\">()") &&
                              Contains("'defaults::scale' omitted argument 2 ('times')") && Contains("has_arg"));
    CHECK_THAT(errors[1], Contains("hookscope: call_context::arg<2>()") && Contains("('times')"));
    CHECK_THAT(errors[2], Contains("hookscope: call_context::args()") && Contains("argument 2 ('times')"));
    errors.clear();
    defaults::scale(1.0, 2.0, 3);  // nothing omitted: nothing thrown
    CHECK(errors.empty());
  }
  SECTION("post callbacks see the same arguments and the result") {
    std::vector<std::pair<std::size_t, double>> post;
    auto after = defaults::scale.observers.post.add(
        [&](const auto& ctx) { post.emplace_back(ctx.args_given(), *ctx.return_value()); });
    defaults::scale(2.0);
    CHECK(post == std::vector<std::pair<std::size_t, double>>{{1, 4.0}});
  }
}

TEST_CASE("erased_call with omitted arguments") {
  std::vector<std::string> lines;
  std::vector<std::size_t> field_counts;
  auto sub = defaults::describe.info.pre().add([&](const hookscope::erased_call& call) {
    std::string line = std::to_string(call.args_given()) + "/" + std::to_string(call.arg_count());
    for (std::size_t i = 0; i < call.arg_count(); ++i) {
      line += call.has_arg(i) ? " +" : " -";
      CHECK((call.arg_address(i) == nullptr) == !call.has_arg(i));
      if (!call.has_arg(i)) CHECK(call.format_arg(i).empty());
    }
    CHECK_FALSE(call.has_arg(call.arg_count()));
    CHECK(call.arg_address(99) == nullptr);
    const hookscope::value_fields fields = call.capture_args();
    field_counts.push_back(fields.size());
    for (std::size_t i = 0; i < fields.size(); ++i) CHECK(fields[i].first == call.arg_name(i));
    lines.push_back(line);
  });
  defaults::describe("a");
  defaults::describe("a", 1.0);
  defaults::describe("a", 1.0, 2);
  CHECK(lines == std::vector<std::string>{"1/3 + - -", "2/3 + + -", "3/3 + + +"});
  CHECK(field_counts == std::vector<std::size_t>{1, 2, 3});
}

TEST_CASE("call_recorder with omitted arguments") {
  hookscope::call_recorder rec(defaults::forward, {.store_n_calls = hookscope::unlimited});
  defaults::forward(ids(1, 5));
  defaults::forward(ids(1, 6), ids(1, 6));
  defaults::forward(ids(2, 7));
  rec.stop();
  const std::vector<hookscope::call_record> calls = rec.calls();
  REQUIRE(calls.size() == 3);
  CHECK(calls[0].inputs.kwargs == hookscope::value_fields{{"input_ids", ids(1, 5)}});
  CHECK(calls[1].inputs.kwargs == hookscope::value_fields{{"input_ids", ids(1, 6)}, {"attention_mask", ids(1, 6)}});
  CHECK(calls[2].inputs.kwargs == hookscope::value_fields{{"input_ids", ids(2, 7)}});

  SECTION("round trip: what the recorder writes, the reader reads, with no entry for the omitted argument") {
    std::vector<std::string> lines;
    const std::string text = rec.to_jsonl();
    for (std::size_t start = 0; start < text.size();) {
      const std::size_t end = text.find('\n', start);
      lines.push_back(text.substr(start, end - start));
      start = end == std::string::npos ? text.size() : end + 1;
    }
    REQUIRE(lines.size() == 3);
    for (std::size_t i = 0; i < lines.size(); ++i) {
      const hookscope::call_record read = hookscope::parse_record(lines[i]);
      CHECK(read.inputs.kwargs == calls[i].inputs.kwargs);
      INFO(lines[i]);
      CHECK((lines[i].find(R"(["attention_mask",)") != std::string::npos) == (i == 1));  // a kwargs entry
    }
  }
  SECTION("the shapes inferred from such records treat the omitted argument as an absent optional input") {
    const auto path = std::filesystem::temp_directory_path() /
                      ("hookscope_default_arguments_" + std::to_string(::getpid()) + ".jsonl");
    rec.write_jsonl(path);
    const hookscope::loaded_engine loaded = hookscope::load_engine({path.string()});
    std::filesystem::remove(path);
    CHECK(loaded.calls_read == 3);
    const std::string shapes = loaded.engine.infer_dynamic_shapes().to_json();
    // input_ids is 1x5, 1x6, 2x7: both dimensions vary; attention_mask, given once (1x6), varies in none.
    CHECK(shapes == R"({"input_ids":{"0":"DYNAMIC","1":"DYNAMIC"},"attention_mask":{}})");
  }
}

TEST_CASE("observable call with default arguments: property, random counts of arguments given") {
  // Each call gives the first k of mix's three arguments (random values); the callback must see exactly those, and
  // the result must be the plain call's with the same arguments.
  std::mt19937 random(20261203);
  std::uniform_int_distribution<int> value_of(INT_MIN / 4, INT_MAX / 4);
  std::size_t expected_given = 0;
  std::array<int, 3> given{};
  std::size_t checked = 0;
  auto sub = defaults::mix.observers.pre.add([&](const auto& ctx) {
    CHECK(ctx.args_given() == expected_given);
    CHECK(ctx.template has_arg<0>() == (expected_given > 0));
    CHECK(ctx.template has_arg<1>() == (expected_given > 1));
    CHECK(ctx.template has_arg<2>() == (expected_given > 2));
    if (const int* a = ctx.template find_arg<"a">()) CHECK(*a == given[0]);
    if (const int* b = ctx.template find_arg<"b">()) CHECK(*b == given[1]);
    if (const int* c = ctx.template find_arg<"c">()) CHECK(*c == given[2]);
    CHECK(ctx.capture_args().size() == expected_given);
    ++checked;
  });
  for (int round = 0; round < 200; ++round) {
    expected_given = static_cast<std::size_t>(round % 4);
    for (int& g : given) g = value_of(random);
    int result = 0;
    int plain = 0;
    switch (expected_given) {
      case 0:
        result = defaults::mix();
        plain = impl::mix();
        break;
      case 1:
        result = defaults::mix(given[0]);
        plain = impl::mix(given[0]);
        break;
      case 2:
        result = defaults::mix(given[0], given[1]);
        plain = impl::mix(given[0], given[1]);
        break;
      default: result = defaults::mix(given[0], given[1], given[2]); plain = impl::mix(given[0], given[1], given[2]);
    }
    CHECK(result == plain);
  }
  CHECK(checked == 200);
}

TEST_CASE("observable call with default arguments: hostile values given before the omitted ones") {
  struct row {
    std::string s;
    std::optional<double> d;
  };
  const double inf = std::numeric_limits<double>::infinity();
  const std::vector<row> table{
      {"", std::nullopt},
      {std::string("\xff\xfe\x80 not UTF-8", 13), std::nullopt},
      {std::string("nul\0inside", 10), inf},
      {"nan", std::numeric_limits<double>::quiet_NaN()},
      {"-inf", -inf},
      {std::string(10000, 'x'), std::numeric_limits<double>::max()},
      {"\"quoted\", with a comma", -0.0},
  };
  std::vector<std::string> formatted;
  std::vector<std::size_t> captured;
  auto sub = defaults::describe.info.pre().add([&](const hookscope::erased_call& call) {
    std::string all;
    for (std::size_t i = 0; i < call.args_given(); ++i) all += call.format_arg(i) + ";";
    formatted.push_back(all);
    captured.push_back(call.capture_args().size());
  });
  for (const row& r : table) {
    const std::string got = r.d ? defaults::describe(r.s, *r.d) : defaults::describe(r.s);
    CHECK(got == (r.d ? impl::describe(r.s, *r.d) : impl::describe(r.s)));
  }
  REQUIRE(captured.size() == table.size());
  for (std::size_t i = 0; i < table.size(); ++i) CHECK(captured[i] == (table[i].d ? 2u : 1u));
  CHECK(formatted[0] == "\"\";");  // the empty string given (quoted), nothing for the omitted ones
}

TEST_CASE("observable call with default arguments from many threads") {
  std::atomic<int> omitted{0};
  std::atomic<int> given{0};
  auto sub = defaults::scale.observers.pre.add_global([&](const auto& ctx) {
    (ctx.template has_arg<"factor">() ? given : omitted).fetch_add(1, std::memory_order_relaxed);
  });
  std::vector<std::thread> threads;
  std::atomic<bool> all_right{true};
  for (int t = 0; t < 8; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < 500; ++i) {
        const double r = (i + t) % 2 == 0 ? defaults::scale(1.0) : defaults::scale(1.0, 3.0);
        if (r != ((i + t) % 2 == 0 ? 2.0 : 3.0)) all_right = false;
      }
    });
  }
  for (std::thread& t : threads) t.join();
  CHECK(all_right);
  CHECK(omitted == 2000);
  CHECK(given == 2000);
}

TEST_CASE("observable call with default arguments: a recursion and nested callbacks") {
  std::vector<std::size_t> given;
  auto sub = defaults::countdown.observers.pre.add([&](const auto& ctx) { given.push_back(ctx.args_given()); });
  CHECK(defaults::countdown(3, 1) == 3);
  CHECK(given == std::vector<std::size_t>{2, 1, 1, 1});  // the recursion's calls omit `step`
}

TEST_CASE("observable method call with default arguments and callbacks") {
  model m;
  std::vector<std::string> seen;
  auto sub = model::step_observers().pre.add([&](const auto& ctx) {
    std::string line = std::to_string(ctx.args_given());
    for (std::size_t i = 0; i < 3; ++i) line += ctx.has_arg(i) ? "+" : "-";
    seen.push_back(line);
  });
  auto post = model::forward_observers().post.add([&](const auto& ctx) {
    seen.push_back("forward " + std::to_string(ctx.args_given()) + " " + std::to_string(*ctx.return_value()));
  });
  m.step();
  m.step(1, 2);
  std::as_const(m).forward(1);
  CHECK(seen == std::vector<std::string>{"0---", "2++-", "forward 1 109"});
}

TEST_CASE("observable call with default arguments and callbacks: references, void, noexcept") {
  std::vector<std::string> seen;
  auto on_bump = defaults::bump.observers.pre.add([&](const auto& ctx) {
    seen.push_back("bump " + std::to_string(ctx.template arg<"counter">()) +
                   (ctx.template has_arg<"by">() ? " by " + std::to_string(ctx.template arg<"by">()) : ""));
  });
  auto on_append = defaults::append.observers.post.add([&](const auto& ctx) {
    seen.push_back("append " + ctx.template arg<"out">() + (ctx.template has_arg<"s">() ? " s" : ""));
  });
  auto on_quiet = defaults::quiet.observers.post.add(
      [&](const auto& ctx) { seen.push_back("quiet " + std::to_string(*ctx.return_value())); });
  int counter = 1;
  defaults::bump(counter);  // the callback sees the caller's object, before the call changes it
  defaults::bump(counter, 3);
  std::string out = "[";
  defaults::append(out);
  CHECK(defaults::quiet(3) == 15);
  CHECK(counter == 5);
  CHECK(seen == std::vector<std::string>{"bump 1", "bump 2 by 3", "append [<default>", "quiet 15"});
}

TEST_CASE("observable call with an omitted move-only argument and callbacks") {
  std::vector<int> seen;
  auto sub = defaults::consume.observers.pre.add([&](const auto& ctx) {
    seen.push_back(**ctx.template find_arg<"p">());
    seen.push_back(ctx.template find_arg<"q">() == nullptr ? -1 : **ctx.template find_arg<"q">());
  });
  CHECK(defaults::consume(std::make_unique<int>(4)) == 104);
  CHECK(seen == std::vector<int>{4, -1});
}

#else

TEST_CASE("observable call with default arguments in a disabled build observes nothing") {
  int calls = 0;
  auto sub = defaults::scale.observers.pre.add([&](const auto&) { ++calls; });
  CHECK(defaults::scale(1.0) == 2.0);
  CHECK(calls == 0);
}

#endif
