#include "hookscope/subscription.hpp"

#include "hookscope/observer.hpp"

#include <catch2/catch.hpp>

#include <atomic>
#include <chrono>
#include <memory>
#include <thread>
#include <type_traits>

TEST_CASE("subscription is a move-only handle") {
  STATIC_REQUIRE(std::is_nothrow_move_constructible_v<hookscope::subscription>);
  STATIC_REQUIRE(std::is_nothrow_move_assignable_v<hookscope::subscription>);
  STATIC_REQUIRE_FALSE(std::is_copy_constructible_v<hookscope::subscription>);
  STATIC_REQUIRE_FALSE(std::is_copy_assignable_v<hookscope::subscription>);
  hookscope::subscription empty;
  CHECK_FALSE(empty.active());
  empty.reset();
  CHECK(empty.release() == hookscope::callback_id{});
}

#if HOOKSCOPE_ENABLED

namespace {

// Spins (with a deadline, so a broken build fails instead of hanging) until `flag` is set.
bool wait_for(const std::atomic<bool>& flag) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  while (!flag.load()) {
    if (std::chrono::steady_clock::now() > deadline) return false;
    std::this_thread::yield();
  }
  return true;
}

}  // namespace

TEST_CASE("subscription::reset") {
  hookscope::observer<int> numbers{"numbers"};
  int calls = 0;
  auto sub = numbers.add([&](int) { ++calls; });
  CHECK(sub.active());
  numbers.observe(0);
  sub.reset();
  CHECK_FALSE(sub.active());
  numbers.observe(0);
  CHECK(calls == 1);
  sub.reset();  // idempotent
  CHECK_FALSE(numbers.has_callbacks());
}

TEST_CASE("subscription move") {
  hookscope::observer<int> numbers{"numbers"};
  int calls = 0;
  auto first = numbers.add([&](int) { ++calls; });

  SECTION("construction transfers the registration") {
    hookscope::subscription moved(std::move(first));
    CHECK(moved.active());
    CHECK_FALSE(first.active());  // moved-from is documented empty
    numbers.observe(0);
    CHECK(calls == 1);
  }
  SECTION("assignment removes the target's own registration first") {
    int other_calls = 0;
    auto second = numbers.add([&](int) { ++other_calls; });
    second = std::move(first);
    numbers.observe(0);
    CHECK(calls == 1);
    CHECK(other_calls == 0);
    second.reset();
    numbers.observe(0);
    CHECK(calls == 1);
  }
}

TEST_CASE("subscription::release") {
  hookscope::observer<int> numbers{"numbers"};
  int calls = 0;
  hookscope::callback_id id;
  {
    auto sub = numbers.add([&](int) { ++calls; });
    id = sub.release();
    CHECK_FALSE(sub.active());
  }
  numbers.observe(0);
  CHECK(calls == 1);  // still registered after the handle ended
  CHECK(numbers.remove(id));
  numbers.observe(0);
  CHECK(calls == 1);
}

TEST_CASE("subscription::reset waits for the callback to finish on other threads") {
  hookscope::observer<int> numbers{"numbers"};
  std::atomic<bool> entered{false};
  std::atomic<bool> may_finish{false};
  std::atomic<bool> finished{false};
  std::atomic<int> calls{0};
  auto sub = numbers.add_global([&](int) {
    ++calls;
    entered = true;
    while (!may_finish.load()) std::this_thread::yield();
    finished = true;
  });
  std::thread emitter([&] { numbers.observe(1); });
  REQUIRE(wait_for(entered));

  std::atomic<bool> reset_returned{false};
  std::thread resetter([&] {
    sub.reset();
    reset_returned = true;
  });
  // The reset cannot return while the callback still runs.
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  CHECK_FALSE(reset_returned.load());
  may_finish = true;
  resetter.join();
  CHECK(finished.load());  // reset returned only after the callback ended
  emitter.join();

  std::thread([&] { numbers.observe(2); }).join();
  numbers.observe(3);
  CHECK(calls == 1);  // never started again
}

