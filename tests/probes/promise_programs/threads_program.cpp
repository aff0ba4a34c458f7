// Four threads calling annotations (a free function and a method) for `threads_program SECONDS`, checking each
// result, while tools attach and detach: prints "ready", then "errors: N" (wrong results) at the end.
#include "hookscope/observable.hpp"

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <thread>
#include <vector>

namespace threaded {
namespace impl {
[[gnu::noinline]] long add(long a, long b) { return a + b; }
}  // namespace impl
HOOKSCOPE_OBSERVABLE(add, impl::add, a, b);

struct counter {
  long base = 7;
  [[gnu::noinline]] long shift_impl(long by) const { return base + by; }
  HOOKSCOPE_OBSERVABLE_METHOD(counter, shift, shift_impl, by);
};
}  // namespace threaded

int main(int argc, char** argv) {
  const double seconds = argc > 1 ? std::strtod(argv[1], nullptr) : 1.0;
  std::atomic<long> errors{0};
  std::atomic<bool> stop{false};
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      const threaded::counter c;
      for (long i = 0; !stop.load(std::memory_order_relaxed); ++i) {
        if (threaded::add(i, t) != i + t || c.shift(i) != 7 + i) errors.fetch_add(1);
      }
    });
  }
  std::printf("ready\n");
  std::fflush(stdout);
  std::this_thread::sleep_for(std::chrono::duration<double>(seconds));
  stop = true;
  for (auto& thread : threads) thread.join();
  std::printf("errors: %ld\n", errors.load());
  return 0;
}
