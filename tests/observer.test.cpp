#include "hookscope/observer.hpp"

#include <catch2/catch.hpp>

#include <atomic>
#include <pthread.h>
#include <string>
#include <thread>
#include <type_traits>
#include <vector>

namespace {

struct graph {
  int nodes = 0;
};
struct result {
  std::string engine;
};

// Declared as users do: a namespace-scope object, constant-initialised.
constinit hookscope::observer<const graph&, const result&> on_subgraph_converted{"on_subgraph_converted"};

}  // namespace

TEST_CASE("observer is constant-initialised and neither copyable nor movable") {
  STATIC_REQUIRE(std::is_nothrow_constructible_v<hookscope::observer<int>, std::string_view>);
  STATIC_REQUIRE_FALSE(std::is_copy_constructible_v<hookscope::observer<int>>);
  STATIC_REQUIRE_FALSE(std::is_move_constructible_v<hookscope::observer<int>>);
  STATIC_REQUIRE_FALSE(std::is_copy_assignable_v<hookscope::observer<int>>);
}

#if !HOOKSCOPE_ENABLED

TEST_CASE("observer in a disabled build is inert") {
  int calls = 0;
  auto sub = on_subgraph_converted.add([&](const graph&, const result&) { ++calls; });
  auto global = on_subgraph_converted.add_global([&](const graph&, const result&) { ++calls; });
  on_subgraph_converted.observe(graph{3}, result{"e"});
  CHECK(calls == 0);
  CHECK_FALSE(sub.active());
  CHECK_FALSE(on_subgraph_converted.has_callbacks());
  CHECK(sub.release() == hookscope::callback_id{});
  CHECK_FALSE(on_subgraph_converted.remove(hookscope::callback_id{1}));
  CHECK(on_subgraph_converted.name().empty());
}

#else

TEST_CASE("observer::name") { CHECK(on_subgraph_converted.name() == "on_subgraph_converted"); }

TEST_CASE("observer::observe passes the arguments to the callback") {
  std::vector<std::pair<int, std::string>> records;
  {
    auto sub =
        on_subgraph_converted.add([&](const graph& g, const result& r) { records.emplace_back(g.nodes, r.engine); });
    on_subgraph_converted.observe(graph{3}, result{"engine-a"});
    on_subgraph_converted.observe(graph{5}, result{"engine-b"});
  }
  on_subgraph_converted.observe(graph{7}, result{"after the scope"});
  REQUIRE(records.size() == 2);
  CHECK(records[0] == std::pair<int, std::string>{3, "engine-a"});
  CHECK(records[1] == std::pair<int, std::string>{5, "engine-b"});
}

TEST_CASE("observer::observe with no callback does nothing") {
  hookscope::observer<int> idle{"idle"};
  CHECK_FALSE(idle.has_callbacks());
  idle.observe(1);  // nothing to check but that it returns
  SUCCEED();
}

TEST_CASE("observer::observe runs callbacks in registration order, global ones first") {
  hookscope::observer<int> numbers{"numbers"};
  std::string order;
  auto a = numbers.add([&](int) { order += "a"; });
  auto g1 = numbers.add_global([&](int) { order += "G"; });
  auto b = numbers.add([&](int) { order += "b"; });
  auto g2 = numbers.add_global([&](int) { order += "H"; });
  auto c = numbers.add([&](int) { order += "c"; });
  numbers.observe(0);
  CHECK(order == "GHabc");

  SECTION("removing one keeps the order of the others") {
    b.reset();
    g1.reset();
    order.clear();
    numbers.observe(0);
    CHECK(order == "Hac");
  }
}

TEST_CASE("observer::add of the same callback twice runs it twice") {
  hookscope::observer<int> numbers{"numbers"};
  int sum = 0;
  auto add_value = [&](int v) { sum += v; };
  auto first = numbers.add(add_value);
  auto second = numbers.add(add_value);
  numbers.observe(5);
  CHECK(sum == 10);
  second.reset();
  numbers.observe(5);
  CHECK(sum == 15);
}

TEST_CASE("observer::add accepts any invocable") {
  hookscope::observer<int, std::string> event{"event"};
  std::string seen;
  struct functor {
    std::string* out;
    void operator()(const int& i, const std::string& s) const { *out += std::to_string(i) + s; }
  };
  auto by_functor = event.add(functor{&seen});
  auto generic = event.add([&](const auto&... args) { seen += std::to_string(sizeof...(args)); });
  auto mutable_lambda = event.add([count = 0, &seen](int, const std::string&) mutable { seen += char('0' + ++count); });
  auto returning = event.add([](int i, const std::string&) { return i * 2; });  // the result is ignored
  event.observe(4, "x");
  event.observe(4, "x");
  CHECK(seen == "4x214x22");
}

TEST_CASE("observer::add during emission runs from the next emission") {
  hookscope::observer<int> numbers{"numbers"};
  std::vector<hookscope::subscription> added;
  int late_calls = 0;
  auto adder = numbers.add([&](int) { added.push_back(numbers.add([&](int) { ++late_calls; })); });
  numbers.observe(0);
  CHECK(late_calls == 0);
  CHECK(added.size() == 1);
  numbers.observe(0);
  CHECK(late_calls == 1);
  CHECK(added.size() == 2);
}

