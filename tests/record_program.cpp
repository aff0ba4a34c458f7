// Run by tests/environment/test_record_env.py (and test_stats_timeline.py) with and without HOOKSCOPE_RECORD: the
// records come from the environment alone.
// Without arguments it makes a fixed set of calls; `record_program MODE N` makes N calls of step() and then ends
// as MODE says (returns, crashes, is killed while idle, forks, ...), for the checks that nothing completed is lost.
#include "hookscope/observable.hpp"
#include "hookscope/tensor.hpp"

#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdint>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <stdexcept>
#include <string>
#include <thread>

using hookscope::dtype;
using hookscope::tensor_spec;

namespace impl {
tensor_spec forward(const tensor_spec& input_ids, const std::optional<tensor_spec>& attention_mask, bool use_cache) {
  (void)attention_mask;
  if (input_ids.shape.size() != 2) throw std::invalid_argument("input_ids must have rank 2");
  return {{input_ids.shape[0], input_ids.shape[1], use_cache ? 16 : 8}, dtype::float32};
}
int step(int n) { return n + 1; }
int widen(int n, int by = 1) { return n + by; }
struct handle {  // nothing can capture it
  virtual ~handle() = default;
  int id = 3;
};
int open_handle(const handle& h) { return h.id; }
}  // namespace impl

HOOKSCOPE_OBSERVABLE(forward, impl::forward, input_ids, attention_mask, use_cache);
HOOKSCOPE_OBSERVABLE(step, impl::step, n);
HOOKSCOPE_OBSERVABLE(widen, impl::widen, n, by = 1);
HOOKSCOPE_OBSERVABLE(open_handle, impl::open_handle, h);

int step_twice(int n);
HOOKSCOPE_OBSERVABLE(twice, step_twice, n);
int step_twice(int n) { return step(step(n)); }  // two calls nested in this one

int fork_inside(int);
HOOKSCOPE_OBSERVABLE(fork_in_flight, fork_inside, n);

// A call in flight across fork(): it returns in both processes, and must be recorded once (by the parent).
int fork_inside(int n) {
  const pid_t child = fork();
  if (child == 0) return -n;  // the child's copy of the call; its calls follow, then it exits
  int status = 0;
  waitpid(child, &status, 0);
  return WIFEXITED(status) && WEXITSTATUS(status) == 0 ? n : 0;
}

struct calls_at_static_destruction {
  ~calls_at_static_destruction() { std::printf("%d\n", step(1000)); }
};

void calls_from_thread_local_destructor() {
  struct at_thread_exit {
    ~at_thread_exit() { step(2000); }
  };
  thread_local at_thread_exit guard;
  step(1999);
}

int run_mode(const std::string& mode, int n) {
  for (int i = 0; i < n; ++i) step(i);
  std::fflush(stdout);
  if (mode == "calls") return 0;
  if (mode == "nested") return twice(n) == n + 2 ? 0 : 1;
  if (mode == "defaults") {  // widen(i) leaves `by` to its default for even i, widen(i, 2) gives it for odd i
    bool right = true;
    for (int i = 0; i < n; ++i) right = right && (i % 2 == 0 ? widen(i) == i + 1 : widen(i, 2) == i + 2);
    return right ? 0 : 1;
  }
  // A real fault, not raise(); not through a null pointer, which UBSan would report (and end the process) first.
  if (mode == "segv") {
    volatile std::uintptr_t address = 8;  // opaque to the compiler: a store it cannot reason about
    *reinterpret_cast<volatile int*>(address) = 1;
  }
  if (mode == "abort") std::abort();
  if (mode == "term") std::raise(SIGTERM);
  if (mode == "quick_exit") std::quick_exit(0);
  if (mode == "_exit") _exit(0);
  if (mode == "idle") {  // the test kills it (SIGKILL) once it has been idle long enough
    std::printf("idle\n");
    std::fflush(stdout);
    for (;;) std::this_thread::sleep_for(std::chrono::seconds(1));
  }
  if (mode == "fork") {  // fork() inside a recorded call; then each process makes its own calls
    // The first record started the background flushing thread; fork once it runs (it flushes every 100 ms). A
    // fork while a thread is still starting can leave the child with the sanitizer runtime's locks held (GCC 12's
    // AddressSanitizer takes no fork handlers for them): the child then hangs at its first allocation, and the
    // parent waits for it. The library's own locks are taken around fork() whatever the flusher is doing.
    std::this_thread::sleep_for(std::chrono::milliseconds(150));
    const bool in_child = fork_in_flight(7) < 0;
    for (int i = 0; i < n; ++i) step((in_child ? 100000 : 200000) + i);
    std::fflush(stdout);
    if (in_child) std::exit(0);  // the parent waits for it inside fork_inside
    return 0;
  }
  if (mode == "destructors") {
    static calls_at_static_destruction at_exit;
    std::thread(&calls_from_thread_local_destructor).join();
    return 0;
  }
  std::fprintf(stderr, "unknown mode %s\n", mode.c_str());
  return 2;
}

int main(int argc, char** argv) {
  if (argc == 3) return run_mode(argv[1], std::atoi(argv[2]));
  const tensor_spec ids{{1, 7}, dtype::int64};
  const tensor_spec mask{{1, 7}, dtype::int64};
  std::printf("%zu\n", forward(ids, mask, true).shape.size());
  std::printf("%zu\n", forward(tensor_spec{{2, 1}, dtype::int64}, std::nullopt, false).shape.size());
  try {
    forward(tensor_spec{{3}, dtype::int64}, std::nullopt, true);
  } catch (const std::exception& e) {
    std::printf("caught %s\n", e.what());
  }
  std::printf("%d\n", step(step(1)));
  const impl::handle h;
  std::printf("%d %d\n", open_handle(h), open_handle(h));
  return 0;
}
