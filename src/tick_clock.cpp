// The tick clock's time source and conversion, and the thread tag of a call's start (see tick_clock.hpp).
#include "tick_clock.hpp"
#include "cancellation.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <atomic>
#include <cstring>

HOOKSCOPE_DETAIL_BEGIN_NAMESPACE
namespace detail {
namespace {

// The kernel keeps time with the TSC only when it found it constant and synchronised across CPUs.
bool kernel_uses_tsc() noexcept {
  const cancellation_deferred no_cancellation;  // system calls: see cancellation.hpp
  const int fd = ::open("/sys/devices/system/clocksource/clocksource0/current_clocksource", O_RDONLY | O_CLOEXEC);
  if (fd < 0) return false;
  char name[16] = {};
  const ssize_t n = ::read(fd, name, sizeof name - 1);
  ::close(fd);
  return n >= 3 && std::strncmp(name, "tsc", 3) == 0 && (n == 3 || name[3] == '\n');
}

constinit std::atomic<std::uint64_t> last_thread_serial{0};

}  // namespace

std::uint64_t number_this_thread() noexcept {
  if (thread_serial == 0) thread_serial = last_thread_serial.fetch_add(1, std::memory_order_relaxed) + 1;
  return thread_serial;
}

std::int64_t tick_clock::choose_and_read() noexcept {
  // Every thread that gets here chooses the same source, and reads it: no thread waits for another (a signal handler
  // may interrupt the first one here).
  int source = monotonic;
#if HOOKSCOPE_DETAIL_HAVE_TSC
  if (kernel_uses_tsc()) source = tsc;
#endif
  const auto read = [source]() -> std::int64_t {
#if HOOKSCOPE_DETAIL_HAVE_TSC
    if (source == tsc) return static_cast<std::int64_t>(__rdtsc());
#endif
    return monotonic_ns();
  };
  // The start's two readings are taken as ns_per_tick() takes the end's, the ticks then the nanoseconds right after
  // them, with the clock already warm (its first call may fault its page in): the two gaps then cancel in the ratio,
  // which early in a run is measured over a few microseconds.
  (void)monotonic_ns();
  const std::int64_t ticks = read();
  const std::int64_t ns = monotonic_ns();
  // The first to get here gives the start, and publishes the source after it: a reader that sees the source also
  // sees the start. The others return their reading (in the same unit) and may come here again until then.
  std::int64_t none = 0;
  if (start_ticks_.compare_exchange_strong(none, ticks, std::memory_order_acq_rel)) {
    start_ns_.store(ns, std::memory_order_release);
    source_.store(source, std::memory_order_release);
  }
  return ticks;
}

double tick_clock::recent_ns_per_tick(std::int64_t now_ticks) noexcept {
  if (source_.load(std::memory_order_acquire) != tsc) return 1.0;
  const std::int64_t start = start_ticks_.load(std::memory_order_acquire);
  const std::int64_t measured_at = recent_ratio_ticks_.load(std::memory_order_acquire);
  // The ratio's error shrinks with the interval it is measured over: one measured 1/64 of the run ago is as good.
  if (measured_at > start && now_ticks - measured_at <= (measured_at - start) / 64) {
    return recent_ratio_.load(std::memory_order_relaxed);
  }
  const double ratio = ns_per_tick();
  // The ratio first, then its tick: a reader that sees the tick sees this ratio or a later one, each of them valid.
  recent_ratio_.store(ratio, std::memory_order_relaxed);
  recent_ratio_ticks_.store(now_ticks, std::memory_order_release);
  return ratio;
}

double tick_clock::ns_per_tick() noexcept {
  if (source_.load(std::memory_order_acquire) != tsc) return 1.0;
  // Over the whole run so far: the longer the run, the more precise the ratio.
  const std::int64_t ticks = now() - start_ticks_.load(std::memory_order_acquire);
  const std::int64_t ns = monotonic_ns() - start_ns_.load(std::memory_order_acquire);
  return ticks > 0 && ns > 0 ? static_cast<double>(ns) / static_cast<double>(ticks) : 1.0;
}

}  // namespace detail
HOOKSCOPE_DETAIL_END_NAMESPACE
