// bench/observer.bench.cpp — what firing an observer costs, beside a plain call, libsigc++, Boost.Signals2 and, when
// configured with -Dentt_include=DIR (tools/bench.sh --entt), EnTT's sigh.
//
// Every benchmark makes the same [[gnu::noinline]] call as `plain_call` and then fires its signal, so its
// time minus plain_call's is the cost of the emission alone. Every callback, in every library, is the same
// functor doing the same tiny work (adding into a volatile counter), and each iteration emits once.
// tools/bench_table.py prints the medians, the differences to plain_call and the ratios between libraries.
#include "hookscope/observer.hpp"

#include <benchmark/benchmark.h>

#include "bench_context.hpp"

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <future>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#ifdef HOOKSCOPE_BENCH_HAVE_SIGC
#include <sigc++/signal.h>
#endif
#ifdef HOOKSCOPE_BENCH_HAVE_SIGNALS2
#include <boost/signals2/signal.hpp>
#endif
#ifdef HOOKSCOPE_BENCH_HAVE_ENTT
#include <entt/signal/sigh.hpp>
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

//=== the EnTT-style baseline: a vector of function pointer + instance, not thread-safe ===//

/// What EnTT's `sigh` is: a vector of (function pointer, instance) delegates, walked with no synchronisation.
class delegate_vector {
 public:
  using fn = void (*)(const void*, const int&, const int&);
  struct delegate {
    fn call;
    const void* instance;
  };
  template <class F>
  std::size_t connect(const F& f) {
    delegates_.push_back(
        {[](const void* self, const int& a, const int& b) { (*static_cast<const F*>(self))(a, b); }, &f});
    return delegates_.size() - 1;
  }
  void disconnect(const void* instance) {
    for (auto it = delegates_.begin(); it != delegates_.end(); ++it) {
      if (it->instance == instance) {
        delegates_.erase(it);
        return;
      }
    }
  }
  void publish(const int& a, const int& b) const {
    for (const delegate& d : delegates_) d.call(d.instance, a, b);
  }

 private:
  std::vector<delegate> delegates_;
};

const add_to_sink the_callback{};

void delegate_one_callback(benchmark::State& state) {
  delegate_vector signal;
  signal.connect(the_callback);
  run(state, 1, [&](int a, int b) { signal.publish(a, b); });
}

//=== EnTT's sigh itself (the real library, in this binary) ===//

#ifdef HOOKSCOPE_BENCH_HAVE_ENTT
const add_to_sink entt_callbacks[eight]{};  // EnTT connects one (function, instance) pair once: eight instances

void entt_sigh_one_callback(benchmark::State& state) {
  entt::sigh<void(int, int)> signal;
  entt::sink sink{signal};
  sink.connect<&add_to_sink::operator()>(entt_callbacks[0]);
  run(state, 1, [&](int a, int b) { signal.publish(a, b); });
}

void entt_sigh_8_callbacks(benchmark::State& state) {
  entt::sigh<void(int, int)> signal;
  entt::sink sink{signal};
  for (const add_to_sink& callback : entt_callbacks) sink.connect<&add_to_sink::operator()>(callback);
  run(state, eight, [&](int a, int b) { signal.publish(a, b); });
}
#endif

//=== churn: add + remove one callback ===//

// Times one registration and its removal, beside the plain call (no emission).
template <class Churn>
void run_churn(benchmark::State& state, Churn&& churn) {
  int a = 1;
  int b = 2;
  for (auto _ : state) {
    benchmark::DoNotOptimize(a);
    benchmark::DoNotOptimize(b);
    plain_function(a, b);
    churn();
  }
}

void churn_plain_call(benchmark::State& state) {
  run_churn(state, [] {});
}

void observer_churn_context_callback(benchmark::State& state) {
  run_churn(state, [] {
    auto sub = on_pair.add(add_to_sink{});
    benchmark::DoNotOptimize(sub);
  });
}

// The same after 300 threads have come and gone, each having emitted and registered once.
void observer_churn_after_300_threads(benchmark::State& state) {
  for (int i = 0; i < 300; ++i) {
    std::thread([] {
      auto sub = on_pair.add(add_to_sink{});
      on_pair.observe(0, 0);
    }).join();
  }
  run_churn(state, [] {
    auto sub = on_pair.add(add_to_sink{});
    benchmark::DoNotOptimize(sub);
  });
}

void delegate_churn(benchmark::State& state) {
  delegate_vector signal;
  run_churn(state, [&] {
    signal.connect(the_callback);
    signal.disconnect(&the_callback);
  });
}

#ifdef HOOKSCOPE_BENCH_HAVE_ENTT
void entt_sigh_churn(benchmark::State& state) {
  entt::sigh<void(int, int)> signal;
  entt::sink sink{signal};
  run_churn(state, [&] {
    entt::connection c = sink.connect<&add_to_sink::operator()>(entt_callbacks[0]);
    c.release();
  });
}
#endif

#ifdef HOOKSCOPE_BENCH_HAVE_SIGC
void sigc_churn(benchmark::State& state) {
  sigc::signal<void(int, int)> signal;
  run_churn(state, [&] {
    sigc::connection c = signal.connect(add_to_sink{});
    c.disconnect();
  });
}
#endif

