// Emission's hazard slots (include/hookscope/detail/callbacks.hpp): one slot per emission under way, taken by nested
// emissions, signal handlers' emissions and fibers out of nesting order, given back whatever ends the walk, and what
// subscription::reset waits for; built and run under ThreadSanitizer in CI.
#include "hookscope/observer.hpp"

#include <catch2/catch.hpp>

#include "fiber.hpp"

#include <array>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdint>
#include <memory>
#include <stdexcept>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include <pthread.h>
#include <signal.h>
#include <sys/time.h>

#if HOOKSCOPE_ENABLED

namespace {

// A thread that never takes SIGALRM, so that every alarm lands on the emitting thread: started with the signal
// blocked, since a thread inherits its creator's mask (blocked in the thread itself, an alarm could land there first).
template <class Body>
std::thread thread_without_alarms(Body&& body) {
  sigset_t alarm_only;
  sigemptyset(&alarm_only);
  sigaddset(&alarm_only, SIGALRM);
  pthread_sigmask(SIG_BLOCK, &alarm_only, nullptr);
  std::thread thread(std::forward<Body>(body));
  pthread_sigmask(SIG_UNBLOCK, &alarm_only, nullptr);
  return thread;
}

// SIGALRM every `microseconds`, running `handler`, until stop(): then no alarm comes and one still pending is ignored.
class periodic_alarm {
 public:
  periodic_alarm(void (*handler)(int), long microseconds) {
    struct sigaction action {};
    action.sa_handler = handler;
    sigaction(SIGALRM, &action, nullptr);
    const itimerval every{{0, microseconds}, {0, microseconds}};
    setitimer(ITIMER_REAL, &every, nullptr);
  }
  ~periodic_alarm() { stop(); }
  periodic_alarm(const periodic_alarm&) = delete;
  periodic_alarm& operator=(const periodic_alarm&) = delete;
  void stop() noexcept {
    const itimerval off{};
    setitimer(ITIMER_REAL, &off, nullptr);
    struct sigaction action {};
    action.sa_handler = SIG_IGN;
    sigaction(SIGALRM, &action, nullptr);
  }
};

// A signal handler's emission: errno as the interrupted code left it.
void observe_keeping_errno(hookscope::observer<int>& observer, int value) {
  const int saved_errno = errno;
  observer.observe(value);
  errno = saved_errno;
}

}  // namespace

namespace interrupted {

hookscope::observer<int> outer{"emission_slots.interrupted.outer"};
hookscope::observer<int> in_handler{"emission_slots.interrupted.in_handler"};
std::atomic<std::int64_t> handler_calls{0};

void on_alarm(int) { observe_keeping_errno(in_handler, 1); }

}  // namespace interrupted

TEST_CASE("emission from a signal handler that interrupts emissions, lists replaced meanwhile on another thread") {
  // The handler's emission takes the first slot holding no list, wherever the interrupted emission stands (before
  // or after it published its lists): it must never overwrite the interrupted one's hazards, or the churning thread
  // frees a list still being walked (AddressSanitizer names it; here the counts would go wrong or the walk crash).
  using namespace interrupted;
  auto counted = in_handler.add_global([](int) { handler_calls.fetch_add(1, std::memory_order_relaxed); });
  std::atomic<std::int64_t> outer_calls{0};
  auto base = outer.add_global([&](int) { outer_calls.fetch_add(1, std::memory_order_relaxed); });
  outer.observe(0);  // this thread's record exists before the first signal

  std::atomic<bool> stop{false};
  std::thread churner = thread_without_alarms([&] {
    while (!stop.load()) {
      auto extra = outer.add_global([](int) {});
      auto more = in_handler.add_global([](int) {});
      std::this_thread::yield();
    }
  });
  periodic_alarm alarm(on_alarm, 50);
  const auto end = std::chrono::steady_clock::now() + std::chrono::milliseconds(300);
  std::int64_t emitted = 0;
  while (std::chrono::steady_clock::now() < end || handler_calls.load() == 0) {
    outer.observe(0);
    ++emitted;
  }
  alarm.stop();
  stop = true;
  churner.join();

  CHECK(outer_calls.load() == emitted + 1);
  CHECK(handler_calls.load() > 0);
  const std::int64_t before = handler_calls.load();
  in_handler.observe(1);
  CHECK(handler_calls.load() == before + 1);
}

