// The USDT probes of annotations, from inside the process: a test raises a probe's semaphores as a tool attaching
// to it would (the symbols docs/probes.md names), and every call must then behave as the plain call does — same
// results, same exceptions, the same moves, its own callbacks still run — across threads, a fork and a signal.
// tests/probes/test_probes.py attaches the real tools (readelf, gdb, bpftrace) from outside.
#include "hookscope/observable.hpp"

#include <pthread.h>
#include <sys/wait.h>
#include <unistd.h>

#include <catch2/catch.hpp>

#include <atomic>
#include <csignal>
#include <cstdint>
#include <limits>
#include <memory>
#include <random>
#include <stdexcept>
#include <string>
#include <thread>
#include <utility>
#include <vector>

namespace probed {

struct big {
  double values[4];
  std::string text;
  bool operator==(const big&) const = default;
};

namespace impl {
inline long mix(int a, long b, unsigned char c, bool flip) { return flip ? a - b + c : a + b - c; }
inline double halve(double x, float f) { return x / 2 + f; }
inline big grow(big b, const std::string& more) {
  b.text += more;
  b.values[0] += 1;
  return b;
}
inline int& pick_ref(int& a, int& b, bool second) { return second ? b : a; }
inline void store(int* where, int value) noexcept { *where = value; }
inline int checked(int x) {
  if (x < 0) throw std::out_of_range("checked: " + std::to_string(x));
  return x;
}
inline std::unique_ptr<int> take(std::unique_ptr<int> p, std::string&& s) {
  *p += static_cast<int>(s.size());
  return p;
}
inline int defaults(int a, int b = 10, int c = 100) { return a + b + c; }
inline int end_thread(int how) {
  if (how == 0) pthread_exit(nullptr);
  pthread_cancel(pthread_self());
  pthread_testcancel();
  return how;
}
inline long many(int a1, int a2, int a3, int a4, int a5, int a6, int a7, int a8, int a9, int a10, int a11, int a12,
                 int a13, int a14) {
  return a1 - a2 + a3 - a4 + a5 - a6 + a7 - a8 + a9 - a10 + a11 - a12 + a13 - a14;
}
// A register's shape: volatile references, read and written through (a probe carries the int's value).
inline int poke(volatile int& reg, const volatile long& limit) {
  reg = reg + 1;
  return reg < limit ? reg : -1;
}
}  // namespace impl

HOOKSCOPE_OBSERVABLE(mix, impl::mix, a, b, c, flip);
HOOKSCOPE_OBSERVABLE(halve, impl::halve, x, f);
HOOKSCOPE_OBSERVABLE(grow, impl::grow, b, more);
HOOKSCOPE_OBSERVABLE(pick_ref, impl::pick_ref, a, b, second);
HOOKSCOPE_OBSERVABLE(store, impl::store, where, value);
HOOKSCOPE_OBSERVABLE(checked, impl::checked, x);
HOOKSCOPE_OBSERVABLE(take, impl::take, p, s);
HOOKSCOPE_OBSERVABLE(defaults, impl::defaults, a, b = 10, c = 100);
HOOKSCOPE_OBSERVABLE(end_thread, impl::end_thread, how);
HOOKSCOPE_OBSERVABLE(many, impl::many, a1, a2, a3, a4, a5, a6, a7, a8, a9, a10, a11, a12, a13, a14);
HOOKSCOPE_OBSERVABLE(poke, impl::poke, reg, limit);

struct counter {
  long total = 0;
  long add_impl(long n) { return total += n; }
  long peek_impl() const { return total; }
  HOOKSCOPE_OBSERVABLE_METHOD(counter, add, add_impl, n);
  HOOKSCOPE_OBSERVABLE_METHOD(counter, peek, peek_impl);
};

// A smart pointer's shape: its operator& gives another object's address; ref-qualified methods, one given its default.
struct handle {
  long held = 0;
  handle* decoy = nullptr;
  handle* operator&() noexcept { return decoy; }
  long hold_impl(long n) & { return held += n; }
  long release_impl(long bias = 0) && noexcept { return std::exchange(held, 0) + bias; }
  HOOKSCOPE_OBSERVABLE_METHOD(handle, hold, hold_impl, n);
  HOOKSCOPE_OBSERVABLE_METHOD(handle, release, release_impl, bias = 0);
};

}  // namespace probed

#if HOOKSCOPE_DETAIL_PROBES
// The semaphores a tool raises on attaching: both of an annotation's (entry, return) as one word.
#define PROBES_TEST_NAMES(X) \
  X(mix)                     \
  X(halve)                   \
  X(grow)                    \
  X(pick_ref) X(store) X(checked) X(take) X(defaults) X(many) X(end_thread) X(add) X(peek) X(poke) X(hold) X(release)