#ifdef HOOKSCOPE_BENCH_HAVE_SIGNALS2
void signals2_churn(benchmark::State& state) {
  boost::signals2::signal<void(int, int)> signal;
  run_churn(state, [&] {
    boost::signals2::connection c = signal.connect(add_to_sink{});
    c.disconnect();
  });
}
#endif

//=== one own callback while N other threads each hold a context callback on the same observer ===//

/// Starts `n` threads that each register a context callback on `on_pair` and wait until destroyed.
class other_listeners {
 public:
  explicit other_listeners(int n) {
    for (int i = 0; i < n; ++i) {
      threads_.emplace_back([this] {
        [[maybe_unused]] const hookscope::subscription sub = on_pair.add(add_to_sink{});
        std::unique_lock lock(mutex_);
        ++ready_;
        changed_.notify_all();
        changed_.wait(lock, [this] { return done_; });
      });
    }
    std::unique_lock lock(mutex_);
    changed_.wait(lock, [&] { return ready_ == n; });
  }
  other_listeners(const other_listeners&) = delete;
  other_listeners& operator=(const other_listeners&) = delete;
  ~other_listeners() {
    {
      const std::lock_guard lock(mutex_);
      done_ = true;
    }
    changed_.notify_all();
    for (auto& t : threads_) t.join();
  }

 private:
  std::mutex mutex_;
  std::condition_variable changed_;
  int ready_ = 0;
  bool done_ = false;
  std::vector<std::thread> threads_;
};

void observer_one_callback_others(benchmark::State& state) {
  const other_listeners others(static_cast<int>(state.range(0)));
  [[maybe_unused]] const hookscope::subscription sub = on_pair.add(add_to_sink{});
  run(state, callbacks_if_enabled(1), [](int a, int b) { on_pair.observe(a, b); });
}

//=== two threads emitting on one observer (real time per emission in each thread) ===//

// Each thread's work goes to its own cache line, so that only the library under test could share one.
struct alignas(64) thread_sink {
  volatile std::uint64_t value = 0;
};

[[gnu::noinline]] void plain_function_into(thread_sink* out, int a, int b) {
  out->value = out->value + static_cast<std::uint64_t>(a + b);
}

struct add_to_thread_sink {
  thread_sink* out;
  void operator()(const int& a, const int& b) const { out->value = out->value + static_cast<std::uint64_t>(a + b); }
};

template <class Fire>
void run_threaded(benchmark::State& state, thread_sink& out, Fire&& fire) {
  int a = 1;
  int b = 2;
  for (auto _ : state) {
    benchmark::DoNotOptimize(a);
    benchmark::DoNotOptimize(b);
    plain_function_into(&out, a, b);
    fire(a, b);
  }
}

constinit hookscope::observer<int, int> on_pair_threads{"bench.on_pair_threads"};

void delegate_emit_threads(benchmark::State& state) {
  thread_sink out;
  delegate_vector signal;  // one per thread: the baseline of a thread's own callbacks
  const add_to_thread_sink callback{&out};
  signal.connect(callback);
  run_threaded(state, out, [&](int a, int b) { signal.publish(a, b); });
}

// Each thread's own context callback on the one shared observer.
void observer_emit_threads(benchmark::State& state) {
  thread_sink out;
  [[maybe_unused]] const hookscope::subscription sub = on_pair_threads.add(add_to_thread_sink{&out});
  run_threaded(state, out, [](int a, int b) { on_pair_threads.observe(a, b); });
}
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

BENCHMARK(delegate_one_callback);
#ifdef HOOKSCOPE_BENCH_HAVE_ENTT
BENCHMARK(entt_sigh_one_callback);
#endif

BENCHMARK(observer_8_callbacks);
#ifdef HOOKSCOPE_BENCH_HAVE_SIGC
BENCHMARK(sigc_8_slots);
#endif
#ifdef HOOKSCOPE_BENCH_HAVE_SIGNALS2
BENCHMARK(signals2_8_slots);
#endif
#ifdef HOOKSCOPE_BENCH_HAVE_ENTT
BENCHMARK(entt_sigh_8_callbacks);
#endif

BENCHMARK(churn_plain_call);
BENCHMARK(observer_churn_context_callback);
BENCHMARK(observer_churn_after_300_threads);
BENCHMARK(delegate_churn);
#ifdef HOOKSCOPE_BENCH_HAVE_ENTT
BENCHMARK(entt_sigh_churn);
#endif
#ifdef HOOKSCOPE_BENCH_HAVE_SIGC
BENCHMARK(sigc_churn);
#endif
#ifdef HOOKSCOPE_BENCH_HAVE_SIGNALS2
BENCHMARK(signals2_churn);
#endif

BENCHMARK(observer_one_callback_others)->Arg(0)->Arg(8)->Arg(64)->Arg(256);

// Real time per emission in each thread: with 2 threads and no shared line written, it stays the 1-thread time.
BENCHMARK(delegate_emit_threads)->Threads(1)->Threads(2)->UseRealTime();
BENCHMARK(observer_emit_threads)->Threads(1)->Threads(2)->UseRealTime();

BENCHMARK_MAIN();
