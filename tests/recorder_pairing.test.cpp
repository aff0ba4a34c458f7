// call_recorder pairs each call's record with its own start, however the calls end: refused by a callback, ended by
// pthread_exit on threads whose stacks others reuse, suspended in fibers and resumed later or elsewhere. Part of the
// `recorder` test.
#include "hookscope/recorder.hpp"

#include "hookscope/callback_errors.hpp"

#include <catch2/catch.hpp>

#include "fiber.hpp"

#include <pthread.h>

#include <cstddef>
#include <memory>
#include <stdexcept>
#include <thread>
#include <vector>

namespace hostile {
namespace impl {
inline int work(int n) {
  if (n < 0) pthread_exit(nullptr);  // a forced unwind through the observed call
  return n * 10;
}
// Suspends the fiber that runs it in the middle of the call (when one does), which ends when the fiber is resumed.
inline hookscope_test::fiber* running_fiber = nullptr;
inline int suspending(int n) {
  if (hookscope_test::fiber* self = running_fiber) self->suspend();
  return n * 10;
}
}  // namespace impl
HOOKSCOPE_OBSERVABLE(work, impl::work, n);
HOOKSCOPE_OBSERVABLE(suspending, impl::suspending, n);
}  // namespace hostile

#if HOOKSCOPE_ENABLED  // with hooks disabled, nothing is recorded (recorder.test.cpp checks it)
TEST_CASE("call_recorder pairs each record with its own call, whatever ends the calls") {
  auto check_pairs = [](const hookscope::call_recorder& rec, std::size_t expected) {
    const auto calls = rec.calls();
    REQUIRE(calls.size() == expected);
    for (const auto& call : calls) {
      INFO(hookscope::to_record_line(call));
      REQUIRE(call.result.has_value());
      CHECK(call.result->as_int() == call.inputs.kwargs[0].second.as_int() * 10);
    }
  };
  SECTION("calls refused by a pre callback in rethrow mode neither pair with later calls nor take their places") {
    hookscope::call_recorder rec(hostile::work, {.store_n_calls = 5});
    const hookscope::rethrow_callback_exceptions_scope rethrow;
    auto refuse = hostile::work.observers.pre.add([](const auto& ctx) {
      if (ctx.template arg<"n">() % 2 == 0) throw std::runtime_error("refused");
    });
    for (int i = 0; i < 40; ++i) {
      if (i % 2 == 0) {
        CHECK_THROWS_AS(hostile::work(i), std::runtime_error);
      } else {
        CHECK(hostile::work(i) == i * 10);
      }
    }
    check_pairs(rec, 5);
  }
  SECTION("calls ended by pthread_exit on threads whose stacks later threads reuse") {
    hookscope::call_recorder rec(hostile::work, {.store_n_calls = hookscope::unlimited, .global = true});
    auto on_thread = [](int first, int n) {
      for (int i = 0; i < n; ++i) (void)hostile::work(first < 0 ? -1 : first + i);
    };
    for (int round = 0; round < 4; ++round) {
      std::thread(on_thread, -1, 1).join();
      std::thread(on_thread, round * 100, 10).join();
    }
    check_pairs(rec, 40);
  }
}

namespace {
// Runs `f` until it suspends or finishes, as the fiber hostile::suspending suspends.
void resume(hookscope_test::fiber& f) {
  hostile::impl::running_fiber = &f;
  f.resume();
  hostile::impl::running_fiber = nullptr;
}

// Runs `body` on a thread of its own whose stack no other thread uses before `stack` is freed: a call left on it
// keeps an address no later call takes.
void on_own_stack(std::vector<char>& stack, void (*body)()) {
  pthread_attr_t attr;
  REQUIRE(pthread_attr_init(&attr) == 0);
  REQUIRE(pthread_attr_setstack(&attr, stack.data(), stack.size()) == 0);
  pthread_t thread;
  REQUIRE(pthread_create(
              &thread, &attr,
              [](void* f) -> void* {
                reinterpret_cast<void (*)()>(f)();
                return nullptr;
              },
              reinterpret_cast<void*>(body)) == 0);
  REQUIRE(pthread_join(thread, nullptr) == 0);
  pthread_attr_destroy(&attr);
}
}  // namespace

