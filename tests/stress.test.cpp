// Many threads changing and firing the same observers at once; built and run under ThreadSanitizer in CI.
#include "hookscope/observer.hpp"

#include <catch2/catch.hpp>

#include <array>
#include <atomic>
#include <chrono>
#include <mutex>
#include <cstdint>
#include <memory>
#include <random>
#include <thread>
#include <stdexcept>
#include <string>
#include <vector>

#include <pthread.h>
#include <signal.h>
#include <sys/time.h>

#if HOOKSCOPE_ENABLED

namespace {

constexpr int thread_count = 8;
constexpr int operations_per_thread = 4000;
constexpr std::size_t max_live_per_thread = 12;

std::array<hookscope::observer<int>, 3> shared_observers{
    hookscope::observer<int>{"stress.a"}, hookscope::observer<int>{"stress.b"}, hookscope::observer<int>{"stress.c"}};

enum class kind { own_context, global, shared_context };

struct registration {
  hookscope::subscription sub;
  std::shared_ptr<std::atomic<std::int64_t>> calls = std::make_shared<std::atomic<std::int64_t>>(0);
  std::size_t observer = 0;
  kind where = kind::own_context;
};

// A callback that has been unregistered: its count must never move again.
struct retired {
  std::shared_ptr<std::atomic<std::int64_t>> calls;
  std::int64_t at_removal;
};

struct thread_report {
  std::int64_t exact_checks = 0;
  std::int64_t exact_failures = 0;
  std::int64_t remove_failures = 0;
  std::vector<retired> removed;
};

hookscope::subscription add(registration& r) {
  auto calls = r.calls;
  auto callback = [calls](int) { calls->fetch_add(1, std::memory_order_relaxed); };
  auto& obs = shared_observers[r.observer];
  return r.where == kind::global ? obs.add_global(callback) : obs.add(callback);
}

void run_thread(int seed, const hookscope::context& shared, thread_report& report) {
  std::mt19937 rng(static_cast<unsigned>(seed));
  std::vector<registration> live;
  auto pick = [&](std::size_t n) { return std::uniform_int_distribution<std::size_t>(0, n - 1)(rng); };

  for (int op = 0; op < operations_per_thread; ++op) {
    switch (pick(6)) {
      case 0:  // add in this thread's own context, or globally
      case 1: {
        if (live.size() >= max_live_per_thread) break;
        registration r;
        r.observer = pick(shared_observers.size());
        r.where = pick(4) == 0 ? kind::global : kind::own_context;
        r.sub = add(r);
        live.push_back(std::move(r));
        break;
      }
      case 2: {  // reset, or release then remove by id
        if (live.empty()) break;
        const std::size_t i = pick(live.size());
        registration r = std::move(live[i]);
        live.erase(live.begin() + static_cast<std::ptrdiff_t>(i));
        if (pick(2) == 0) {
          r.sub.reset();
        } else {
          const hookscope::callback_id id = r.sub.release();
          if (!shared_observers[r.observer].remove(id)) ++report.remove_failures;
        }
        report.removed.push_back({r.calls, r.calls->load()});
        break;
      }
      case 3: {  // work inside the shared context: add there, fire, leave
        auto scope = shared.attach();
        registration r;
        r.observer = pick(shared_observers.size());
        r.where = kind::shared_context;
        r.sub = add(r);
        shared_observers[r.observer].observe(op);
        r.sub.reset();
        report.removed.push_back({r.calls, r.calls->load()});
        break;
      }
      default: {  // fire; callbacks of this thread's own context run exactly once each
        const std::size_t o = pick(shared_observers.size());
        std::vector<std::pair<registration*, std::int64_t>> expected;
        for (auto& r : live) {
          if (r.observer == o && r.where == kind::own_context) expected.emplace_back(&r, r.calls->load());
        }
        shared_observers[o].observe(op);
        for (auto& [r, before] : expected) {
          ++report.exact_checks;
          if (r->calls->load() != before + 1) ++report.exact_failures;
        }
        break;
      }
    }
  }
  for (auto& r : live) {
    r.sub.reset();
    report.removed.push_back({r.calls, r.calls->load()});
  }
}

}  // namespace