#define PROBES_TEST_DECLARE(name) extern "C" [[gnu::visibility("hidden")]] unsigned hookscope_##name##__probes;
PROBES_TEST_NAMES(PROBES_TEST_DECLARE)
#endif

namespace {

// Sets every probe's semaphores to `word` (0: nobody attached; 0x00010001: a tool on both probes; 1 or 0x10000:
// on one of them). A no-op in builds without probes, whose calls must behave the same anyway.
void set_semaphores([[maybe_unused]] unsigned word) {
#if HOOKSCOPE_DETAIL_PROBES
#define PROBES_TEST_SET(name) __atomic_store_n(&hookscope_##name##__probes, word, __ATOMIC_RELAXED);
  PROBES_TEST_NAMES(PROBES_TEST_SET)
#undef PROBES_TEST_SET
#endif
}

struct raised {
  explicit raised(unsigned word = 0x00010001u) { set_semaphores(word); }
  ~raised() { set_semaphores(0); }
  raised(const raised&) = delete;
  raised& operator=(const raised&) = delete;
};

constexpr unsigned semaphore_words[] = {0u, 0x1u, 0x10000u, 0x00010001u, 0x00020003u};

// One random call of each annotation, checked against the plain call.
void check_random_calls(std::mt19937_64& rng) {
  std::uniform_int_distribution<int> ints(std::numeric_limits<int>::min() / 2, std::numeric_limits<int>::max() / 2);
  std::uniform_real_distribution<double> reals(-1e300, 1e300);
  const int a = ints(rng);
  const long b = static_cast<long>(rng());
  const auto c = static_cast<unsigned char>(rng());
  const bool flip = (rng() & 1) != 0;
  REQUIRE(probed::mix(a, b, c, flip) == probed::impl::mix(a, b, c, flip));
  const double x = reals(rng);
  const float f = static_cast<float>(ints(rng));
  REQUIRE(probed::halve(x, f) == probed::impl::halve(x, f));
  const probed::big value{{x, -x, 0.0, std::numeric_limits<double>::infinity()}, std::string(rng() % 40, 'z')};
  REQUIRE(probed::grow(value, "\xff\xfe") == probed::impl::grow(value, "\xff\xfe"));
  int first = ints(rng), second = ints(rng);
  const bool pick_second = (rng() & 1) != 0;
  REQUIRE(&probed::pick_ref(first, second, pick_second) == (pick_second ? &second : &first));
  int target = 0;
  probed::store(&target, a);
  REQUIRE(target == a);
  const int maybe_negative = ints(rng);
  if (maybe_negative < 0) {
    REQUIRE_THROWS_MATCHES(probed::checked(maybe_negative), std::out_of_range,
                           Catch::Matchers::Message("checked: " + std::to_string(maybe_negative)));
  } else {
    REQUIRE(probed::checked(maybe_negative) == maybe_negative);
  }
  auto moved = probed::take(std::make_unique<int>(a % 1000), std::string("four"));
  REQUIRE((moved && *moved == a % 1000 + 4));
  REQUIRE(probed::defaults(a % 1000) == a % 1000 + 110);
  REQUIRE(probed::defaults(a % 1000, 1) == a % 1000 + 101);
  REQUIRE(probed::many(1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, a % 1000) == -6 + 13 - a % 1000);
  volatile int reg = a, plain_reg = a;
  const volatile long limit = b;
  REQUIRE(probed::poke(reg, limit) == probed::impl::poke(plain_reg, limit));
  REQUIRE(reg == plain_reg);
  probed::counter counter;
  REQUIRE(counter.add(b % 1000) == b % 1000);
  REQUIRE(std::as_const(counter).peek() == b % 1000);
  probed::handle decoy;
  probed::handle held{.held = a % 1000, .decoy = std::addressof(decoy)};
  REQUIRE(held.hold(b % 1000) == a % 1000 + b % 1000);
  REQUIRE(std::move(held).release(c) == a % 1000 + b % 1000 + c);
  REQUIRE(held.held == 0);
  REQUIRE(std::move(held).release() == 0);
  REQUIRE(decoy.held == 0);
}

}  // namespace

TEST_CASE("probes_enabled") { STATIC_REQUIRE(hookscope::probes_enabled == (HOOKSCOPE_ENABLED && HOOKSCOPE_USDT)); }