TEST_CASE("subscription::reset during emission takes effect at once") {
  hookscope::observer<int> numbers{"numbers"};
  std::string order;

  SECTION("a callback removed by an earlier one is not called") {
    hookscope::subscription second;
    auto first = numbers.add([&](int) {
      order += "1";
      second.reset();
    });
    second = numbers.add([&](int) { order += "2"; });
    numbers.observe(0);
    numbers.observe(0);
    CHECK(order == "11");
  }

  SECTION("a callback removing itself finishes its run and is never called again") {
    hookscope::subscription self;
    self = numbers.add([&](int) {
      order += "s";
      self.reset();
      order += "S";  // still running after its own reset returned
    });
    auto other = numbers.add([&](int) { order += "o"; });
    numbers.observe(0);
    numbers.observe(0);
    CHECK(order == "sSoo");
    CHECK_FALSE(self.active());
  }

  SECTION("observer::remove by id during emission") {
    hookscope::callback_id second_id;
    auto first = numbers.add([&](int) {
      order += "1";
      CHECK(numbers.remove(second_id));
    });
    second_id = numbers.add([&](int) { order += "2"; }).release();
    numbers.observe(0);
    CHECK(order == "1");
  }
}

TEST_CASE("observer::observe may recurse") {
  hookscope::observer<int> countdown{"countdown"};
  std::vector<int> seen;
  auto sub = countdown.add([&](int n) {
    seen.push_back(n);
    if (n > 0) countdown.observe(n - 1);
  });

  SECTION("shallow") {
    countdown.observe(3);
    CHECK(seen == std::vector<int>{3, 2, 1, 0});
  }
  SECTION("deeper than the per-thread slots kept inline") {
    countdown.observe(100);
    REQUIRE(seen.size() == 101);
    CHECK(seen.front() == 100);
    CHECK(seen.back() == 0);
  }
  SECTION("removal while nested is seen by the outer emissions") {
    hookscope::observer<int> outer{"outer"};
    int outer_second = 0;
    hookscope::subscription second;
    auto first = outer.add([&](int depth) {
      if (depth == 0) outer.observe(1);
      if (depth == 1) second.reset();
    });
    second = outer.add([&](int) { ++outer_second; });
    outer.observe(0);
    CHECK(outer_second == 0);
  }
}

TEST_CASE("observer::remove") {
  hookscope::observer<int> numbers{"numbers"};
  int calls = 0;
  const hookscope::callback_id id = numbers.add([&](int) { ++calls; }).release();
  CHECK(id != hookscope::callback_id{});
  numbers.observe(0);
  CHECK(calls == 1);

  SECTION("removes a released callback once") {
    CHECK(numbers.remove(id));
    numbers.observe(0);
    CHECK(calls == 1);
    CHECK_FALSE(numbers.remove(id));
  }
  SECTION("ignores ids of other observers and the empty id") {
    hookscope::observer<int> other{"other"};
    CHECK_FALSE(other.remove(id));
    CHECK_FALSE(numbers.remove(hookscope::callback_id{}));
    numbers.observe(0);
    CHECK(calls == 2);
    CHECK(numbers.remove(id));
  }
}

TEST_CASE("observer::has_callbacks") {
  hookscope::observer<int> numbers{"numbers"};
  CHECK_FALSE(numbers.has_callbacks());
  {
    auto sub = numbers.add([](int) {});
    CHECK(numbers.has_callbacks());
    bool seen_elsewhere = true;
    std::thread([&] { seen_elsewhere = numbers.has_callbacks(); }).join();
    CHECK_FALSE(seen_elsewhere);
  }
  CHECK_FALSE(numbers.has_callbacks());
  auto global = numbers.add_global([](int) {});
  bool seen_elsewhere = false;
  std::thread([&] { seen_elsewhere = numbers.has_callbacks(); }).join();
  CHECK(seen_elsewhere);
}

TEST_CASE("observer::add_global is seen by all threads") {
  hookscope::observer<int> numbers{"numbers"};
  std::atomic<int> sum{0};
  auto global = numbers.add_global([&](int v) { sum += v; });
  std::vector<std::thread> threads;
  for (int t = 1; t <= 4; ++t) threads.emplace_back([&numbers, t] { numbers.observe(t); });
  for (auto& t : threads) t.join();
  numbers.observe(10);
  CHECK(sum == 1 + 2 + 3 + 4 + 10);
  global.reset();
  std::thread([&numbers] { numbers.observe(100); }).join();
  CHECK(sum == 20);
}

