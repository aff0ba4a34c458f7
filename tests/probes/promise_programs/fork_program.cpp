// A program a tool attaches to (-p): prints "ready", calls `add` every 5 ms until a tool raises add's semaphores,
// prints "attached", then (`fork_program fork`) forks; parent and child call `add` and the long-named `ping` for
// 3 s and each prints its semaphores at the end (`parent_at_end: N`, `child_at_end: N`), once the tool has gone.
#include "hookscope/observable.hpp"

#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstring>
#include <thread>

namespace forked {
namespace impl {
[[gnu::noinline]] int add(int a, int b) { return a + b; }
[[gnu::noinline]] int ping(int a) { return a; }
}  // namespace impl
HOOKSCOPE_OBSERVABLE(add, impl::add, a, b);
namespace a_namespace_whose_name_is_long_enough_to_pass_sixty_four_characters {
HOOKSCOPE_OBSERVABLE(ping, impl::ping, a);
}
}  // namespace forked

extern "C" [[gnu::visibility("hidden")]] unsigned hookscope_add__probes;

namespace {
unsigned semaphores() { return __atomic_load_n(&hookscope_add__probes, __ATOMIC_RELAXED); }
}  // namespace

int main(int argc, char** argv) {
  namespace longer = forked::a_namespace_whose_name_is_long_enough_to_pass_sixty_four_characters;
  const bool do_fork = argc > 1 && std::strcmp(argv[1], "fork") == 0;
  std::printf("ready\n");
  std::fflush(stdout);
  long sum = 0;
  for (int i = 0; i < 2000 && semaphores() == 0; ++i) {
    sum += forked::add(i, 1) + longer::ping(i);
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  std::printf("attached: %u\n", semaphores() != 0 ? 1u : 0u);
  std::fflush(stdout);
  const pid_t child = do_fork ? fork() : -1;
  for (int i = 0; i < 300; ++i) {
    sum += forked::add(i, 2) + longer::ping(i);
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  std::printf("%s_at_end: %u\n", child == 0 ? "child" : "parent", semaphores() != 0 ? 1u : 0u);
  std::fflush(stdout);
  if (child > 0) waitpid(child, nullptr, 0);
  return sum == 42 ? 1 : 0;
}
