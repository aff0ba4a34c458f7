#include "hookscope/errors.hpp"

#include "hookscope/observer.hpp"

#include <catch2/catch.hpp>

#include <unistd.h>

#include <condition_variable>
#include <mutex>
#include <stdexcept>
#include <string>
#include <thread>
#include <type_traits>
#include <vector>

// Every exception is declared in exceptions.hpp (errors.hpp includes it): each layer's, and the ones that carry facts
// for the front ends (merge_error's reason, load_error's kind).
TEST_CASE("errors.hpp gives the exceptions of every layer") {
  STATIC_REQUIRE(std::is_base_of_v<std::logic_error, hookscope::value_error>);
  STATIC_REQUIRE(std::is_base_of_v<std::runtime_error, hookscope::format_error>);
  STATIC_REQUIRE(std::is_base_of_v<hookscope::format_error, hookscope::record_error>);
  STATIC_REQUIRE(std::is_base_of_v<std::runtime_error, hookscope::inference_error>);
  STATIC_REQUIRE(std::is_base_of_v<hookscope::inference_error, hookscope::merge_error>);
  STATIC_REQUIRE(std::is_base_of_v<std::runtime_error, hookscope::load_error>);
  STATIC_REQUIRE(std::is_base_of_v<std::invalid_argument, hookscope::argument_error>);
  STATIC_REQUIRE(std::is_base_of_v<std::length_error, hookscope::limit_error>);
  const hookscope::load_error bad(hookscope::load_error_kind::bad_option, "--index: not with summaries");
  CHECK(bad.kind() == hookscope::load_error_kind::bad_option);
  CHECK(std::string(bad.what()) == "hookscope: --index: not with summaries");  // the library's prefix, once
  const hookscope::merge_error apart(hookscope::merge_error::reason::signatures_differ, "apart");
  CHECK(apart.why() == hookscope::merge_error::reason::signatures_differ);
}

namespace {

// Captures what hookscope logs for the duration of a test.
class captured_log {
 public:
  captured_log() {
    hookscope::set_log_sink([this](std::string_view line) {
      const std::lock_guard lock(mutex_);
      lines_.emplace_back(line);
    });
  }
  captured_log(const captured_log&) = delete;
  captured_log& operator=(const captured_log&) = delete;
  ~captured_log() { hookscope::set_log_sink({}); }
  std::vector<std::string> lines() const {
    const std::lock_guard lock(mutex_);
    return lines_;
  }

 private:
  mutable std::mutex mutex_;
  std::vector<std::string> lines_;
};

}  // namespace

TEST_CASE("rethrow_callback_exceptions_scope") {
  REQUIRE_FALSE(hookscope::rethrow_callback_exceptions());
  {
    hookscope::rethrow_callback_exceptions_scope rethrow;
    CHECK(hookscope::rethrow_callback_exceptions());
    {
      hookscope::rethrow_callback_exceptions_scope quiet(false);
      CHECK_FALSE(hookscope::rethrow_callback_exceptions());
    }
    CHECK(hookscope::rethrow_callback_exceptions());
  }
  CHECK_FALSE(hookscope::rethrow_callback_exceptions());
  hookscope::set_rethrow_callback_exceptions(true);
  CHECK(hookscope::rethrow_callback_exceptions());
  hookscope::set_rethrow_callback_exceptions(false);
  CHECK_FALSE(hookscope::rethrow_callback_exceptions());
}

TEST_CASE("rethrow_callback_exceptions_scope overlapping on two threads") {
  REQUIRE_FALSE(hookscope::rethrow_callback_exceptions());
  std::mutex mutex;
  std::condition_variable changed;
  int step = 0;
  auto wait_for = [&](int s) {
    std::unique_lock lock(mutex);
    changed.wait(lock, [&] { return step >= s; });
  };
  auto advance = [&](int s) {
    {
      const std::lock_guard lock(mutex);
      step = s;
    }
    changed.notify_all();
  };
  bool seen_by_b_inside_a = true;
  bool b_inside = false;
  bool a_after_b_left = false;
  // A enters, B enters, A leaves, B leaves: the order that left rethrow on for the whole process.
  std::thread a([&] {
    {
      hookscope::rethrow_callback_exceptions_scope rethrow;
      advance(1);
      wait_for(2);
    }
    a_after_b_left = hookscope::rethrow_callback_exceptions();
    advance(3);
  });
  std::thread b([&] {
    wait_for(1);
    seen_by_b_inside_a = hookscope::rethrow_callback_exceptions();  // A's scope is A's alone
    {
      hookscope::rethrow_callback_exceptions_scope rethrow;
      b_inside = hookscope::rethrow_callback_exceptions();
      advance(2);
      wait_for(3);
    }
  });
  a.join();
  b.join();
  CHECK_FALSE(seen_by_b_inside_a);
  CHECK(b_inside);
  CHECK_FALSE(a_after_b_left);
  CHECK_FALSE(hookscope::rethrow_callback_exceptions());
  std::thread([&] { seen_by_b_inside_a = hookscope::rethrow_callback_exceptions(); }).join();
  CHECK_FALSE(seen_by_b_inside_a);

  SECTION("the process-wide mode applies outside scopes, on every thread") {
    hookscope::set_rethrow_callback_exceptions(true);
    bool elsewhere = false;
    std::thread([&] {
      elsewhere = hookscope::rethrow_callback_exceptions();
      hookscope::rethrow_callback_exceptions_scope quiet(false);
      elsewhere = elsewhere && !hookscope::rethrow_callback_exceptions();
    }).join();
    CHECK(elsewhere);
    CHECK(hookscope::rethrow_callback_exceptions());
    hookscope::set_rethrow_callback_exceptions(false);
  }
}

