// When each call in flight on this thread started, for HOOKSCOPE_STATS and HOOKSCOPE_TIMELINE. A trivially
// destructible thread-local (constinit): it works in static and thread-local destructors too, and costs no guard.
#pragma once

#include "hookscope/config.hpp"

#include <time.h>

#include <cstdint>

HOOKSCOPE_DETAIL_BEGIN_NAMESPACE
namespace detail {

inline std::int64_t monotonic_ns() noexcept {
  timespec t{};
  clock_gettime(CLOCK_MONOTONIC, &t);
  return static_cast<std::int64_t>(t.tv_sec) * 1'000'000'000 + t.tv_nsec;
}

/// A stack of (call, start time): calls end in the reverse order they began on a thread. Deeper than its capacity,
/// calls go untimed (counted, so that their ends are not mistaken for others').
class call_clock {
 public:
  void start(const void* call) noexcept {
    if (depth_ < capacity) {
      calls_[depth_++] = {call, monotonic_ns()};
    } else {
      ++untimed_;
    }
  }

  /// The duration of `call` in nanoseconds and its start, or a negative duration when its start was not seen.
  struct timing {
    std::int64_t start_ns;
    std::int64_t duration_ns;
  };
  timing stop(const void* call) noexcept {
    const std::int64_t end = monotonic_ns();
    if (untimed_ > 0) {
      --untimed_;
      return {0, -1};
    }
    for (unsigned i = depth_; i > 0; --i) {  // the top, unless a callback was added while the call ran
      if (calls_[i - 1].call == call) {
        const std::int64_t start = calls_[i - 1].start_ns;
        depth_ = i - 1;
        return {start, end - start};
      }
    }
    return {0, -1};
  }

 private:
  static constexpr unsigned capacity = 128;
  struct started {
    const void* call;
    std::int64_t start_ns;
  };
  started calls_[capacity]{};
  unsigned depth_ = 0;
  unsigned untimed_ = 0;
};

}  // namespace detail
HOOKSCOPE_DETAIL_END_NAMESPACE
