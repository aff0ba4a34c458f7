// When each call in flight on this thread started, for HOOKSCOPE_STATS and HOOKSCOPE_TIMELINE. A trivially
// destructible thread-local (constinit): it works in static and thread-local destructors too, and costs no guard.
//
// Time is read as ticks: the CPU's time-stamp counter where the kernel itself keeps time with it (a constant,
// synchronised TSC: half the cost of clock_gettime), else CLOCK_MONOTONIC nanoseconds. Ticks become nanoseconds
// through a ratio measured over the whole run when the results are written.
#pragma once

#include "hookscope/config.hpp"

#include <time.h>

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

/// Ticks and their conversion to nanoseconds; `start()` once before the first tick is taken.
class tick_clock {
 public:
  /// Chooses the time source and remembers where the run starts (at install, from a static initialiser).
  static void start() noexcept;
  static std::int64_t now() noexcept {
#if HOOKSCOPE_DETAIL_HAVE_TSC
    if (use_tsc_) return static_cast<std::int64_t>(__rdtsc());
#endif
    return monotonic_ns();
  }
  /// Nanoseconds per tick, measured from start() to now (1 without the TSC); async-signal-safe. Take it once per
  /// report: it reads the clocks.
  static double ns_per_tick() noexcept;
  /// The tick start() was called at.
  static std::int64_t start_ticks() noexcept { return start_ticks_; }

 private:
  static inline bool use_tsc_ = false;
  static inline std::int64_t start_ticks_ = 0;
  static inline std::int64_t start_ns_ = 0;
};

/// A stack of (call, start tick): calls end in the reverse order they began on a thread. Deeper than its capacity,
/// calls go untimed (counted, so that their ends are not mistaken for others').
class call_clock {
 public:
  void start(const void* call) noexcept {
    if (depth_ < capacity) {
      calls_[depth_++] = {call, tick_clock::now()};
    } else {
      ++untimed_;
    }
  }

  /// When `call` started and how long it took, in ticks; a negative duration when its start was not seen.
  struct timing {
    std::int64_t start;
    std::int64_t duration;
  };
  timing stop(const void* call) noexcept {
    const std::int64_t end = tick_clock::now();
    if (untimed_ > 0) {
      --untimed_;
      return {0, -1};
    }
    for (unsigned i = depth_; i > 0; --i) {  // the top, unless a callback was added while the call ran
      if (calls_[i - 1].call == call) {
        const std::int64_t start = calls_[i - 1].start;
        depth_ = i - 1;
        return {start, end >= start ? end - start : 0};
      }
    }
    return {0, -1};
  }

 private:
  static constexpr unsigned capacity = 128;
  struct started {
    const void* call;
    std::int64_t start;
  };
  started calls_[capacity]{};
  unsigned depth_ = 0;
  unsigned untimed_ = 0;
};

}  // namespace detail
HOOKSCOPE_DETAIL_END_NAMESPACE
