// The annotated functions, methods and helpers of the tests of calls leaving arguments to their defaults
// (default_arguments.test.cpp, default_arguments_observed.test.cpp): annotations in a header, as a library's would be,
// registered once however many test files include it.
#pragma once

#include "hookscope/observable.hpp"

#include <sys/wait.h>
#include <unistd.h>

#include <climits>
#include <csignal>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <initializer_list>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace defaults {

using hookscope::dtype;
using hookscope::tensor_spec;

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

inline tensor_spec ids(std::int64_t batch, std::int64_t length) { return {{batch, length}, dtype::int64}; }

/// Runs `call` in a child process and returns its wait status: exit 0 when the call threw std::runtime_error to its
/// caller, exit 1 when it returned; std::terminate shows as SIGABRT.
template <class Call>
inline int status_in_child(Call call) {
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
