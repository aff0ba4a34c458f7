// When each call in flight on this thread started, for HOOKSCOPE_STATS and HOOKSCOPE_TIMELINE. A trivially
// destructible thread-local (constinit): it works in static and thread-local destructors too, and costs no guard
// (the guard that frees a grown stack is a separate thread-local, touched only when the stack grows).
//
// Time is read as ticks: the CPU's time-stamp counter where the kernel itself keeps time with it (a constant,
// synchronised TSC: half the cost of clock_gettime), else CLOCK_MONOTONIC nanoseconds. Ticks become nanoseconds
// through a ratio measured over the whole run when the results are written.
#pragma once

#include "hookscope/config.hpp"
#include "hookscope/detail/call_pairing.hpp"

#include <time.h>

#include <cstddef>
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
  /// CLOCK_MONOTONIC nanoseconds at start(): where other copies of the library count their ticks from.
  static std::int64_t start_ns() noexcept { return start_ns_; }

 private:
  static inline bool use_tsc_ = false;
  static inline std::int64_t start_ticks_ = 0;
  static inline std::int64_t start_ns_ = 0;
};

/// A stack of (call, start tick), paired by the rule of detail/call_pairing.hpp: calls end in the reverse order
/// they began on a thread, and an entry left by a call that ended without its post callback (a forced unwind, a
/// refusal in rethrow mode) is abandoned when its address begins again or a call begun before it ends. Any depth:
/// past its inline capacity it grows on the heap (kept for the thread's life, released at its exit).
class call_clock {
 public:
  void start(const void* call) noexcept {
    depth_ = static_cast<unsigned>(pair_index(entries(), depth_, call));  // abandons a stale entry of this address
    if (depth_ == capacity_ && !grow()) {
      ++lost_;  // out of memory: this call goes untimed
      return;
    }
    entries()[depth_++] = {call, tick_clock::now()};
  }

  /// When `call` started and how long it took, in ticks; a negative duration when its start was not seen.
  struct timing {
    std::int64_t start;
    std::int64_t duration;
  };
  timing stop(const void* call) noexcept {
    const std::int64_t end = tick_clock::now();
    const std::size_t i = pair_index(entries(), depth_, call);
    if (i == depth_) return {0, -1};
    const std::int64_t start = entries()[i].start;
    depth_ = static_cast<unsigned>(i);  // with the entries of calls nested in it that never ended
    return {start, end >= start ? end - start : 0};
  }

  /// Calls that went untimed because the stack could not grow.
  unsigned lost() const noexcept { return lost_; }

  struct started {
    const void* call;
    std::int64_t start;
  };

 private:
  static constexpr unsigned inline_capacity = 64;

  started* entries() noexcept { return heap_ != nullptr ? heap_ : inline_; }
  bool grow() noexcept;  // doubles the capacity (call_clock.cpp)
  friend struct call_clock_heap_guard;
  void release_heap() noexcept;  // back to the inline stack, keeping the outermost entries that fit

  started inline_[inline_capacity]{};
  started* heap_ = nullptr;  // owned; freed at thread exit by a guard that grow() installs
  unsigned capacity_ = inline_capacity;
  unsigned depth_ = 0;
  unsigned lost_ = 0;
};

}  // namespace detail
HOOKSCOPE_DETAIL_END_NAMESPACE