TEST_CASE("HOOKSCOPE_OBSERVABLE with a tool attached to its probes") {
  std::mt19937_64 rng(20261203);
  SECTION("every call returns what the plain call returns, whichever semaphores are raised") {
    for (const unsigned word : semaphore_words) {
      INFO("semaphores 0x" << std::hex << word);
      raised tool(word);
      for (int i = 0; i < 200; ++i) check_random_calls(rng);
    }
  }
  SECTION("its own callbacks still run, once each, and see the arguments") {
    raised tool;
    int pre = 0, post = 0;
    long seen = 0;
    auto before = probed::mix.observers.pre.add([&](const auto& ctx) {
      ++pre;
      seen = ctx.template arg<"b">();
    });
    auto after = probed::mix.observers.post.add([&](const auto& ctx) {
      ++post;
      REQUIRE(ctx.return_value() != nullptr);
      REQUIRE(*ctx.return_value() == probed::impl::mix(1, 2, 3, false));
    });
    REQUIRE(probed::mix(1, 2, 3, false) == probed::impl::mix(1, 2, 3, false));
    REQUIRE(pre == (hookscope::hooks_enabled ? 1 : 0));
    REQUIRE(post == pre);
    REQUIRE(seen == (hookscope::hooks_enabled ? 2 : 0));
  }
  SECTION("a call that throws: its post callback sees the exception, which propagates unchanged") {
    raised tool;
    bool threw_seen = false;
    auto after = probed::checked.observers.post.add([&](const auto& ctx) { threw_seen = ctx.exception() != nullptr; });
    REQUIRE_THROWS_MATCHES(probed::checked(-5), std::out_of_range, Catch::Matchers::Message("checked: -5"));
    REQUIRE(threw_seen == hookscope::hooks_enabled);
  }
  SECTION("a method: on the object given, const or not") {
    raised tool;
    probed::counter counter;
    counter.add(5);
    counter.add(-2);
    REQUIRE(counter.total == 3);
    REQUIRE(std::as_const(counter).peek() == 3);
  }
  SECTION("a method of a class with its own operator&, ref-qualified: on the object given, with its value category") {
    raised tool;
    probed::handle decoy;
    probed::handle held{.held = 0, .decoy = std::addressof(decoy)};
    long released = 0;
    auto after = probed::handle::release_observers().post.add([&](const auto& ctx) { released = *ctx.return_value(); });
    held.hold(5);
    REQUIRE(std::move(held).release() == 5);
    REQUIRE(std::move(held).release(2) == 2);
    REQUIRE(held.held == 0);
    REQUIRE(decoy.held == 0);
    REQUIRE(released == (hookscope::hooks_enabled ? 2 : 0));
  }
}

TEST_CASE("HOOKSCOPE_OBSERVABLE probes across threads") {
  // Four threads call while a fifth raises and lowers the semaphores, as tools attaching and detaching would.
  std::atomic<bool> stop{false};
  std::atomic<int> wrong{0};
  std::vector<std::thread> callers;
  for (int t = 0; t < 4; ++t) {
    callers.emplace_back([&, t] {
      probed::counter counter;
      for (int i = 0; i < 20000 && !stop.load(); ++i) {
        if (probed::mix(i, t, 1, false) != i + t - 1) wrong.fetch_add(1);
        if (counter.add(1) != i + 1) wrong.fetch_add(1);
      }
    });
  }
  std::thread tool([&] {
    for (int i = 0; i < 2000; ++i) set_semaphores(semaphore_words[i % 5]);
    set_semaphores(0);
  });
  tool.join();
  stop.store(true);
  for (auto& caller : callers) caller.join();
  REQUIRE(wrong.load() == 0);
}

TEST_CASE("HOOKSCOPE_OBSERVABLE probes and a thread ended inside the call") {
  // pthread_exit and pthread_cancel unwind through the probed call (a forced unwind): the thread ends, nothing
  // catches it for good, and the process goes on.
  raised tool;
  for (const int how : {0, 1}) {
    std::atomic<bool> returned{false};
    std::thread t([&] {
      probed::end_thread(how);
      returned = true;
    });
    t.join();
    REQUIRE_FALSE(returned.load());
  }
  REQUIRE(probed::mix(1, 1, 1, false) == 1);
}

namespace {
volatile std::sig_atomic_t signal_result = 0;
void call_from_signal(int) { signal_result = static_cast<std::sig_atomic_t>(probed::mix(40, 2, 0, false)); }
}  // namespace

TEST_CASE("HOOKSCOPE_OBSERVABLE probes in a forked child and a signal handler") {
  raised tool;
  SECTION("a forked child calls through the probes it inherited") {
    const pid_t child = fork();
    REQUIRE(child >= 0);
    if (child == 0) {
      const bool ok = probed::mix(1, 2, 3, true) == probed::impl::mix(1, 2, 3, true) && probed::checked(7) == 7;
      _exit(ok ? 0 : 1);
    }
    int status = 0;
    REQUIRE(waitpid(child, &status, 0) == child);
    REQUIRE(WIFEXITED(status));
    REQUIRE(WEXITSTATUS(status) == 0);
  }
  SECTION("a signal handler calls an annotation") {
    signal_result = 0;
    auto* previous = std::signal(SIGUSR1, call_from_signal);
    REQUIRE(std::raise(SIGUSR1) == 0);
    std::signal(SIGUSR1, previous);
    REQUIRE(signal_result == 42);
  }
}