TEST_CASE("observers under concurrent add, reset, remove, attach and observe") {
  const hookscope::context shared;
  std::array<thread_report, thread_count> reports;
  std::vector<std::thread> threads;
  for (int t = 0; t < thread_count; ++t) {
    threads.emplace_back([&, t] { run_thread(t + 1, shared, reports[static_cast<std::size_t>(t)]); });
  }
  for (auto& t : threads) t.join();

  std::int64_t exact_checks = 0;
  for (const auto& report : reports) {
    exact_checks += report.exact_checks;
    CHECK(report.exact_failures == 0);
    CHECK(report.remove_failures == 0);
  }
  CHECK(exact_checks > 1000);  // the determined counts were really exercised

  // Nothing removed ever ran again, even while other threads kept firing.
  for (auto& o : shared_observers) o.observe(-1);
  std::thread([] {
    for (auto& o : shared_observers) o.observe(-1);
  }).join();
  std::int64_t moved = 0;
  std::size_t removed = 0;
  for (const auto& report : reports) {
    for (const auto& r : report.removed) {
      ++removed;
      if (r.calls->load() != r.at_removal) ++moved;
    }
  }
  CHECK(removed > 1000);
  CHECK(moved == 0);
  for (auto& o : shared_observers) CHECK_FALSE(o.has_callbacks());
}

namespace {

hookscope::observer<int> churned{"stress.churned"};

// A removed callback's counter must not move after its removal returned: checked with the count then.
struct watched {
  std::shared_ptr<std::atomic<std::int64_t>> calls = std::make_shared<std::atomic<std::int64_t>>(0);
  hookscope::subscription sub;
};

}  // namespace

TEST_CASE("churn under emission: private contexts, globals, copies and resets on other threads") {
  constexpr int emitters = 3;
  constexpr int churners = 3;
  constexpr int rounds = 1500;
  std::atomic<bool> stop{false};
  std::atomic<std::int64_t> moved_after_reset{0};
  std::atomic<std::int64_t> exact_failures{0};
  std::mutex handoff_mutex;
  std::vector<watched> handoff;  // subscriptions of private contexts, reset by another thread

  auto check_removed = [&](watched& w) {
    w.sub.reset();
    const std::int64_t at = w.calls->load();
    return std::pair{w.calls, at};
  };

  std::vector<std::thread> threads;
  const hookscope::context shared;
  for (int e = 0; e < emitters; ++e) {
    threads.emplace_back([&, e] {
      // Emitting in its own context, in the shared one, and in a copy of a churner's context.
      while (!stop.load()) {
        churned.observe(e);
        {
          auto scope = shared.attach();
          churned.observe(e);
        }
        std::this_thread::yield();
      }
    });
  }
  std::vector<std::vector<std::pair<std::shared_ptr<std::atomic<std::int64_t>>, std::int64_t>>> removed(churners + 1);
  for (int c = 0; c < churners; ++c) {
    threads.emplace_back([&, c] {
      auto& mine = removed[static_cast<std::size_t>(c)];
      for (int round = 0; round < rounds; ++round) {
        watched own;
        own.sub = churned.add([calls = own.calls](int) { calls->fetch_add(1, std::memory_order_relaxed); });
        const std::int64_t before = own.calls->load();
        churned.observe(-1);
        if (own.calls->load() != before + 1) ++exact_failures;  // private: exactly once, only here
        switch (round % 4) {
          case 0: mine.push_back(check_removed(own)); break;
          case 1: {  // reset on another thread
            const std::lock_guard lock(handoff_mutex);
            handoff.push_back(std::move(own));
            break;
          }
          case 2: {  // a copy emitted in elsewhere, then the original reset here
            auto copy = hookscope::context::current().copy();
            std::thread([copy] {
              auto scope = copy.attach();
              churned.observe(-2);
            }).join();
            mine.push_back(check_removed(own));
            break;
          }
          default: {  // a global callback, while emitters run it
            watched global;
            global.sub =
                churned.add_global([calls = global.calls](int) { calls->fetch_add(1, std::memory_order_relaxed); });
            churned.observe(-3);
            mine.push_back(check_removed(global));
            mine.push_back(check_removed(own));
            break;
          }
        }
        if (round % 64 == 0) {  // shared context changes too
          auto scope = shared.attach();
          watched in_shared;
          in_shared.sub =
              churned.add([calls = in_shared.calls](int) { calls->fetch_add(1, std::memory_order_relaxed); });
          churned.observe(-4);
          mine.push_back(check_removed(in_shared));
        }
      }
    });
  }
  threads.emplace_back([&] {  // the resetter of other threads' private subscriptions
    auto& mine = removed[churners];
    for (;;) {
      std::vector<watched> batch;
      {
        const std::lock_guard lock(handoff_mutex);
        batch.swap(handoff);
      }
      for (auto& w : batch) mine.push_back(check_removed(w));
      if (stop.load() && batch.empty()) {
        const std::lock_guard lock(handoff_mutex);
        if (handoff.empty()) break;
      }
      std::this_thread::yield();
    }
  });
  for (int i = emitters; i < emitters + churners; ++i) threads[static_cast<std::size_t>(i)].join();
  stop = true;
  for (int i = 0; i < emitters; ++i) threads[static_cast<std::size_t>(i)].join();
  threads.back().join();

  churned.observe(0);
  std::size_t count = 0;
  for (auto& list : removed) {
    for (auto& [calls, at] : list) {
      ++count;
      if (calls->load() != at) ++moved_after_reset;
    }
  }
  CHECK(count > static_cast<std::size_t>(rounds));
  CHECK(exact_failures == 0);
  CHECK(moved_after_reset == 0);
  CHECK_FALSE(churned.has_callbacks());
}

