// The one clock of call timings (HOOKSCOPE_STATS, HOOKSCOPE_TIMELINE, and the latency of every record), and a call's
// start, which the first consumer that times the call takes and keeps in the call itself (erased_call's call_start):
// a call's end pairs with its own start with no table, whatever thread or fiber ends it, and a call that ends without
// its post callback leaves nothing behind.
//
// Time is read as ticks: the CPU's time-stamp counter where the kernel itself keeps time with it (a constant TSC,
// synchronised across CPUs: half the cost of clock_gettime, and comparable between threads), else CLOCK_MONOTONIC
// nanoseconds. Ticks become nanoseconds through a ratio measured from the clock's start to the conversion.
#pragma once

#include "hookscope/config.hpp"
#include "hookscope/erased_call.hpp"

#include <time.h>

#include <atomic>
#include <cmath>
#include <cstdint>

#if defined(__x86_64__) || defined(__i386__)
#include <x86intrin.h>
#define HOOKSCOPE_DETAIL_HAVE_TSC 1
#else
#define HOOKSCOPE_DETAIL_HAVE_TSC 0
#endif

HOOKSCOPE_DETAIL_BEGIN_NAMESPACE
namespace detail {

inline std::int64_t monotonic_ns() noexcept {
  timespec t{};
  clock_gettime(CLOCK_MONOTONIC, &t);
  return static_cast<std::int64_t>(t.tv_sec) * 1'000'000'000 + t.tv_nsec;
}

/// Ticks and their conversion to nanoseconds. The time source is chosen at the first reading (or start()), by any
/// thread: each one that finds it unchosen chooses the same, so no reading waits for another thread.
class tick_clock {
 public:
  /// Chooses the time source and remembers where the run starts (the features call it when they install, so that
  /// the ratio is measured over the whole run); the first reading does it otherwise.
  static void start() noexcept { (void)now(); }
  static std::int64_t now() noexcept {
    const int source = source_.load(std::memory_order_acquire);
#if HOOKSCOPE_DETAIL_HAVE_TSC
    if (source == tsc) return static_cast<std::int64_t>(__rdtsc());
#endif
    if (source == unchosen) return choose_and_read();
    return monotonic_ns();
  }
  /// Nanoseconds per tick, measured from the start to now (1 without the TSC); async-signal-safe. Take it once per
  /// report: it reads both clocks.
  static double ns_per_tick() noexcept;
  /// As ns_per_tick(), for a conversion per call (a record's latency), given a reading `now_ticks` just taken: the
  /// ratio measured over at least 64/65 of the run so far, measured again only when the run has grown by 1/64 since
  /// (reading the clocks at every call would cost more than the call's own two readings); async-signal-safe.
  static double recent_ns_per_tick(std::int64_t now_ticks) noexcept;
  /// The tick the clock started at.
  static std::int64_t start_ticks() noexcept {
    (void)now();
    return start_ticks_.load(std::memory_order_acquire);
  }
  /// CLOCK_MONOTONIC nanoseconds at the clock's start: where the copies of the library in one process (plugins) meet
  /// on one time base (src/environment/hub.hpp).
  static std::int64_t start_ns() noexcept {
    (void)now();
    return start_ns_.load(std::memory_order_acquire);
  }

 private:
  static constexpr int unchosen = 0, tsc = 1, monotonic = 2;
  [[gnu::cold]] static std::int64_t choose_and_read() noexcept;

  static constinit inline std::atomic<int> source_{unchosen};
  static constinit inline std::atomic<std::int64_t> start_ticks_{0};
  static constinit inline std::atomic<std::int64_t> start_ns_{0};
  // recent_ns_per_tick's last ratio, and the tick it was measured at (0: never).
  static constinit inline std::atomic<double> recent_ratio_{1.0};
  static constinit inline std::atomic<std::int64_t> recent_ratio_ticks_{0};
};

// Trivial and constant-initialised: valid in static and thread-local destructors, and read without a TLS wrapper
// call or guard. Numbered at the thread's first use, never reused: a thread-local's address is reused by a thread that
// replaces one that exited.
inline constinit thread_local std::uint64_t thread_serial = 0;

/// Numbers the calling thread (its first tag).
[[gnu::cold, gnu::noinline]] std::uint64_t number_this_thread() noexcept;

/// A number of the calling thread, unique among every thread the process has had (never 0).
inline std::uint64_t this_thread_tag() noexcept {
  const std::uint64_t tag = thread_serial;
  return tag != 0 ? tag : number_this_thread();
}

/// The call's start, taken now by the first consumer that asks (from its pre callback), the same for every later one.
inline call_start take_start(const erased_call& call) noexcept {
  call_start& start = call_access::start(call);
  if (start.ticks == 0) start = {tick_clock::now(), this_thread_tag()};
  return start;
}

/// The call's start if a consumer took it (ticks 0 when none did: its pre callbacks ran before anyone timed it).
inline call_start start_of(const erased_call& call) noexcept { return call_access::start(call); }

/// Ticks as the records give a latency: nanoseconds, rounded, never negative.
inline std::int64_t latency_ns(std::int64_t ticks, double ns_per_tick) noexcept {
  return std::llround(static_cast<double>(ticks < 0 ? 0 : ticks) * ns_per_tick);
}

/// Ticks from the call's start to `end` (never negative), or -1 when nobody took its start.
inline std::int64_t ticks_since_start(const erased_call& call, std::int64_t end) noexcept {
  const std::int64_t start = start_of(call).ticks;
  if (start == 0) return -1;
  return end >= start ? end - start : 0;
}

}  // namespace detail
HOOKSCOPE_DETAIL_END_NAMESPACE
