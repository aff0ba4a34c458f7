// The tick clock's time source and conversion (see call_clock.hpp).
#include "call_clock.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <limits>

HOOKSCOPE_DETAIL_BEGIN_NAMESPACE
namespace detail {
namespace {

// The kernel keeps time with the TSC only when it found it constant and synchronised across CPUs.
bool kernel_uses_tsc() noexcept {
  const int fd = ::open("/sys/devices/system/clocksource/clocksource0/current_clocksource", O_RDONLY | O_CLOEXEC);
  if (fd < 0) return false;
  char name[16] = {};
  const ssize_t n = ::read(fd, name, sizeof name - 1);
  ::close(fd);
  return n >= 3 && std::strncmp(name, "tsc", 3) == 0 && (n == 3 || name[3] == '\n');
}

}  // namespace

// Frees the grown stacks of the thread's clocks when the thread exits. A separate thread-local, so that only a
// thread whose stack grew pays for its guard; at most a few clocks exist (one per environment feature).
struct call_clock_heap_guard {
  call_clock* clocks[4] = {};
  ~call_clock_heap_guard() {
    for (call_clock* c : clocks) {
      if (c != nullptr) c->release_heap();
    }
  }
  void watch(call_clock* clock) noexcept {
    for (call_clock*& c : clocks) {
      if (c == clock) return;
      if (c == nullptr) {
        c = clock;
        return;
      }
    }
  }
};

bool call_clock::grow() noexcept {
  const std::size_t bigger = std::size_t{capacity_} * 2;
  if (bigger > std::numeric_limits<unsigned>::max()) return false;
  auto* grown = static_cast<started*>(std::malloc(bigger * sizeof(started)));
  if (grown == nullptr) return false;
  std::memcpy(grown, entries(), std::size_t{depth_} * sizeof(started));
  std::free(heap_);
  heap_ = grown;
  capacity_ = static_cast<unsigned>(bigger);
  thread_local call_clock_heap_guard guard;
  guard.watch(this);
  return true;
}

void call_clock::release_heap() noexcept {
  if (heap_ == nullptr) return;
  const unsigned kept = depth_ < inline_capacity ? depth_ : inline_capacity;
  std::memcpy(inline_, heap_, std::size_t{kept} * sizeof(started));
  std::free(heap_);
  heap_ = nullptr;
  capacity_ = inline_capacity;
  depth_ = kept;
}

void tick_clock::start() noexcept {
  if (start_ns_ != 0) return;  // started already (by another feature)
#if HOOKSCOPE_DETAIL_HAVE_TSC
  use_tsc_ = kernel_uses_tsc();
#endif
  start_ticks_ = now();
  start_ns_ = monotonic_ns();
}

double tick_clock::ns_per_tick() noexcept {
  if (!use_tsc_) return 1.0;
  // Over the whole run so far: the longer the run, the more precise the ratio.
  const std::int64_t ticks = now() - start_ticks_;
  const std::int64_t ns = monotonic_ns() - start_ns_;
  return ticks > 0 && ns > 0 ? static_cast<double>(ns) / static_cast<double>(ticks) : 1.0;
}

}  // namespace detail
HOOKSCOPE_DETAIL_END_NAMESPACE