namespace interrupted {

hookscope::observer<int> outer{"stress.interrupted.outer"};
hookscope::observer<int> in_handler{"stress.interrupted.in_handler"};
std::atomic<std::int64_t> handler_calls{0};

void on_alarm(int) { in_handler.observe(1); }

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

  sigset_t alarm_only;
  sigemptyset(&alarm_only);
  sigaddset(&alarm_only, SIGALRM);
  std::atomic<bool> stop{false};
  std::thread churner([&] {
    pthread_sigmask(SIG_BLOCK, &alarm_only, nullptr);  // every alarm lands on the emitting thread
    while (!stop.load()) {
      auto extra = outer.add_global([](int) {});
      auto more = in_handler.add_global([](int) {});
      std::this_thread::yield();
    }
  });
  struct sigaction action {};
  action.sa_handler = on_alarm;
  sigaction(SIGALRM, &action, nullptr);
  const itimerval every_50us{{0, 50}, {0, 50}};
  setitimer(ITIMER_REAL, &every_50us, nullptr);
  const auto end = std::chrono::steady_clock::now() + std::chrono::milliseconds(300);
  std::int64_t emitted = 0;
  while (std::chrono::steady_clock::now() < end || handler_calls.load() == 0) {
    outer.observe(0);
    ++emitted;
  }
  const itimerval off{};
  setitimer(ITIMER_REAL, &off, nullptr);
  action.sa_handler = SIG_IGN;
  sigaction(SIGALRM, &action, nullptr);
  stop = true;
  churner.join();

  CHECK(outer_calls.load() == emitted + 1);
  CHECK(handler_calls.load() > 0);
  const std::int64_t before = handler_calls.load();
  in_handler.observe(1);
  CHECK(handler_calls.load() == before + 1);
}

#endif

// ---- Adversarial tests of the slot protocol (issue37-adversary2) ----

#include "fiber.hpp"

#include <pthread.h>

namespace adversary {

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

hookscope::observer<int> level{"stress.adversary.level"};
hookscope::observer<int> in_handler{"stress.adversary.in_handler"};

void on_alarm(int) { in_handler.observe(7); }

}  // namespace adversary