TEST_CASE("callbacks never run under a lock") {
  hookscope::observer<int> numbers{"numbers"};
  hookscope::observer<int> other{"other"};
  int inner_calls = 0;

  SECTION("a callback that adds and removes on the same observer") {
    auto sub = numbers.add([&](int) {
      auto inner = numbers.add([&](int) { ++inner_calls; });
      auto inner_global = numbers.add_global([&](int) { ++inner_calls; });
      CHECK(numbers.has_callbacks());
    });  // both removed again before the callback returns
    numbers.observe(0);
    numbers.observe(0);
    CHECK(inner_calls == 0);
  }
  SECTION("a callback that registers on another observer and fires it") {
    auto sub = numbers.add([&](int v) {
      auto inner = other.add([&](int) { ++inner_calls; });
      other.observe(v);
    });
    numbers.observe(0);
    CHECK(inner_calls == 1);
  }
  SECTION("a callback that copies and attaches contexts") {
    auto sub = numbers.add([&](int) {
      auto copy = hookscope::context::current().copy();
      auto scope = copy.attach();
      auto inner = other.add([&](int) { ++inner_calls; });
      other.observe(0);
    });
    numbers.observe(0);
    CHECK(inner_calls == 1);
  }
  SECTION("a move-only callback whose destruction resets another subscription") {
    auto owner = numbers.add([inner = other.add([&](int) { ++inner_calls; })](int) {});
    other.observe(0);
    CHECK(inner_calls == 1);
    owner.reset();  // destroys the lambda, whose member unregisters the other callback
    other.observe(0);
    CHECK(inner_calls == 1);
  }
}

namespace {

// Runs `body` on a raw pthread (std::thread's entry is not meant to be left by pthread_exit) and joins it;
// returns whether the thread ended by cancellation.
template <class F>
bool run_pthread(F body) {
  pthread_t thread;
  auto entry = [](void* arg) -> void* {
    (*static_cast<F*>(arg))();
    return nullptr;
  };
  REQUIRE(pthread_create(&thread, nullptr, entry, &body) == 0);
  void* result = nullptr;
  REQUIRE(pthread_join(thread, &result) == 0);
  return result == PTHREAD_CANCELED;
}

}  // namespace

TEST_CASE("observer::observe lets pthread_exit and pthread_cancel end the thread from a callback") {
  hookscope::observer<int> numbers{"numbers"};
  std::atomic<int> before{0};
  std::atomic<int> after{0};
  std::atomic<int> later_callbacks{0};
  auto ending = numbers.add_global([&](int how) {
    ++before;
    if (how == 1) pthread_exit(nullptr);
    if (how == 2) {
      pthread_cancel(pthread_self());
      pthread_testcancel();
    }
  });
  auto second = numbers.add_global([&](int how) {
    if (how != 0) ++later_callbacks;  // never reached: the thread ends in the first callback
  });

  SECTION("pthread_exit") {
    CHECK_FALSE(run_pthread([&] {
      numbers.observe(1);
      ++after;
    }));
  }
  SECTION("pthread_cancel") {
    CHECK(run_pthread([&] {
      numbers.observe(2);
      ++after;
    }));
  }
  SECTION("pthread_exit in rethrow mode, from a nested emission") {
    hookscope::observer<int> outer{"outer"};
    auto forward = outer.add_global([&](int how) { numbers.observe(how); });
    CHECK_FALSE(run_pthread([&] {
      hookscope::rethrow_callback_exceptions_scope rethrow;
      outer.observe(1);
      ++after;
    }));
  }
  CHECK(before == 1);
  CHECK(after == 0);
  CHECK(later_callbacks == 0);
  // The ended thread left nothing marked as running: removal does not wait for it.
  ending.reset();
  second.reset();
  numbers.observe(0);
  CHECK(before == 1);
}

namespace {

hookscope::observer<int> on_thread_exit{"on_thread_exit"};

// Fires an observer from its destructor, at thread exit.
struct fires_at_exit {
  int value = 0;
  ~fires_at_exit() { on_thread_exit.observe(value); }
};

}  // namespace

TEST_CASE("observer fired from thread_local destructors leaks no thread record") {
  std::atomic<int> calls{0};
  auto global = on_thread_exit.add_global([&](int) { ++calls; });
  auto run_threads = [&](int count, bool emit_first) {
    for (int i = 0; i < count; ++i) {
      std::thread([emit_first] {
        static thread_local fires_at_exit early;  // constructed before this thread's first emission
        early.value = 1;
        if (emit_first) on_thread_exit.observe(0);
        auto own = on_thread_exit.add([](int) {});  // and a context of its own, ended at exit
      }).join();
    }
  };
  run_threads(2, true);
  const std::size_t records = hookscope::detail::thread_records_made();
  const int calls_before = calls.load();
  run_threads(50, true);
  run_threads(50, false);
  CHECK(calls.load() == calls_before + 150);  // each thread's destructor fired, plus 50 first emissions
  CHECK(hookscope::detail::thread_records_made() <= records + 1);  // recycled, not one per thread
}

TEST_CASE("observer can be a member and destroyed with subscriptions alive") {
  struct engine {
    hookscope::observer<int> on_step{"engine::on_step"};
  };
  int calls = 0;
  hookscope::subscription sub;
  {
    engine e;
    sub = e.on_step.add([&](int) { ++calls; });
    e.on_step.observe(1);
    CHECK(sub.active());
  }
  CHECK(calls == 1);
  CHECK_FALSE(sub.active());
  sub.reset();  // nothing left to remove; must not touch the dead observer
  SUCCEED();
}

#endif
