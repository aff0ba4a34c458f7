// bench/observable.bench.cpp — what calling an observable function costs, beside calling the function itself.
//
// `observable_plain_call` calls the [[gnu::noinline]] implementation `impl::scale` directly; every other
// benchmark makes the same call through the annotation `scale`, so its time minus observable_plain_call's
// is the cost of the observation alone: the "anyone listening?" check, and with callbacks the observed slow
// path (call context, pre callbacks, the call, post callbacks). Every callback, typed or type-erased, does the
// same tiny work as the function (adding into a volatile counter), so one call's count of additions checks
// how many callbacks ran. The file is built twice: `observable_bench` in the build's mode and
// `observable_bench_disabled` with hooks compiled out, where every row should match observable_plain_call.
// tools/bench_table.py prints the medians, the differences to observable_plain_call and the targets.
#include "hookscope/observable.hpp"
#include "hookscope/registry.hpp"

#include <benchmark/benchmark.h>

#include "bench_context.hpp"

#include <cstdint>

#ifdef HOOKSCOPE_BENCH_HAVE_ENTT
#include <entt/signal/sigh.hpp>
#endif

namespace {

volatile std::uint64_t sink = 0;  // the function and every callback add one into it

inline void tiny_work() { sink = sink + 1; }

}  // namespace

//=== the observed function ===//

namespace impl {
[[gnu::noinline]] double scale(int x, double factor);

double scale(int x, double factor) {
  tiny_work();
  return x * factor;
}
}  // namespace impl

HOOKSCOPE_OBSERVABLE(scale, impl::scale, x, factor);

namespace {

//=== the callback and the harness ===//

/// The one callback every benchmark registers, typed (call_context) or type-erased (erased_call) alike.
struct count_call {
  template <class Call>
  void operator()(const Call&) const {
    tiny_work();
  }
};

constexpr int callbacks_if_enabled(int n) { return hookscope::hooks_enabled ? n : 0; }

constexpr int x_value = 3;
constexpr double factor_value = 0.5;

/// True if no callback listens to `scale` yet, typed or through the registry (HOOKSCOPE_TRACE adds some).
bool nobody_listens() {
  const hookscope::function_info* info = hookscope::find_observable("scale");
  return !scale.observers.pre.has_callbacks() && !scale.observers.post.has_callbacks() &&
         (info == nullptr || (!info->pre().has_callbacks() && !info->post().has_callbacks()));
}

/// Times `call(x, factor)`, after checking that one call returns the function's result and runs the function
/// and `expected` callbacks.
template <class Call>
void run(benchmark::State& state, int expected, Call&& call) {
  int x = x_value;
  double factor = factor_value;
  const std::uint64_t before = sink;
  const double once = call(x, factor);
  const std::uint64_t calls = sink - before;
  if (once != x_value * factor_value) {
    state.SkipWithError("one call did not return impl::scale's result");
    return;
  }
  if (calls != static_cast<std::uint64_t>(expected) + 1) {
    state.SkipWithError("one call did not run the number of callbacks this benchmark is about");
    return;
  }
  for (auto _ : state) {
    benchmark::DoNotOptimize(x);  // opaque arguments: no constant propagation into the calls
    benchmark::DoNotOptimize(factor);
    double result = call(x, factor);
    benchmark::DoNotOptimize(result);
  }
}

/// Every benchmark of the annotation starts with no callback of anyone else's on `scale`.
bool unobserved(benchmark::State& state) {
  if (nobody_listens()) return true;
  state.SkipWithError("callbacks registered elsewhere listen to scale (HOOKSCOPE_TRACE set?); they would be timed");
  return false;
}

//=== baseline ===//

void observable_plain_call(benchmark::State& state) {
  run(state, 0, [](int x, double factor) { return impl::scale(x, factor); });
}

//=== through the annotation ===//

void observable_no_callback(benchmark::State& state) {
  if (!unobserved(state)) return;
  run(state, 0, [](int x, double factor) { return scale(x, factor); });
}

// [[maybe_unused]]: with hooks disabled a subscription is an empty object, and Clang warns about unused ones.
void observable_pre_callback(benchmark::State& state) {
  if (!unobserved(state)) return;
  [[maybe_unused]] const hookscope::subscription pre = scale.observers.pre.add(count_call{});
  run(state, callbacks_if_enabled(1), [](int x, double factor) { return scale(x, factor); });
}

void observable_pre_post_callbacks(benchmark::State& state) {
  if (!unobserved(state)) return;
  [[maybe_unused]] const hookscope::subscription pre = scale.observers.pre.add(count_call{});
  [[maybe_unused]] const hookscope::subscription post = scale.observers.post.add(count_call{});
  run(state, callbacks_if_enabled(2), [](int x, double factor) { return scale(x, factor); });
}

// Through the registry, as code that knows only the name would: callbacks that count and format nothing.
void observable_erased_callbacks(benchmark::State& state) {
  if (!unobserved(state)) return;
  const hookscope::function_info* info = hookscope::find_observable("scale");
  if (hookscope::hooks_enabled && info == nullptr) {
    state.SkipWithError("hookscope::find_observable(\"scale\") found nothing in an enabled build");
    return;
  }
  hookscope::subscription pre;
  hookscope::subscription post;
  if (info != nullptr) {  // null in disabled builds, whose registry is empty
    pre = info->pre().add([](const hookscope::erased_call& call) { count_call{}(call); });
    post = info->post().add([](const hookscope::erased_call& call) { count_call{}(call); });
  }
  run(state, callbacks_if_enabled(2), [](int x, double factor) { return scale(x, factor); });
}

//=== the peer: EnTT's sigh around the same call (the real library, in this binary) ===//

#ifdef HOOKSCOPE_BENCH_HAVE_ENTT
void count_pre(int, double) { tiny_work(); }
void count_post(int, double, double) { tiny_work(); }

// What a hand-written hook with EnTT's signals costs: one publish before the call and one after it, each to one
// callback that does the same tiny work as ours. Unlike the annotation, nothing here is thread-safe (a callback
// disconnected while another thread publishes is undefined behaviour), scoped to a context or removable from a
// callback.
void entt_sigh_pre_post(benchmark::State& state) {
  entt::sigh<void(int, double)> pre;
  entt::sigh<void(int, double, double)> post;
  entt::sink{pre}.connect<&count_pre>();
  entt::sink{post}.connect<&count_post>();
  run(state, 2, [&](int x, double factor) {
    pre.publish(x, factor);
    const double result = impl::scale(x, factor);
    post.publish(x, factor, result);
    return result;
  });
}
#endif

}  // namespace

// Registration order is run order: the baseline first, then the annotation with more and more listening.
BENCHMARK(observable_plain_call);
BENCHMARK(observable_no_callback);
BENCHMARK(observable_pre_callback);
BENCHMARK(observable_pre_post_callbacks);
BENCHMARK(observable_erased_callbacks);
#ifdef HOOKSCOPE_BENCH_HAVE_ENTT
BENCHMARK(entt_sigh_pre_post);
#endif

BENCHMARK_MAIN();