TEST_CASE("subscription::reset waits only for callbacks running now") {
  // A finished emission's callback is not a running one: reset returns at once, whether the emitting thread is idle
  // or still inside an outer emission whose slot stays in use.
  hookscope::observer<int> outer{"outer"};
  hookscope::observer<int> inner{"inner"};
  std::atomic<int> inner_calls{0};
  auto inner_sub = inner.add_global([&](int) { ++inner_calls; });
  std::atomic<bool> ran{false};
  std::atomic<bool> may_end{false};

  SECTION("the emitting thread idle after its emission") {
    std::thread emitter([&] {
      inner.observe(1);
      ran = true;
      while (!may_end.load()) std::this_thread::yield();
    });
    REQUIRE(wait_for(ran));
    inner_sub.reset();  // returns while the emitter idles
    may_end = true;
    emitter.join();
  }
  SECTION("the emitting thread still in an outer callback, the inner emission over") {
    auto outer_sub = outer.add_global([&](int) {
      inner.observe(1);  // the next slot: it names the inner callback once over
      ran = true;
      while (!may_end.load()) std::this_thread::yield();
    });
    std::thread emitter([&] { outer.observe(0); });
    REQUIRE(wait_for(ran));
    inner_sub.reset();
    may_end = true;
    emitter.join();
  }
  CHECK(inner_calls == 1);
  inner.observe(2);
  CHECK(inner_calls == 1);
}

TEST_CASE("subscription::reset waits for a callback nested in another emission") {
  hookscope::observer<int> outer{"outer"};
  hookscope::observer<int> inner{"inner"};
  std::atomic<bool> entered{false};
  std::atomic<bool> may_finish{false};
  std::atomic<bool> finished{false};
  auto inner_sub = inner.add_global([&](int) {
    entered = true;
    while (!may_finish.load()) std::this_thread::yield();
    finished = true;
  });
  auto outer_sub = outer.add_global([&](int) { inner.observe(1); });
  std::thread emitter([&] { outer.observe(0); });
  REQUIRE(wait_for(entered));
  std::atomic<bool> reset_returned{false};
  std::thread resetter([&] {
    inner_sub.reset();
    reset_returned = true;
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  CHECK_FALSE(reset_returned.load());
  may_finish = true;
  resetter.join();
  CHECK(finished.load());
  emitter.join();
}

TEST_CASE("subscription outliving its observer") {
  int calls = 0;
  hookscope::subscription sub;
  hookscope::callback_id id;
  {
    auto numbers = std::make_unique<hookscope::observer<int>>("short-lived");
    sub = numbers->add([&](int) { ++calls; });
    id = numbers->add_global([&](int) { ++calls; }).release();
    numbers->observe(0);
  }
  CHECK(calls == 2);
  CHECK_FALSE(sub.active());
  sub.reset();
  CHECK(id != hookscope::callback_id{});
}

TEST_CASE("subscription outliving its thread") {
  hookscope::observer<int> numbers{"numbers"};
  int calls = 0;
  hookscope::subscription from_thread;
  hookscope::subscription global_from_thread;
  std::thread([&] {
    from_thread = numbers.add([&](int) { ++calls; });
    global_from_thread = numbers.add_global([&](int) { calls += 10; });
    numbers.observe(0);
  }).join();
  CHECK(calls == 11);
  // The thread's context ended with the thread, and its callbacks with it; the global one remains.
  CHECK_FALSE(from_thread.active());
  CHECK(global_from_thread.active());
  numbers.observe(0);
  CHECK(calls == 21);
  from_thread.reset();
  global_from_thread.reset();
  numbers.observe(0);
  CHECK(calls == 21);
}

TEST_CASE("subscription outliving its context") {
  hookscope::observer<int> numbers{"numbers"};
  int calls = 0;
  hookscope::subscription sub;
  {
    hookscope::context temporary;
    auto scope = temporary.attach();
    sub = numbers.add([&](int) { ++calls; });
    numbers.observe(0);
  }  // the scope and the last handle to the context end here
  CHECK(calls == 1);
  CHECK_FALSE(sub.active());
  numbers.observe(0);
  CHECK(calls == 1);
  sub.reset();
}

TEST_CASE("subscription destroyed on another thread") {
  hookscope::observer<int> numbers{"numbers"};
  std::atomic<int> calls{0};
  auto sub = numbers.add([&](int) { ++calls; });
  numbers.observe(0);
  std::thread([s = std::move(sub)]() mutable { s.reset(); }).join();
  numbers.observe(0);
  CHECK(calls == 1);
  CHECK_FALSE(numbers.has_callbacks());

  SECTION("while the owning thread keeps emitting") {
    std::atomic<bool> stop{false};
    auto global = numbers.add_global([&](int) { ++calls; });
    std::thread emitter([&] {
      while (!stop.load()) numbers.observe(0);
    });
    std::thread([s = std::move(global)]() mutable { s.reset(); }).join();
    const int after_reset = calls.load();
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
    CHECK(calls.load() == after_reset);
    stop = true;
    emitter.join();
  }
}

#endif
