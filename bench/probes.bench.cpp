// bench/probes.bench.cpp — what an annotation's USDT probes cost (docs/probes.md), beside the plain call, the same
// annotation without probes, and the probe <sys/sdt.h>'s users write by hand.
//
// Every benchmark makes the same [[gnu::noinline]] call `impl::scale(x, factor)`: directly (probes_plain_call),
// through the macro annotation `scale` (whose probes are compiled in when the build has USDT), through a hand-written
// observable type of the same function (`by_hand`: the same observers, never any probe), or after the
// `if (semaphore) STAP_PROBE(...)` a `dtrace -h` header gives (the peer). Rows:
//   *_idle        nobody listening: the cost of the checks alone;
//   *_raised      the probes' semaphores raised by the benchmark itself, as an attached tool raises them, but no tool
//                 on the probes, which stay `nop`s: the cost of preparing the operands and taking the probed path
//                 (a real uprobe adds the kernel's trap, microseconds, on top);
//   *_pre_post    a pre and a post callback in the process, the probes idle.
// tools/bench_table.py prints the medians and the differences, and checks the idle row against its target.
#include "hookscope/observable.hpp"

#include <benchmark/benchmark.h>

#include <cstdint>

namespace {

volatile std::uint64_t sink = 0;

}  // namespace

namespace impl {
[[gnu::noinline]] double scale(int x, double factor) {
  sink = sink + 1;
  return x * factor;
}
}  // namespace impl

HOOKSCOPE_OBSERVABLE(scale, impl::scale, x, factor);

namespace {

using by_hand_type = hookscope::observable<&impl::scale, "scale_by_hand", "x, factor">;
constexpr by_hand_type by_hand{};

#if HOOKSCOPE_DETAIL_PROBES
// The peer: a probe of <sys/sdt.h> with its semaphore, as a `dtrace -h` header declares and tests it.
extern "C" {
__extension__ unsigned short bench_scale_by_sdt_semaphore __attribute__((section(".probes"), used)) = 0;
}
[[gnu::always_inline]] inline double sdt_by_hand(int x, double factor) {
  if (__builtin_expect(bench_scale_by_sdt_semaphore, 0)) STAP_PROBE2(bench, scale_by_sdt, x, &factor);
  return impl::scale(x, factor);
}
extern "C" [[gnu::visibility("hidden")]] unsigned hookscope_scale__probes;  // both of scale's semaphores
void raise_probes(unsigned word) {
  __atomic_store_n(&hookscope_scale__probes, word, __ATOMIC_RELAXED);
  bench_scale_by_sdt_semaphore = static_cast<unsigned short>(word != 0);
}
#endif

struct count_call {
  template <class Call>
  void operator()(const Call&) const {
    sink = sink + 1;
  }
};

template <class Call>
void run(benchmark::State& state, Call&& call) {
  int x = 3;
  double factor = 0.5;
  if (call(x, factor) != 1.5) {
    state.SkipWithError("one call did not return impl::scale's result");
    return;
  }
  for (auto _ : state) {
    benchmark::DoNotOptimize(x);
    benchmark::DoNotOptimize(factor);
    double result = call(x, factor);
    benchmark::DoNotOptimize(result);
  }
}

/// Raises the probes' semaphores for one benchmark (a no-op, reported as an error, in a build without probes).
struct raised {
  explicit raised(benchmark::State& state) {
#if HOOKSCOPE_DETAIL_PROBES
    raise_probes(0x00010001u);
    (void)state;
#else
    state.SkipWithError("this build has no probes (hooks disabled, or -Dusdt found no <sys/sdt.h>)");
#endif
  }
  ~raised() {
#if HOOKSCOPE_DETAIL_PROBES
    raise_probes(0);
#endif
  }
  raised(const raised&) = delete;
  raised& operator=(const raised&) = delete;
};

bool has_probes(benchmark::State& state) {
  if (hookscope::probes_enabled) return true;
  state.SkipWithError("this build has no probes (hooks disabled, or -Dusdt found no <sys/sdt.h>)");
  return false;
}

void probes_plain_call(benchmark::State& state) {
  run(state, [](int x, double f) { return impl::scale(x, f); });
}

void probes_without_probes_idle(benchmark::State& state) {
  run(state, [](int x, double f) { return by_hand(x, f); });
}

void probes_idle(benchmark::State& state) {
  run(state, [](int x, double f) { return scale(x, f); });
}

void probes_sdt_by_hand_idle(benchmark::State& state) {
  if (!has_probes(state)) return;
#if HOOKSCOPE_DETAIL_PROBES
  run(state, [](int x, double f) { return sdt_by_hand(x, f); });
#endif
}

void probes_raised(benchmark::State& state) {
  raised tool(state);
  if (state.error_occurred()) return;
  run(state, [](int x, double f) { return scale(x, f); });
}

void probes_sdt_by_hand_raised(benchmark::State& state) {
  raised tool(state);
  if (state.error_occurred()) return;
#if HOOKSCOPE_DETAIL_PROBES
  run(state, [](int x, double f) { return sdt_by_hand(x, f); });
#endif
}

// [[maybe_unused]]: with hooks disabled a subscription is an empty object, and Clang warns about unused ones.
void probes_without_probes_pre_post(benchmark::State& state) {
  [[maybe_unused]] const hookscope::subscription pre = by_hand.observers.pre.add(count_call{});
  [[maybe_unused]] const hookscope::subscription post = by_hand.observers.post.add(count_call{});
  run(state, [](int x, double f) { return by_hand(x, f); });
}

void probes_pre_post(benchmark::State& state) {
  [[maybe_unused]] const hookscope::subscription pre = scale.observers.pre.add(count_call{});
  [[maybe_unused]] const hookscope::subscription post = scale.observers.post.add(count_call{});
  run(state, [](int x, double f) { return scale(x, f); });
}

}  // namespace

BENCHMARK(probes_plain_call);
BENCHMARK(probes_without_probes_idle);
BENCHMARK(probes_idle);
BENCHMARK(probes_sdt_by_hand_idle);
BENCHMARK(probes_raised);
BENCHMARK(probes_sdt_by_hand_raised);
BENCHMARK(probes_without_probes_pre_post);
BENCHMARK(probes_pre_post);

BENCHMARK_MAIN();