TEST_CASE("call_recorder pairs calls that suspend in fibers with their own starts") {
  auto records = [](const hookscope::call_recorder& rec) {  // each call's argument, in the order the calls ended
    std::vector<std::int64_t> got;
    for (const auto& call : rec.calls()) {
      INFO(hookscope::to_record_line(call));
      REQUIRE(call.result.has_value());
      CHECK(call.result->as_int() == call.inputs.kwargs[0].second.as_int() * 10);
      got.push_back(call.inputs.kwargs[0].second.as_int());
    }
    return got;
  };
  using calls = std::vector<std::int64_t>;
  hookscope::call_recorder rec(hostile::suspending, {.store_n_calls = hookscope::unlimited, .global = true});
  SECTION("a call ends after calls begun later on its thread, which end before or after it") {
    hookscope_test::fiber a([](hookscope_test::fiber&) { CHECK(hostile::suspending(1) == 10); });
    hookscope_test::fiber b([](hookscope_test::fiber&) {
      CHECK(hostile::suspending(2) == 20);
      CHECK(hostile::suspending(3) == 30);
    });
    resume(a);                            // suspending(1) begins
    resume(b);                            // suspending(2) begins after it
    CHECK(hostile::suspending(4) == 40);  // begins and ends while both are suspended
    resume(a);                            // suspending(1) ends before suspending(2)
    resume(b);                            // suspending(2) ends, suspending(3) begins
    resume(b);                            // and ends
    CHECK(records(rec) == calls{4, 1, 2, 3});
  }
  SECTION("a call ends on another thread, with the latency of its suspension") {
    using clock = std::chrono::steady_clock;
    const auto ns = [](clock::duration d) { return std::chrono::duration_cast<std::chrono::nanoseconds>(d).count(); };
    hookscope_test::fiber a([](hookscope_test::fiber&) { CHECK(hostile::suspending(1) == 10); });
    const clock::time_point before_1 = clock::now();
    resume(a);
    const clock::time_point before_2 = clock::now();
    CHECK(hostile::suspending(2) == 20);
    const clock::time_point after_2 = clock::now();
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
    std::thread([&a] { resume(a); }).join();
    const clock::time_point after_1 = clock::now();
    REQUIRE(records(rec) == calls{2, 1});
    // Each within the time around its own call: the suspended one spans the sleep, the other one does not.
    CHECK(rec.calls()[1].latency_ns.value() >= 5'000'000);
    CHECK(rec.calls()[1].latency_ns.value() <= ns(after_1 - before_1));
    CHECK(rec.calls()[0].latency_ns.value() <= ns(after_2 - before_2));
  }
}

TEST_CASE("call_recorder releases the places of calls left on stacks no later call uses") {
  SECTION("calls refused by a pre callback in rethrow mode, each in a fiber of its own") {
    hookscope::call_recorder rec(hostile::suspending, {.store_n_calls = 3});
    const hookscope::rethrow_callback_exceptions_scope rethrow;
    auto refuse = hostile::suspending.observers.pre.add([](const auto& ctx) {
      if (ctx.template arg<"n">() < 0) throw std::runtime_error("refused");
    });
    std::vector<std::unique_ptr<hookscope_test::fiber>> fibers;  // alive to the end: their stacks are not reused
    for (int i = 0; i < 10; ++i) {
      fibers.push_back(std::make_unique<hookscope_test::fiber>(
          [](hookscope_test::fiber&) { CHECK_THROWS_AS(hostile::suspending(-1), std::runtime_error); }));
      fibers.back()->resume();
    }
    for (int i = 1; i <= 3; ++i) CHECK(hostile::suspending(i) == 10 * i);
    CHECK(rec.num_calls() == 3);
  }
  SECTION("calls ended by pthread_exit, each on a thread stack of its own") {
    hookscope::call_recorder rec(hostile::work, {.store_n_calls = 3, .global = true});
    std::vector<std::vector<char>> stacks(10, std::vector<char>(2 << 20));  // room for a sanitizer's thread data
    for (auto& stack : stacks) on_own_stack(stack, [] { (void)hostile::work(-1); });
    for (int i = 1; i <= 3; ++i) CHECK(hostile::work(i) == 10 * i);
    CHECK(rec.num_calls() == 3);
  }
}
#endif
