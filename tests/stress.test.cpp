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
#include <vector>

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

#endif
