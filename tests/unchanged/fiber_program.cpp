// Calls that suspend in fibers (tests/fiber.hpp: ucontext, as Boost.Context and Asio's spawn), run by the table of
// tests/unchanged/test_unchanged.py and by tests/unchanged/test_fibers.py, with and without the HOOKSCOPE_* variables.
// `fiber_program MODE ROUNDS`: each round, on the main thread, fiber A begins suspending(1), which suspends in the
// middle; fiber B calls outer(3) (work(3) nested in it) and begins suspending(4), which suspends too; the main thread
// sleeps 50 ms and calls work(6) while both are suspended. Then A resumes, its suspending(1) ends (after suspending(4)
// began, before it ends: the two overlap) and A calls work(2); then B resumes, its suspending(4) ends and B calls
// work(5). MODE same_thread resumes A on the main thread; other_thread resumes it on a second std::thread, where
// suspending(1) ends and work(2) runs. Prints every call's result, the same with or without the variables.
#include "hookscope/observable.hpp"

#include "../fiber.hpp"

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <thread>

namespace {

hookscope_test::fiber* running = nullptr;  // the fiber running on the thread that calls suspending()

}  // namespace

namespace impl {
int suspending(int n) {
  hookscope_test::fiber* self = running;
  self->suspend();  // resumed later, perhaps on another thread
  return n * 10;
}
int work(int n) { return n * 10; }
int outer(int n);
}  // namespace impl

HOOKSCOPE_OBSERVABLE(suspending, impl::suspending, n);
HOOKSCOPE_OBSERVABLE(work, impl::work, n);
HOOKSCOPE_OBSERVABLE(outer, impl::outer, n);

int impl::outer(int n) { return ::work(n) + 1; }

namespace {

void print(const char* call, int result) { std::printf("%s = %d\n", call, result); }

void resume(hookscope_test::fiber& f) {
  running = &f;
  f.resume();
  running = nullptr;
}

void round(bool other_thread) {
  hookscope_test::fiber a([](hookscope_test::fiber&) {
    print("suspending(1)", suspending(1));
    print("work(2)", work(2));
  });
  hookscope_test::fiber b([](hookscope_test::fiber&) {
    print("outer(3)", outer(3));
    print("suspending(4)", suspending(4));
    print("work(5)", work(5));
  });
  resume(a);
  resume(b);
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  print("work(6)", work(6));
  if (other_thread) {
    std::thread([&a] { resume(a); }).join();
  } else {
    resume(a);
  }
  resume(b);
  if (!a.done() || !b.done()) {
    std::fprintf(stderr, "a fiber did not finish\n");
    std::exit(3);
  }
}

}  // namespace

int main(int argc, char** argv) {
  const std::string mode = argc == 3 ? argv[1] : "";
  if (mode != "same_thread" && mode != "other_thread") {
    std::fprintf(stderr, "usage: fiber_program same_thread|other_thread ROUNDS\n");
    return 2;
  }
  const int rounds = std::atoi(argv[2]);
  for (int r = 0; r < rounds; ++r) round(mode == "other_thread");
  return 0;
}