namespace slots {

// Spins with a deadline so that a broken protocol fails instead of hanging.
bool wait_until(const std::atomic<bool>& flag, std::chrono::milliseconds limit = std::chrono::milliseconds(10000)) {
  const auto deadline = std::chrono::steady_clock::now() + limit;
  while (!flag.load()) {
    if (std::chrono::steady_clock::now() > deadline) return false;
    std::this_thread::yield();
  }
  return true;
}

// A callback's witness: whether it runs now, and whether it ran after its reset returned.
struct probe {
  std::atomic<int> inflight{0};
  std::atomic<bool> dead{false};
  std::atomic<int> late{0};
  std::atomic<std::int64_t> calls{0};
  void run(int spin) {
    inflight.fetch_add(1);
    if (dead.load()) late.fetch_add(1);
    for (int i = 0; i < spin; ++i) asm volatile("");
    calls.fetch_add(1);
    inflight.fetch_sub(1);
  }
};

// Resets `sub` (on a thread of its own, so a hang is a failure, not a hung test); false if it did not return.
bool reset_within(hookscope::subscription& sub, std::chrono::milliseconds limit) {
  auto returned = std::make_shared<std::atomic<bool>>(false);
  auto* moved = new hookscope::subscription(std::move(sub));
  std::thread resetter([moved, returned] {
    moved->reset();
    delete moved;
    *returned = true;
  });
  if (!wait_until(*returned, limit)) {
    resetter.detach();  // hangs in reset: left behind
    return false;
  }
  resetter.join();
  return true;
}

hookscope::observer<int> level{"emission_slots.level"};
hookscope::observer<int> in_handler{"emission_slots.in_handler"};

void on_alarm(int) { observe_keeping_errno(in_handler, 7); }

}  // namespace slots

TEST_CASE("nested emissions deeper than a slot chunk while another thread adds and resets callbacks") {
  // Each emission of `level` takes a slot of its own (40 under way at once: three chunks). reset() of a callback
  // registered meanwhile must return only once the callback runs nowhere, and it must never start again after.
  using namespace slots;
  constexpr int depth = 40;
  std::atomic<std::int64_t> descend_calls{0};
  std::atomic<std::int64_t> context_calls{0};
  auto descend = level.add_global([&](int d) {
    descend_calls.fetch_add(1, std::memory_order_relaxed);
    if (d > 0) level.observe(d - 1);
  });
  auto in_context = level.add([&](int) { context_calls.fetch_add(1, std::memory_order_relaxed); });

  std::atomic<bool> stop{false};
  std::atomic<int> reset_while_running{0};
  std::vector<std::shared_ptr<probe>> probes;
  std::thread churner([&] {
    std::mt19937 rng(7);
    while (!stop.load()) {
      auto p = std::make_shared<probe>();
      probes.push_back(p);
      auto sub = level.add_global([p](int) { p->run(200); });
      std::this_thread::sleep_for(std::chrono::microseconds(rng() % 300));
      sub.reset();
      if (p->inflight.load() != 0) reset_while_running.fetch_add(1);
      p->dead = true;
    }
  });
  std::int64_t emissions = 0;
  const auto end = std::chrono::steady_clock::now() + std::chrono::milliseconds(800);
  while (std::chrono::steady_clock::now() < end) {
    level.observe(depth);
    ++emissions;
  }
  stop = true;
  churner.join();
  CHECK(descend_calls.load() == emissions * (depth + 1));
  CHECK(context_calls.load() == emissions * (depth + 1));
  CHECK(reset_while_running.load() == 0);
  int late = 0;
  for (auto& p : probes) late += p->late.load();
  CHECK(late == 0);
  CHECK(probes.size() > 10);
}

