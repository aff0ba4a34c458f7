// The annotations tests/probes/test_probes.py attaches gdb and bpftrace to, from outside the process.
//
//   probe_program once        calls each annotation once with the arguments below, then exits
//   probe_program loop N      prints "ready", then calls probed::model::forward N times (batch 1, 2, 4, 8 in turn)
//                             and probed::add, 20 ms apart, so that a tool can attach to the running process; at the
//                             end prints whether add's semaphores were ever raised, and whether they still are
//   probe_program raise       raises every probe's semaphore itself (as a tool would) and checks that each call
//                             still returns what the plain call returns, also when it throws; prints "raised ok"
//
// The arguments of `once` are the test's expectations: keep the two in step.
#include "hookscope/observable.hpp"

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <stdexcept>
#include <string>
#include <thread>
#include <utility>

namespace probed {

enum class color : std::uint8_t { red = 1, green = 7 };

struct tensor {
  std::int64_t rows;
  std::int64_t cols;
};

namespace impl {
[[gnu::noinline]] int add(int a, long b) { return static_cast<int>(a + b); }
[[gnu::noinline]] double scale(double x, float factor) { return x * factor; }
[[gnu::noinline]] std::string greet(const std::string& who, char mark) { return who + mark; }
[[gnu::noinline]] color pick(color c, bool flip) { return flip ? color::green : c; }
[[gnu::noinline]] const char* label(const char* text, const void* where) { return where ? text : nullptr; }
[[gnu::noinline]] void tick(unsigned n) noexcept { (void)n; }
[[gnu::noinline]] int may_throw(int x) {
  if (x < 0) throw std::invalid_argument("negative");
  return x * 2;
}
[[gnu::noinline]] long wide(int a1, int a2, int a3, int a4, int a5, int a6, int a7, int a8, int a9, int a10, int a11,
                            int a12, int a13) {
  return a1 + a2 + a3 + a4 + a5 + a6 + a7 + a8 + a9 + a10 + a11 + a12 + a13;
}
[[gnu::noinline]] int blend(int a, int b = 40, int c = 500) { return a + b + c; }
[[gnu::noinline]] int paired(int a, std::pair<int, int> p = std::pair<int, int>{1, 2}) {
  return a + p.first + p.second;
}
}  // namespace impl

HOOKSCOPE_OBSERVABLE(add, impl::add, a, b);
HOOKSCOPE_OBSERVABLE(scale, impl::scale, x, factor);
HOOKSCOPE_OBSERVABLE(greet, impl::greet, who, mark);
HOOKSCOPE_OBSERVABLE(pick, impl::pick, c, flip);
HOOKSCOPE_OBSERVABLE(label, impl::label, text, where);
HOOKSCOPE_OBSERVABLE(tick, impl::tick, n);
HOOKSCOPE_OBSERVABLE(may_throw, impl::may_throw, x);
HOOKSCOPE_OBSERVABLE(wide, impl::wide, a1, a2, a3, a4, a5, a6, a7, a8, a9, a10, a11, a12, a13);
HOOKSCOPE_OBSERVABLE(blend, impl::blend, a, b = 40, c = 500);
HOOKSCOPE_OBSERVABLE(paired, impl::paired, a, p = std::pair<int, int>{1, 2});

class model {
 public:
  [[gnu::noinline]] tensor forward_impl(std::int64_t batch_size, const tensor& input) const {
    return {batch_size * input.rows, input.cols};
  }
  HOOKSCOPE_OBSERVABLE_METHOD(model, forward, forward_impl, batch_size, input);
};

template <class T>
struct layer {
  [[gnu::noinline]] T run_impl(T x) { return x + 1; }
  HOOKSCOPE_OBSERVABLE_METHOD(layer, run, run_impl, x);
};

// Two annotations named alike: one probe name, told apart by the registry name each passes first.
namespace first {
namespace impl {
[[gnu::noinline]] int step(int x) { return x + 1; }
}  // namespace impl
HOOKSCOPE_OBSERVABLE(step, impl::step, x);
}  // namespace first
namespace second {
namespace impl {
[[gnu::noinline]] int step(int x) { return x + 2; }
}  // namespace impl
HOOKSCOPE_OBSERVABLE(step, impl::step, x);
}  // namespace second

}  // namespace probed

