// bench/observer.bench.cpp — what firing an observer costs, beside a plain call, libsigc++ and Boost.Signals2.
//
// Every benchmark makes the same [[gnu::noinline]] call as `plain_call` and then fires its signal, so its
// time minus plain_call's is the cost of the emission alone. Every callback, in every library, is the same
// functor doing the same tiny work (adding into a volatile counter), and each iteration emits once.
// tools/bench_table.py prints the medians, the differences to plain_call and the ratios between libraries.
#include "hookscope/observer.hpp"

#include <benchmark/benchmark.h>

#include "bench_context.hpp"

#include <cstdint>
#include <future>
#include <thread>

#ifdef HOOKSCOPE_BENCH_HAVE_SIGC
#include <sigc++/signal.h>
#endif
#ifdef HOOKSCOPE_BENCH_HAVE_SIGNALS2
#include <boost/signals2/signal.hpp>
#endif

namespace {

//=== the work, the baseline call and the harness ===//

volatile std::uint64_t sink = 0;  // the plain call and every callback add a + b into it

inline void tiny_work(int a, int b) { sink = sink + static_cast<std::uint64_t>(a + b); }

[[gnu::noinline]] void plain_function(int a, int b) { tiny_work(a, b); }

/// The one callback type every library registers.
struct add_to_sink {
  void operator()(const int& a, const int& b) const { tiny_work(a, b); }
};

constexpr int callbacks_if_enabled(int n) { return hookscope::hooks_enabled ? n : 0; }

/// Times `plain_function(a, b); fire(a, b);`, after checking that one firing runs `expected` callbacks.
template <class Fire>
void run(benchmark::State& state, int expected, Fire&& fire) {
  int a = 1;
  int b = 2;
  const std::uint64_t before = sink;
  plain_function(a, b);
  fire(a, b);
  const std::uint64_t calls = (sink - before) / static_cast<std::uint64_t>(a + b);
  if (calls != static_cast<std::uint64_t>(expected) + 1) {
    state.SkipWithError("one firing did not run the number of callbacks this benchmark is about");
    return;
  }
  for (auto _ : state) {
    benchmark::DoNotOptimize(a);  // opaque arguments: no constant propagation into the calls
    benchmark::DoNotOptimize(b);
    plain_function(a, b);
    fire(a, b);
  }
}


constinit hookscope::observer<int, int> on_nothing{"bench.on_nothing"};  // nothing ever registers here
constinit hookscope::observer<int, int> on_pair{"bench.on_pair"};        // each benchmark cleans up after itself

//=== baseline ===//

void plain_call(benchmark::State& state) {
  run(state, 0, [](int, int) {});
}

//=== no callback ===//

void observer_no_callback(benchmark::State& state) {
  run(state, 0, [](int a, int b) { on_nothing.observe(a, b); });
}

#ifdef HOOKSCOPE_BENCH_HAVE_SIGC
void sigc_no_slot(benchmark::State& state) {
  sigc::signal<void(int, int)> signal;
  run(state, 0, [&](int a, int b) { signal.emit(a, b); });
}
#endif

#ifdef HOOKSCOPE_BENCH_HAVE_SIGNALS2
void signals2_no_slot(benchmark::State& state) {
  boost::signals2::signal<void(int, int)> signal;
  run(state, 0, [&](int a, int b) { signal(a, b); });
}
#endif

//=== one callback ===//

// The callback lives in another, still running, thread's context: emission here walks past it.
void observer_other_thread_callback(benchmark::State& state) {
  std::promise<void> registered;
  std::promise<void> finished;
  std::thread listener([&] {
    [[maybe_unused]] const hookscope::subscription sub = on_pair.add(add_to_sink{});
    registered.set_value();
    finished.get_future().wait();  // the context, and with it the callback, ends with this thread
  });
  registered.get_future().wait();
  run(state, 0, [](int a, int b) { on_pair.observe(a, b); });
  finished.set_value();
  listener.join();
}

void observer_one_context_callback(benchmark::State& state) {
  [[maybe_unused]] const hookscope::subscription sub = on_pair.add(add_to_sink{});
  run(state, callbacks_if_enabled(1), [](int a, int b) { on_pair.observe(a, b); });
}

void observer_one_global_callback(benchmark::State& state) {
  [[maybe_unused]] const hookscope::subscription sub = on_pair.add_global(add_to_sink{});
  run(state, callbacks_if_enabled(1), [](int a, int b) { on_pair.observe(a, b); });
}

#ifdef HOOKSCOPE_BENCH_HAVE_SIGC
void sigc_one_slot(benchmark::State& state) {
  sigc::signal<void(int, int)> signal;
  signal.connect(add_to_sink{});
  run(state, 1, [&](int a, int b) { signal.emit(a, b); });
}
#endif

#ifdef HOOKSCOPE_BENCH_HAVE_SIGNALS2
void signals2_one_slot(benchmark::State& state) {
  boost::signals2::signal<void(int, int)> signal;
  signal.connect(add_to_sink{});
  run(state, 1, [&](int a, int b) { signal(a, b); });
}
#endif

//=== eight callbacks ===//

constexpr int eight = 8;

void observer_8_callbacks(benchmark::State& state) {
  hookscope::subscription subs[eight];
  for (auto& sub : subs) sub = on_pair.add(add_to_sink{});
  run(state, callbacks_if_enabled(eight), [](int a, int b) { on_pair.observe(a, b); });
}

#ifdef HOOKSCOPE_BENCH_HAVE_SIGC
void sigc_8_slots(benchmark::State& state) {
  sigc::signal<void(int, int)> signal;
  for (int i = 0; i < eight; ++i) signal.connect(add_to_sink{});
  run(state, eight, [&](int a, int b) { signal.emit(a, b); });
}
#endif

#ifdef HOOKSCOPE_BENCH_HAVE_SIGNALS2
void signals2_8_slots(benchmark::State& state) {
  boost::signals2::signal<void(int, int)> signal;
  for (int i = 0; i < eight; ++i) signal.connect(add_to_sink{});
  run(state, eight, [&](int a, int b) { signal(a, b); });
}
#endif

}  // namespace

// Registration order is run order: each shape's libraries run back to back, so drift hits them alike.
BENCHMARK(plain_call);

BENCHMARK(observer_no_callback);
#ifdef HOOKSCOPE_BENCH_HAVE_SIGC
BENCHMARK(sigc_no_slot);
#endif
#ifdef HOOKSCOPE_BENCH_HAVE_SIGNALS2
BENCHMARK(signals2_no_slot);
#endif

BENCHMARK(observer_other_thread_callback);
BENCHMARK(observer_one_context_callback);
BENCHMARK(observer_one_global_callback);
#ifdef HOOKSCOPE_BENCH_HAVE_SIGC
BENCHMARK(sigc_one_slot);
#endif
#ifdef HOOKSCOPE_BENCH_HAVE_SIGNALS2
BENCHMARK(signals2_one_slot);
#endif

BENCHMARK(observer_8_callbacks);
#ifdef HOOKSCOPE_BENCH_HAVE_SIGC
BENCHMARK(sigc_8_slots);
#endif
#ifdef HOOKSCOPE_BENCH_HAVE_SIGNALS2
BENCHMARK(signals2_8_slots);
#endif

BENCHMARK_MAIN();