TEST_CASE("signal handler emissions inside nested emissions while another thread resets the handler's callbacks") {
  // The handler's emission interrupts this thread's nested emissions at any point and takes a later slot; the
  // churning thread's reset() of a handler callback must wait while the handler runs it, and the callback must
  // never run after reset() returned. This thread's own counts must stay exact.
  using namespace slots;
  constexpr int depth = 20;
  std::atomic<std::int64_t> descend_calls{0};
  std::atomic<std::int64_t> handler_base{0};
  auto descend = level.add_global([&](int d) {
    descend_calls.fetch_add(1, std::memory_order_relaxed);
    if (d > 0) level.observe(d - 1);
  });
  auto counted = in_handler.add_global([&](int) { handler_base.fetch_add(1, std::memory_order_relaxed); });
  level.observe(0);
  descend_calls = 0;

  std::atomic<bool> stop{false};
  std::atomic<int> reset_while_running{0};
  std::vector<std::shared_ptr<probe>> probes;
  std::thread churner = thread_without_alarms([&] {
    std::mt19937 rng(11);
    while (!stop.load()) {
      auto p = std::make_shared<probe>();
      probes.push_back(p);
      auto sub = in_handler.add_global([p](int) { p->run(300); });
      auto extra = level.add_global([](int) {});
      std::this_thread::sleep_for(std::chrono::microseconds(rng() % 200));
      sub.reset();
      if (p->inflight.load() != 0) reset_while_running.fetch_add(1);
      p->dead = true;
    }
  });
  periodic_alarm alarm(on_alarm, 50);
  std::int64_t emissions = 0;
  const auto end = std::chrono::steady_clock::now() + std::chrono::milliseconds(800);
  while (std::chrono::steady_clock::now() < end) {
    level.observe(depth);
    ++emissions;
  }
  alarm.stop();
  stop = true;
  churner.join();
  CHECK(descend_calls.load() == emissions * (depth + 1));
  CHECK(handler_base.load() > 0);
  CHECK(reset_while_running.load() == 0);
  int late = 0;
  std::int64_t probe_calls = 0;
  for (auto& p : probes) {
    late += p->late.load();
    probe_calls += p->calls.load();
  }
  CHECK(late == 0);
  CHECK(probe_calls > 0);
}

TEST_CASE("emission slots after a callback throws out of nested emissions") {
  // In rethrow mode the exception unwinds every emission under way: each must give its slot back, or a later
  // reset() of a callback that ran there waits forever (the slot stays in use and still names it).
  using namespace slots;
  hookscope::rethrow_callback_exceptions_scope rethrow;
  hookscope::observer<int> deep{"emission_slots.throwing"};
  std::atomic<std::int64_t> calls{0};
  auto descend = deep.add_global([&](int d) {
    calls.fetch_add(1);
    if (d == 0) throw std::runtime_error("bottom");
    deep.observe(d - 1);
  });
  auto after = deep.add([&](int) { calls.fetch_add(1000000); });  // never reached: every level throws first
  for (int round = 0; round < 3; ++round) {
    CHECK_THROWS_AS(deep.observe(35), std::runtime_error);
  }
  CHECK(calls.load() == 3 * 36);
  // Every slot free again: a plain emission works, and resets from another thread return.
  hookscope::observer<int> plain{"emission_slots.plain"};
  std::atomic<int> plain_calls{0};
  auto one = plain.add_global([&](int) { ++plain_calls; });
  plain.observe(1);
  CHECK(plain_calls.load() == 1);
  CHECK(reset_within(descend, std::chrono::milliseconds(5000)));
  CHECK(reset_within(after, std::chrono::milliseconds(5000)));
  CHECK(reset_within(one, std::chrono::milliseconds(5000)));
}