TEST_CASE("nested emissions deeper than a slot chunk while another thread adds and resets callbacks") {
  // Each emission of `level` takes a slot of its own (40 under way at once: three chunks). reset() of a callback
  // registered meanwhile must return only once the callback runs nowhere, and it must never start again after.
  using namespace adversary;
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
  using namespace adversary;
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

  sigset_t alarm_only;
  sigemptyset(&alarm_only);
  sigaddset(&alarm_only, SIGALRM);
  std::atomic<bool> stop{false};
  std::atomic<int> reset_while_running{0};
  std::vector<std::shared_ptr<probe>> probes;
  std::thread churner([&] {
    pthread_sigmask(SIG_BLOCK, &alarm_only, nullptr);
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
  struct sigaction action {};
  action.sa_handler = on_alarm;
  sigaction(SIGALRM, &action, nullptr);
  const itimerval every_50us{{0, 50}, {0, 50}};
  setitimer(ITIMER_REAL, &every_50us, nullptr);
  std::int64_t emissions = 0;
  const auto end = std::chrono::steady_clock::now() + std::chrono::milliseconds(800);
  while (std::chrono::steady_clock::now() < end) {
    level.observe(depth);
    ++emissions;
  }
  const itimerval off{};
  setitimer(ITIMER_REAL, &off, nullptr);
  action.sa_handler = SIG_IGN;
  sigaction(SIGALRM, &action, nullptr);
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
  using namespace adversary;
  hookscope::rethrow_callback_exceptions_scope rethrow;
  hookscope::observer<int> deep{"stress.adversary.throwing"};
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
  hookscope::observer<int> plain{"stress.adversary.plain"};
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
  using namespace adversary;
  hookscope::observer<int> deep{"stress.adversary.exiting"};
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
  using namespace adversary;
  hookscope::observer<int> suspending{"stress.adversary.suspending"};
  hookscope::observer<int> quick{"stress.adversary.quick"};
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
  hookscope::observer<int> o{"stress.adversary.order"};
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

hookscope::observer<int> first{"stress.stale.first"};
hookscope::observer<int> second{"stress.stale.second"};
hookscope::observer<int> in_handler{"stress.stale.in_handler"};
std::atomic<bool> in_first{false};  // this thread is inside first.observe (its callback may run)
std::atomic<bool> armed{false};
std::atomic<bool> reset_returned{false};
std::atomic<int> gave_up{0};

void on_alarm(int) { in_handler.observe(0); }

}  // namespace stale

TEST_CASE("subscription::reset of a callback that runs nowhere while a signal handler interrupts another emission") {
  // Promise (subscription.hpp, docs): reset() waits until the callback runs nowhere else — only for that. Here the
  // callback `target` of `first` runs on the emitting thread only while it is inside first.observe; a signal handler
  // that lands anywhere else (inside second.observe, say) waits until reset() returned. A reset() that waits for
  // that handler hangs (here: until the handler gives up after 100 ms).
  // Broken by the change: a walk leaves its last node in its slot, and the next emission in that slot (second's)
  // publishes its list before it marks its own callback, so between the two the slot is in use and still names
  // `target`; a handler interrupting there makes reset(target) wait for the handler, which waits for reset().
  using namespace stale;
  auto other = second.add_global([](int) {});
  auto waiter = in_handler.add_global([](int) {
    if (!armed.load(std::memory_order_relaxed) || in_first.load(std::memory_order_relaxed)) return;
    if (gave_up.load() != 0) return;  // once only: the interrupted code must get on
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(100);
    while (!reset_returned.load()) {
      if (std::chrono::steady_clock::now() > deadline) {
        gave_up.fetch_add(1);
        return;
      }
    }
  });
  first.observe(0);
  second.observe(0);

  sigset_t alarm_only;
  sigemptyset(&alarm_only);
  sigaddset(&alarm_only, SIGALRM);
  std::atomic<bool> stop{false};
  std::atomic<int> slow_resets{0};
  std::atomic<int> trials{0};
  std::thread resetter([&] {
    pthread_sigmask(SIG_BLOCK, &alarm_only, nullptr);
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
      if (took > std::chrono::milliseconds(50)) slow_resets.fetch_add(1);
      trials.fetch_add(1);
    }
    stop = true;
  });
  struct sigaction action {};
  action.sa_handler = on_alarm;
  sigaction(SIGALRM, &action, nullptr);
  const itimerval every_20us{{0, 20}, {0, 20}};
  setitimer(ITIMER_REAL, &every_20us, nullptr);
  while (!stop.load(std::memory_order_relaxed)) {
    in_first.store(true, std::memory_order_relaxed);
    std::atomic_signal_fence(std::memory_order_seq_cst);
    first.observe(1);
    std::atomic_signal_fence(std::memory_order_seq_cst);
    in_first.store(false, std::memory_order_relaxed);
    std::atomic_signal_fence(std::memory_order_seq_cst);
    second.observe(2);
  }
  const itimerval off{};
  setitimer(ITIMER_REAL, &off, nullptr);
  action.sa_handler = SIG_IGN;
  sigaction(SIGALRM, &action, nullptr);
  resetter.join();
  INFO("trials: " << trials.load() << ", handlers that gave up: " << gave_up.load());
  CHECK(slow_resets.load() == 0);
}
