#include "hookscope/context.hpp"

#include "hookscope/observer.hpp"

#include <catch2/catch.hpp>

#include <atomic>
#include <chrono>
#include <memory>
#include <string>
#include <thread>
#include <type_traits>

TEST_CASE("context is a copyable shared handle") {
  STATIC_REQUIRE(std::is_nothrow_copy_constructible_v<hookscope::context>);
  STATIC_REQUIRE(std::is_nothrow_move_constructible_v<hookscope::context>);
  STATIC_REQUIRE_FALSE(std::is_copy_constructible_v<hookscope::context::scope>);
}

#if HOOKSCOPE_ENABLED

TEST_CASE("context::current") {
  const auto a = hookscope::context::current();
  const auto b = hookscope::context::current();
  CHECK(a == b);
  bool same_in_other_thread = true;
  std::thread([&] { same_in_other_thread = hookscope::context::current() == a; }).join();
  CHECK_FALSE(same_in_other_thread);
  CHECK_FALSE(hookscope::context() == a);  // a new context is a different one
}

TEST_CASE("a callback added in one thread is invisible in another") {
  hookscope::observer<int> numbers{"numbers"};
  std::atomic<int> main_calls{0};
  std::atomic<int> worker_calls{0};
  auto in_main = numbers.add([&](int) { ++main_calls; });
  std::thread([&] {
    auto in_worker = numbers.add([&](int) { ++worker_calls; });
    numbers.observe(0);
  }).join();
  numbers.observe(0);
  CHECK(main_calls == 1);
  CHECK(worker_calls == 1);
}

TEST_CASE("context::attach shares the callbacks of another thread") {
  hookscope::observer<int> numbers{"numbers"};
  std::atomic<int> calls{0};
  auto sub = numbers.add([&](int v) { calls += v; });
  const auto callers = hookscope::context::current();

  SECTION("a worker sees the caller's callbacks while attached, and only then") {
    std::thread([&] {
      numbers.observe(1000);  // not attached yet
      {
        auto scope = callers.attach();
        CHECK(hookscope::context::current() == callers);
        numbers.observe(1);
      }
      numbers.observe(1000);  // detached again
    }).join();
    CHECK(calls == 1);
  }
  SECTION("callbacks added while attached land in the shared context") {
    hookscope::subscription added_by_worker;
    std::thread([&] {
      auto scope = callers.attach();
      added_by_worker = numbers.add([&](int v) { calls += 10 * v; });
    }).join();
    numbers.observe(1);
    CHECK(calls == 11);
  }
  SECTION("scopes nest and restore the previous context") {
    hookscope::context other;
    std::thread([&] {
      const auto own = hookscope::context::current();
      {
        auto outer = callers.attach();
        {
          auto inner = other.attach();
          CHECK(hookscope::context::current() == other);
          numbers.observe(100);  // `other` holds no callback
        }
        CHECK(hookscope::context::current() == callers);
        numbers.observe(1);
      }
      CHECK(hookscope::context::current() == own);
    }).join();
    CHECK(calls == 1);
  }
}

TEST_CASE("context::copy") {
  hookscope::observer<int> numbers{"numbers"};
  std::string seen;
  auto a = numbers.add([&](int) { seen += "a"; });
  auto copy = hookscope::context::current().copy();
  CHECK_FALSE(copy == hookscope::context::current());

  SECTION("it holds the callbacks of the moment") {
    auto scope = copy.attach();
    numbers.observe(0);
    CHECK(seen == "a");
  }
  SECTION("later additions to either stay apart") {
    auto b = numbers.add([&](int) { seen += "b"; });  // only in the original
    numbers.observe(0);
    CHECK(seen == "ab");
    seen.clear();
    hookscope::subscription c;
    {
      auto scope = copy.attach();
      c = numbers.add([&](int) { seen += "c"; });  // only in the copy
      numbers.observe(0);
    }
    CHECK(seen == "ac");
    seen.clear();
    numbers.observe(0);
    CHECK(seen == "ab");
  }
  SECTION("resetting a subscription removes its callback from the copies too") {
    auto b = numbers.add([&](int) { seen += "b"; });
    auto copy_of_copy = copy.copy();
    a.reset();
    {
      auto scope = copy.attach();
      numbers.observe(0);
    }
    {
      auto scope = copy_of_copy.attach();
      numbers.observe(0);
    }
    numbers.observe(0);
    CHECK(seen == "b");
  }
  SECTION("a copy made on another thread, reset here while that thread emits in it") {
    std::atomic<bool> stop{false};
    std::atomic<int> copied_calls{0};
    auto counted = numbers.add([&](int) { ++copied_calls; });
    std::thread worker([&, ctx = hookscope::context::current()] {
      auto mine = ctx.copy();
      auto scope = mine.attach();
      while (!stop.load()) numbers.observe(1);
    });
    while (copied_calls.load() == 0) std::this_thread::yield();
    counted.reset();
    const int after_reset = copied_calls.load();
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
    CHECK(copied_calls.load() == after_reset);
    stop = true;
    worker.join();
  }
  SECTION("its callbacks end with it") {
    copy = hookscope::context();
    a.reset();
    CHECK_FALSE(numbers.has_callbacks());
  }
}

TEST_CASE("subscription::reset covers every copy: freeing what the callback captured is then safe") {
  hookscope::observer<int> numbers{"numbers"};
  auto captured = std::make_unique<std::string>("payload");
  std::string seen;
  auto sub = numbers.add([text = captured.get(), &seen](int) { seen += *text; });
  auto copy = hookscope::context::current().copy();
  sub.reset();
  captured.reset();  // under AddressSanitizer, a later call would be a use-after-free
  {
    auto scope = copy.attach();
    numbers.observe(0);
  }
  CHECK(seen.empty());
  CHECK_FALSE(numbers.has_callbacks());
}

TEST_CASE("context of a thread ends with the thread") {
  hookscope::observer<int> numbers{"numbers"};
  std::atomic<int> calls{0};
  auto token = std::make_shared<int>(0);  // its use count shows whether the callback still exists
  hookscope::context kept;
  std::thread([&] {
    auto sub = numbers.add([&calls, token](int) { ++calls; });
    kept = hookscope::context::current();
    (void)sub.release();  // stays registered in the thread's context
  }).join();
  CHECK(token.use_count() == 2);  // the handle keeps the context, and the released callback, alive
  {
    auto scope = kept.attach();
    numbers.observe(0);
  }
  CHECK(calls == 1);
  kept = hookscope::context();
  CHECK(token.use_count() == 1);  // the last handle ended the context and destroyed its callbacks

  SECTION("without a handle the callbacks end with the thread") {
    std::thread([&] { (void)numbers.add([token](int) {}).release(); }).join();
    CHECK(token.use_count() == 1);
  }
}

#endif