#if HOOKSCOPE_ENABLED

TEST_CASE("callback exceptions are logged and the remaining callbacks still run") {
  captured_log log;
  hookscope::observer<int> numbers{"on_numbers"};
  std::string order;
  auto first = numbers.add([&](int) {
    order += "1";
    throw std::runtime_error("shape mismatch in node 7");
  });
  auto second = numbers.add([&](int) {
    order += "2";
    throw 42;  // not a std::exception
  });
  auto third = numbers.add([&](int) { order += "3"; });
  CHECK_NOTHROW(numbers.observe(0));
  CHECK(order == "123");
  const auto lines = log.lines();
  REQUIRE(lines.size() == 2);
  CHECK(lines[0] == "hookscope: a callback of observer 'on_numbers' threw: shape mismatch in node 7");
  CHECK(lines[1] ==
        "hookscope: a callback of observer 'on_numbers' threw: an exception not derived from std::exception");
}

TEST_CASE("a logged exception of the library is quoted by its sentence") {
  captured_log log;
  hookscope::observer<int> numbers{"on_numbers"};
  auto reading = numbers.add([](int) { throw hookscope::value_error("value: expected tensor, found int"); });
  CHECK_NOTHROW(numbers.observe(0));
  const auto lines = log.lines();
  REQUIRE(lines.size() == 1);
  CHECK(lines[0] == "hookscope: a callback of observer 'on_numbers' threw: value: expected tensor, found int");
}

TEST_CASE("set_rethrow_callback_exceptions propagates callback exceptions") {
  captured_log log;
  hookscope::rethrow_callback_exceptions_scope rethrow;
  hookscope::observer<int> numbers{"on_numbers"};
  std::string order;
  auto first = numbers.add([&](int) {
    order += "1";
    throw std::invalid_argument("bad graph");
  });
  auto second = numbers.add([&](int) { order += "2"; });
  CHECK_THROWS_MATCHES(numbers.observe(0), std::invalid_argument, Catch::Message("bad graph"));
  CHECK(order == "1");
  CHECK(log.lines().empty());

  SECTION("the emission state is restored, so later emissions and removals work") {
    first.reset();
    CHECK_NOTHROW(numbers.observe(0));
    CHECK(order == "12");
  }
  SECTION("from a nested emission") {
    hookscope::observer<int> outer{"outer"};
    auto forward = outer.add([&](int v) { numbers.observe(v); });
    CHECK_THROWS_AS(outer.observe(0), std::invalid_argument);
    forward.reset();
    first.reset();
    numbers.observe(0);
    CHECK(order == "112");
  }
}

TEST_CASE("set_log_sink") {
  SECTION("an empty sink restores stderr") {
    hookscope::set_log_sink({});
    hookscope::observer<int> numbers{"numbers"};
    auto sub = numbers.add([](int) { throw std::runtime_error("to stderr"); });
    CHECK_NOTHROW(numbers.observe(0));  // goes to stderr; nothing to capture here
  }
  SECTION("a throwing sink does not escape") {
    hookscope::set_log_sink([](std::string_view) { throw std::runtime_error("sink broken"); });
    CHECK_NOTHROW(hookscope::detail::log_line("hello"));
    hookscope::set_log_sink({});
  }
  SECTION("a line logged from inside the sink goes to stderr directly, not to the sink again") {
    // As a signal handler's line that interrupted the sink on its thread: no lock, no sink, one write to fd 2.
    int pipe_fds[2];
    REQUIRE(::pipe(pipe_fds) == 0);
    const int saved_stderr = ::dup(STDERR_FILENO);
    ::dup2(pipe_fds[1], STDERR_FILENO);
    int sink_calls = 0;
    hookscope::set_log_sink([&](std::string_view) {
      if (++sink_calls < 3) hookscope::detail::log_line("nested line");
    });
    hookscope::detail::log_line("outer line");
    hookscope::set_log_sink({});
    ::dup2(saved_stderr, STDERR_FILENO);
    ::close(saved_stderr);
    ::close(pipe_fds[1]);
    char got[64] = {};
    const ssize_t n = ::read(pipe_fds[0], got, sizeof got - 1);
    ::close(pipe_fds[0]);
    CHECK(sink_calls == 1);
    CHECK(std::string(got, n > 0 ? static_cast<std::size_t>(n) : 0) == "nested line\n");
  }
  SECTION("the sink receives lines from every thread") {
    captured_log log;
    hookscope::observer<int> numbers{"numbers"};
    auto global = numbers.add_global([](int v) { throw std::runtime_error(std::to_string(v)); });
    std::vector<std::thread> threads;
    for (int t = 0; t < 4; ++t) threads.emplace_back([&numbers, t] { numbers.observe(t); });
    for (auto& t : threads) t.join();
    CHECK(log.lines().size() == 4);
  }
}

#endif