TEST_CASE("emission slots after pthread_exit and pthread_cancel inside nested callbacks") {
  // A forced unwind ends the thread through its emissions: they give their slots back; resets of the callbacks
  // then return, and later threads (recycling the record) emit exactly their callbacks.
  using namespace slots;
  hookscope::observer<int> deep{"emission_slots.exiting"};
  std::atomic<std::int64_t> calls{0};
  std::atomic<bool> blocked{false};
  auto descend = deep.add_global([&](int d) {
    calls.fetch_add(1);
    if (d == 0) {
      if (hookscope::rethrow_callback_exceptions()) pthread_exit(nullptr);
      blocked = true;
      for (;;) pause();  // a cancellation point
    }
    deep.observe(d - 1);
  });
  SECTION("pthread_exit") {
    hookscope::set_rethrow_callback_exceptions(true);
    std::thread t([&] { deep.observe(20); });
    t.join();
    hookscope::set_rethrow_callback_exceptions(false);
  }
  SECTION("pthread_cancel") {
    pthread_t handle{};
    pthread_create(
        &handle, nullptr,
        [](void* raw) -> void* {
          static_cast<hookscope::observer<int>*>(raw)->observe(20);
          return nullptr;
        },
        &deep);
    REQUIRE(wait_until(blocked));
    pthread_cancel(handle);
    pthread_join(handle, nullptr);
  }
  CHECK(calls.load() == 21);
  std::atomic<std::int64_t> later{0};
  auto counted = deep.add_global([&](int) { later.fetch_add(1); });
  CHECK(reset_within(descend, std::chrono::milliseconds(5000)));
  for (int i = 0; i < 4; ++i) {
    std::thread([&] { deep.observe(3); }).join();
  }
  CHECK(later.load() == 4);
  CHECK(reset_within(counted, std::chrono::milliseconds(5000)));
}

