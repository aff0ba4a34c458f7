// The tick clock's time source and conversion (see call_clock.hpp).
#include "call_clock.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <cstring>

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