namespace {

bool failed = false;

template <class T, class U>
void expect(const char* what, const T& got, const U& want) {
  if (!(got == want)) {
    std::fprintf(stderr, "probe_program: %s gave a different result\n", what);
    failed = true;
  }
}

void call_each_once() {
  using namespace probed;
  expect("add", add(7, -3000000000L), static_cast<int>(7 + -3000000000L));
  expect("scale", scale(2.5, 4.0f), 10.0);
  expect("greet", greet(std::string("hi"), '!'), std::string("hi!"));
  expect("pick", pick(color::red, false), color::red);
  static const int anchor = 0;
  expect("label", std::strcmp(label("tag", &anchor), "tag"), 0);
  tick(-1u);
  expect("may_throw", may_throw(21), 42);
  try {
    may_throw(-1);
    std::fprintf(stderr, "probe_program: may_throw(-1) did not throw\n");
    failed = true;
  } catch (const std::invalid_argument&) {
  }
  expect("wide", wide(1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13), 91L);
  expect("blend", blend(1), 541);
  expect("paired", paired(5, {10, 20}), 35);
  model m;
  const tensor input{3, 5};
  const tensor out = m.forward(4, input);
  expect("forward", out.rows * 100 + out.cols, 1205);
  layer<int> l;
  expect("run", l.run(41), 42);
  expect("first::step", first::step(1), 2);
  expect("second::step", second::step(1), 3);
}

}  // namespace

#if HOOKSCOPE_DETAIL_PROBES
// What a tool does on attaching: raise a probe's semaphore (both of an annotation's, as one word).
#define PROBE_PROGRAM_SEMAPHORES(X) \
  X(add) X(scale) X(greet) X(pick) X(label) X(tick) X(may_throw) X(wide) X(blend) X(paired) X(forward) X(run) X(step)
#define PROBE_PROGRAM_DECLARE(name) extern "C" [[gnu::visibility("hidden")]] unsigned hookscope_##name##__probes;
PROBE_PROGRAM_SEMAPHORES(PROBE_PROGRAM_DECLARE)
#define PROBE_PROGRAM_RAISE(name) __atomic_store_n(&hookscope_##name##__probes, 0x00010001u, __ATOMIC_RELAXED);
#endif

namespace {
unsigned add_semaphores() {
#if HOOKSCOPE_DETAIL_PROBES
  return __atomic_load_n(&hookscope_add__probes, __ATOMIC_RELAXED);
#else
  return 0;
#endif
}
}  // namespace

int main(int argc, char** argv) {
  if (argc == 2 && std::strcmp(argv[1], "once") == 0) {
    call_each_once();
    return failed ? 1 : 0;
  }
  if (argc == 3 && std::strcmp(argv[1], "loop") == 0) {
    const long n = std::strtol(argv[2], nullptr, 10);
    std::printf("ready\n");
    std::fflush(stdout);
    probed::model m;
    bool raised = false;
    for (long i = 0; i < n; ++i) {
      const probed::tensor input{2, 3};
      (void)m.forward(std::int64_t{1} << (i % 4), input);
      (void)probed::add(static_cast<int>(i), 1000);
      raised = raised || add_semaphores() != 0;
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    std::printf("raised_while_looping: %d\nraised_at_end: %d\n", raised ? 1 : 0, add_semaphores() != 0 ? 1 : 0);
    return 0;
  }
  if (argc == 2 && std::strcmp(argv[1], "raise") == 0) {
#if HOOKSCOPE_DETAIL_PROBES
    PROBE_PROGRAM_SEMAPHORES(PROBE_PROGRAM_RAISE)
    call_each_once();
    if (failed) return 1;
    std::printf("raised ok\n");
    return 0;
#else
    std::fprintf(stderr, "probe_program: built without probes (HOOKSCOPE_USDT=0 or hooks disabled)\n");
    return 3;
#endif
  }
  std::fprintf(stderr, "usage: %s once | loop N | raise\n", argv[0]);
  return 2;
}