TEST_CASE("emissions suspended in fibers on one thread and reset from another thread") {
  // Fiber a's emission suspends inside its callback, then fiber b's, then this thread emits: three slots in use
  // in no nesting order. reset() of the suspending callback waits until both fibers left it; reset() of a
  // callback over (in a slot now free or reused) returns at once.
  using namespace slots;
  hookscope::observer<int> suspending{"emission_slots.suspending"};
  hookscope::observer<int> quick{"emission_slots.quick"};
  hookscope_test::fiber* running = nullptr;
  std::atomic<int> suspends{0};
  std::atomic<int> finished{0};
  auto suspender = suspending.add_global([&](int) {
    ++suspends;
    running->suspend();
    ++finished;
  });
  std::atomic<int> quick_calls{0};
  auto quick_sub = quick.add_global([&](int) { ++quick_calls; });
  hookscope_test::fiber a([&](hookscope_test::fiber&) {
    suspending.observe(1);
    quick.observe(1);
  });
  hookscope_test::fiber b([&](hookscope_test::fiber&) {
    quick.observe(2);
    suspending.observe(2);
  });
  running = &a;
  a.resume();
  running = &b;
  b.resume();
  CHECK(suspends.load() == 2);
  quick.observe(3);  // a third slot: a's and b's are in use
  CHECK(quick_calls.load() == 2);

  auto returned = std::make_shared<std::atomic<bool>>(false);
  std::thread resetter([&] {
    suspender.reset();
    *returned = true;
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  CHECK_FALSE(returned->load());  // both fibers are inside it
  running = &a;
  a.resume();  // a leaves it (and emits quick in its freed slot)
  CHECK(a.done());
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  CHECK_FALSE(returned->load());  // b is still inside it
  running = &b;
  b.resume();
  CHECK(b.done());
  CHECK(wait_until(*returned));
  resetter.join();
  CHECK(finished.load() == 2);
  CHECK(quick_calls.load() == 3);
  CHECK(reset_within(quick_sub, std::chrono::milliseconds(5000)));
}

TEST_CASE("emission order of global and context callbacks as the lists change") {
  // Globals first, then the current context's, each in registration order, whatever the fast path takes: one
  // list of one callback, a context slot whose list became empty, nested emissions of the same observer.
  hookscope::observer<int> o{"emission_slots.order"};
  std::vector<std::string> seen;
  auto mark = [&](const char* name) { return [&seen, name](int) { seen.push_back(name); }; };
  auto run = [&](int v) {
    seen.clear();
    o.observe(v);
    std::string all;
    for (auto& s : seen) all += s;
    return all;
  };
  auto c1 = o.add(mark("c1"));
  CHECK(run(0) == "c1");
  auto g1 = o.add_global(mark("g1"));
  CHECK(run(0) == "g1c1");
  c1.reset();
  CHECK(run(0) == "g1");  // the context's slot stays, its list empty
  auto c2 = o.add(mark("c2"));
  auto g2 = o.add_global(mark("g2"));
  CHECK(run(0) == "g1g2c2");
  {
    hookscope::context other;
    auto in_other = other.attach();
    CHECK(run(0) == "g1g2");
    auto c3 = o.add(mark("c3"));
    CHECK(run(0) == "g1g2c3");
    hookscope::context copy = hookscope::context::current().copy();
    auto in_copy = copy.attach();
    CHECK(run(0) == "g1g2c3");
    c3.reset();  // its clone in the copy goes with it
    CHECK(run(0) == "g1g2");
  }
  g1.reset();
  g2.reset();
  CHECK(run(0) == "c2");
  auto nested = o.add_global([&](int v) {
    seen.push_back("n");
    if (v > 0) o.observe(v - 1);
  });
  CHECK(run(2) == "nnnc2c2c2");
}

namespace stale {

hookscope::observer<int> first{"emission_slots.stale.first"};
hookscope::observer<int> second{"emission_slots.stale.second"};
hookscope::observer<int> in_handler{"emission_slots.stale.in_handler"};
std::atomic<bool> in_first{false};  // this thread is inside first.observe (its callback may run)
std::atomic<bool> armed{false};
std::atomic<bool> reset_returned{false};
std::atomic<int> gave_up{0};

void on_alarm(int) { observe_keeping_errno(in_handler, 0); }

}  // namespace stale

TEST_CASE("subscription::reset of a callback that runs nowhere while a signal handler interrupts another emission") {
  // Promise (subscription.hpp, docs): reset() waits until the callback runs nowhere else — only for that. Here the
  // callback `target` of `first` runs on the emitting thread only while it is inside first.observe; a signal handler
  // that lands anywhere else (inside second.observe, say) waits until reset() returned. A reset() that waits for
  // that handler hangs (here: until the handler gives up after 1 s).
  // Broken by the change: a walk leaves its last node in its slot, and the next emission in that slot (second's)
  // publishes its list before it marks its own callback, so between the two the slot is in use and still names
  // `target`; a handler interrupting there makes reset(target) wait for the handler, which waits for reset().
  using namespace stale;
  auto other = second.add_global([](int) {});
  auto waiter = in_handler.add_global([](int) {
    if (!armed.load(std::memory_order_relaxed) || in_first.load(std::memory_order_relaxed)) return;
    if (gave_up.load() != 0) return;  // once only: the interrupted code must get on
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(1000);
    while (!reset_returned.load()) {
      if (std::chrono::steady_clock::now() > deadline) {
        gave_up.fetch_add(1);
        return;
      }
    }
  });
  first.observe(0);
  second.observe(0);

  std::atomic<bool> stop{false};
  std::atomic<int> slow_resets{0};
  std::atomic<int> trials{0};
  std::thread resetter = thread_without_alarms([&] {
    const auto end = std::chrono::steady_clock::now() + std::chrono::milliseconds(1500);
    while (std::chrono::steady_clock::now() < end && slow_resets.load() == 0) {
      auto target = first.add_global([](int) {});
      std::this_thread::sleep_for(std::chrono::microseconds(300));  // the emitting thread runs it meanwhile
      reset_returned = false;
      armed = true;
      const auto start = std::chrono::steady_clock::now();
      target.reset();
      const auto took = std::chrono::steady_clock::now() - start;
      reset_returned = true;
      armed = false;
      // Half the handler's wait: a reset that waited for it takes all of it; one that did not, microseconds, or a
      // few milliseconds when a loaded machine runs other threads first.
      if (took > std::chrono::milliseconds(500)) slow_resets.fetch_add(1);
      trials.fetch_add(1);
    }
    stop = true;
  });
  periodic_alarm alarm(on_alarm, 20);
  while (!stop.load(std::memory_order_relaxed)) {
    in_first.store(true, std::memory_order_relaxed);
    std::atomic_signal_fence(std::memory_order_seq_cst);
    first.observe(1);
    std::atomic_signal_fence(std::memory_order_seq_cst);
    in_first.store(false, std::memory_order_relaxed);
    std::atomic_signal_fence(std::memory_order_seq_cst);
    second.observe(2);
  }
  alarm.stop();
  resetter.join();
  INFO("trials: " << trials.load() << ", handlers that gave up: " << gave_up.load());
  CHECK(slow_resets.load() == 0);
}

#endif
