#include "hookscope/recorder.hpp"

#include "hookscope/callback_errors.hpp"
#include "hookscope/value_errors.hpp"

#include <catch2/catch.hpp>

#include <pthread.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cmath>
#include <cstddef>
#include <limits>
#include <map>
#include <mutex>
#include <random>
#include <string>
#include <vector>
#include <fstream>
#include <optional>
#include <sstream>
#include <stdexcept>
#include <system_error>
#include <thread>
#include <algorithm>
#include <cstdint>
#include <string_view>
#include <utility>

using hookscope::dtype;
using hookscope::tensor_spec;
using hookscope::value;

namespace llm {

struct engine_handle {  // polymorphic: results of this type are recorded as an opaque leaf
  virtual ~engine_handle() = default;
};

namespace impl {
inline tensor_spec forward(const tensor_spec& input_ids, const std::optional<tensor_spec>& attention_mask,
                           bool use_cache) {
  if (input_ids.shape.empty()) throw std::invalid_argument("input_ids has rank 0");
  (void)attention_mask;
  (void)use_cache;
  return {{input_ids.shape[0], input_ids.shape[1], 32}, dtype::float32};
}
inline engine_handle build(int level) {
  std::this_thread::sleep_for(std::chrono::milliseconds(level));
  return {};
}
}  // namespace impl

HOOKSCOPE_OBSERVABLE(forward, impl::forward, input_ids, attention_mask, use_cache);
HOOKSCOPE_OBSERVABLE(build, impl::build, level);

struct model {
  int step_impl(int tokens) { return tokens + 1; }
  HOOKSCOPE_OBSERVABLE_METHOD(model, step, step_impl, tokens);
};

tensor_spec ids(std::int64_t batch, std::int64_t length) { return {{batch, length}, dtype::int64}; }

}  // namespace llm

namespace hostile {
// A tensor whose traits refuse a negative dimension (as the capture rules do for every tensor).
struct odd_tensor {
  std::vector<std::int64_t> dims;
};
}  // namespace hostile

template <>
struct hookscope::tensor_traits<hostile::odd_tensor> {
  static const std::vector<std::int64_t>& shape(const hostile::odd_tensor& t) {
    for (const std::int64_t d : t.dims) {
      if (d < 0) throw hookscope::value_error("dimension " + std::to_string(d) + " is negative");
    }
    return t.dims;
  }
  static hookscope::dtype dtype(const hostile::odd_tensor&) noexcept { return hookscope::dtype::float32; }
};

namespace hostile {
namespace impl {
inline std::int64_t odd(const odd_tensor& t) { return t.dims.empty() ? 0 : t.dims[0]; }
inline tensor_spec shaped(std::int64_t d) { return {{d, 2}, dtype::float32}; }
inline std::string mixed(const std::string& s, double f, std::int64_t i, const std::vector<std::string>& words,
                         const tensor_spec& t, const std::optional<std::string>& o,
                         const std::map<std::string, double>& m) {
  (void)f, (void)i, (void)words, (void)t, (void)o, (void)m;
  return s;
}
}  // namespace impl
HOOKSCOPE_OBSERVABLE(odd, impl::odd, t);
HOOKSCOPE_OBSERVABLE(shaped, impl::shaped, d);
HOOKSCOPE_OBSERVABLE(mixed, impl::mixed, s, f, i, words, t, o, m);
}  // namespace hostile

namespace expr {
// An expression-template library's shape: a unary operator& for anything, found by argument-dependent lookup on every
// type that has one of this namespace's types among its template arguments (a call context of a function taking one).
struct term {
  int v = 0;
};
inline int address_taken = 0;
template <class T>
const void* operator&(const T&) {
  ++address_taken;
  static const int elsewhere = 0;
  return &elsewhere;
}
inline int eval(term t) { return t.v; }
HOOKSCOPE_OBSERVABLE(observed_eval, eval, t);
}  // namespace expr

namespace probe {
// A class flattened into the children it names: any names, repeated ones too (flatten_traits may name two alike),
// nested as deep as it is built (capture cuts it at its depth bound).
struct bag {
  std::vector<std::string> names;
  std::vector<bag> children;  // as many as names
};
}  // namespace probe

template <>
struct hookscope::flatten_traits<probe::bag> {
  static constexpr std::string_view name = "Bag";
  static std::vector<std::pair<std::string, probe::bag>> flatten(const probe::bag& b) {
    std::vector<std::pair<std::string, probe::bag>> children;
    for (std::size_t i = 0; i < b.names.size(); ++i) children.emplace_back(b.names[i], b.children.at(i));
    return children;
  }
};

namespace probe {
namespace impl {
// Gives back nothing (`echo` < 0), `b` (0), or `b` with its name at `echo` repeating an earlier one.
inline bag take(const bag& b, int echo) {
  if (echo < 0) return {};
  bag result = b;
  if (echo > 0)
    result.names.at(static_cast<std::size_t>(echo)) = result.names.at(static_cast<std::size_t>(echo - 1) / 2);
  return result;
}
// Spins until `id % 7` microseconds have passed (by the steady clock, inside the call).
inline int spin(int id) {
  const auto end = std::chrono::steady_clock::now() + std::chrono::microseconds(id % 7);
  while (std::chrono::steady_clock::now() < end) {
  }
  return id;
}
}  // namespace impl
HOOKSCOPE_OBSERVABLE(take, impl::take, b, echo);
HOOKSCOPE_OBSERVABLE(spin, impl::spin, id);
}  // namespace probe

#if HOOKSCOPE_ENABLED

namespace {
// Replaces every latency figure by N (no <regex>: GCC 12 warns inside it under ASan).
std::string without_latencies(std::string text) {
  const std::string key = "\"latency_ns\":";
  for (std::size_t at = text.find(key); at != std::string::npos; at = text.find(key, at + 1)) {
    const std::size_t digits = at + key.size();
    std::size_t end = digits;
    while (end < text.size() && text[end] >= '0' && text[end] <= '9') ++end;
    text.replace(digits, end - digits, "N");
  }
  return text;
}
}  // namespace

TEST_CASE("call_recorder records arguments by name, result and latency") {
  hookscope::call_recorder rec(llm::forward);
  llm::forward(llm::ids(1, 7), llm::ids(1, 7), true);
  llm::forward(llm::ids(2, 3), std::nullopt, false);
  REQUIRE(rec.num_calls() == 2);
  const auto calls = rec.calls();
  CHECK(calls[0].inputs.kwargs == hookscope::value_fields{{"input_ids", llm::ids(1, 7)},
                                                          {"attention_mask", llm::ids(1, 7)},
                                                          {"use_cache", true}});
  CHECK(calls[1].inputs.kwargs[1] == std::pair<std::string, value>{"attention_mask", value()});
  REQUIRE(calls[0].result.has_value());
  CHECK(*calls[0].result == value(tensor_spec{{1, 7, 32}, dtype::float32}));
  CHECK_FALSE(calls[0].threw);
  CHECK(calls[0].latency_ns.value() >= 0);
  CHECK(rec.function().name == "llm::forward");
}

TEST_CASE("call_recorder store_n_calls") {
  SECTION("keeps the first 3 calls by default") {
    hookscope::call_recorder rec(llm::forward);
    for (int i = 1; i <= 5; ++i) llm::forward(llm::ids(1, i), std::nullopt, true);
    REQUIRE(rec.num_calls() == 3);
    CHECK(rec.calls()[2].inputs.kwargs[0].second == value(llm::ids(1, 3)));
  }
  SECTION("a limit of one, or none") {
    hookscope::call_recorder one(llm::forward, {.store_n_calls = 1});
    hookscope::call_recorder all(llm::forward, {.store_n_calls = hookscope::unlimited});
    for (int i = 1; i <= 10; ++i) llm::forward(llm::ids(1, i), std::nullopt, true);
    CHECK(one.num_calls() == 1);
    CHECK(all.num_calls() == 10);
  }
}

TEST_CASE("call_recorder scope and contexts") {
  std::optional<hookscope::call_recorder> rec;
  rec.emplace(llm::forward);
  std::thread([] { llm::forward(llm::ids(4, 4), std::nullopt, true); }).join();
  CHECK(rec->num_calls() == 0);  // another thread's calls are not this context's

  SECTION("a worker attached to the context is recorded") {
    const auto ctx = hookscope::context::current();
    std::thread([&] {
      auto scope = ctx.attach();
      llm::forward(llm::ids(4, 4), std::nullopt, true);
    }).join();
    CHECK(rec->num_calls() == 1);
  }
  SECTION("a global recorder sees every thread") {
    hookscope::call_recorder global(llm::forward, {.global = true});
    std::thread([] { llm::forward(llm::ids(4, 4), std::nullopt, true); }).join();
    CHECK(global.num_calls() == 1);
  }
  SECTION("stop ends the recording and keeps what was recorded") {
    llm::forward(llm::ids(1, 1), std::nullopt, true);
    rec->stop();
    llm::forward(llm::ids(1, 1), std::nullopt, true);
    CHECK(rec->num_calls() == 1);
  }
}

TEST_CASE("call_recorder from many threads at once") {
  hookscope::call_recorder all(llm::forward, {.store_n_calls = hookscope::unlimited, .global = true});
  hookscope::call_recorder first_ten(llm::forward, {.store_n_calls = 10, .global = true});
  std::vector<std::thread> threads;
  for (int t = 1; t <= 4; ++t) {
    threads.emplace_back([t] {
      for (int i = 0; i < 100; ++i) llm::forward(llm::ids(t, i + 1), std::nullopt, true);
    });
  }
  for (auto& t : threads) t.join();
  CHECK(all.num_calls() == 400);
  CHECK(first_ten.num_calls() == 10);  // exactly the limit, however the threads raced

  SECTION("clear starts the count afresh") {
    first_ten.clear();
    CHECK(first_ten.num_calls() == 0);
    for (int i = 0; i < 20; ++i) llm::forward(llm::ids(1, 1), std::nullopt, true);
    CHECK(first_ten.num_calls() == 10);
  }
}

TEST_CASE("call_recorder: calls that throw, opaque results, latency") {
  hookscope::call_recorder rec(llm::forward);
  CHECK_THROWS_AS(llm::forward(tensor_spec{{}, dtype::int64}, std::nullopt, true), std::invalid_argument);
  REQUIRE(rec.num_calls() == 1);
  CHECK(rec.calls()[0].threw);
  CHECK_FALSE(rec.calls()[0].result.has_value());

  hookscope::call_recorder builds(llm::build);
  llm::build(2);
  REQUIRE(builds.num_calls() == 1);
  CHECK(builds.calls()[0].result == value::opaque("llm::engine_handle"));  // not structural: its type name
  CHECK(builds.calls()[0].latency_ns.value() >= 2'000'000);                // the call slept 2 ms

  SECTION("the latencies of calls spread over the run stay within the time around each call") {
    // Ticks become nanoseconds through a ratio measured again as the run grows: each call is converted by a ratio
    // taken at a different point of the run.
    using clock = std::chrono::steady_clock;
    const auto ns = [](clock::duration d) { return std::chrono::duration_cast<std::chrono::nanoseconds>(d).count(); };
    hookscope::recorder_options all;
    all.store_n_calls = hookscope::unlimited;
    hookscope::call_recorder spread(llm::build, all);
    std::vector<std::int64_t> around;
    for (int i = 0; i < 12; ++i) {
      const clock::time_point before = clock::now();
      llm::build(2);
      around.push_back(ns(clock::now() - before));
    }
    REQUIRE(spread.num_calls() == around.size());
    for (std::size_t i = 0; i < around.size(); ++i) {
      INFO("call " << i);
      CHECK(spread.calls()[i].latency_ns.value() >= 2'000'000);
      CHECK(spread.calls()[i].latency_ns.value() <= around[i]);
    }
  }
}

TEST_CASE("call_recorder on methods and make_observable wrappers") {
  llm::model m;
  hookscope::call_recorder steps(llm::model::step_observable{});
  (void)m.step(41);
  REQUIRE(steps.num_calls() == 1);
  CHECK(steps.calls()[0].inputs.kwargs[0] == std::pair<std::string, value>{"tokens", 41});
  CHECK(*steps.calls()[0].result == value(42));

  auto wrapped = hookscope::make_observable("double_it", [](int x) { return 2 * x; });
  hookscope::call_recorder rec(wrapped);
  (void)wrapped(4);
  REQUIRE(rec.num_calls() == 1);
  CHECK(rec.calls()[0].inputs.kwargs[0] == std::pair<std::string, value>{"arg0", 4});
}

TEST_CASE("recorder_options::tensor_data") {
  tensor_spec ids = llm::ids(1, 2);
  for (int b : {7, 0, 0, 0, 0, 0, 0, 0, 9, 0, 0, 0, 0, 0, 0, 0}) ids.data.push_back(static_cast<std::byte>(b));
  hookscope::call_recorder shapes_only(llm::forward);
  hookscope::call_recorder with_data(llm::forward, {.tensor_data = true});
  llm::forward(ids, std::nullopt, false);
  CHECK(shapes_only.calls()[0].inputs.kwargs[0].second == value(llm::ids(1, 2)));
  CHECK(with_data.calls()[0].inputs.kwargs[0].second == value(ids));
  // int64 7 and 9, little-endian: 07 00 00 | 00 00 00 | 00 00 09 | 00 00 00 | 00 00 00 | 00 -> base64 by hand
  CHECK(with_data.to_jsonl().find(
            R"(["input_ids",{"shape":[1,2],"dtype":"int64","data":"BwAAAAAAAAAJAAAAAAAAAA=="}])") != std::string::npos);
}

TEST_CASE("call_recorder::write_jsonl") {
  hookscope::call_recorder rec(llm::forward);
  llm::forward(llm::ids(1, 7), std::nullopt, true);
  CHECK_THROWS_AS(llm::forward(tensor_spec{{}, dtype::int64}, std::nullopt, true), std::invalid_argument);
  const std::string text = without_latencies(rec.to_jsonl());
  CHECK(
      text ==
      R"({"function":"llm::forward","signature":[{"name":"input_ids"},{"name":"attention_mask"},{"name":"use_cache"}],)"
      R"("args":[],"kwargs":[["input_ids",{"shape":[1,7],"dtype":"int64"}],["attention_mask",null],)"
      R"(["use_cache",{"bool":true}]],"result":{"shape":[1,7,32],"dtype":"float32"},"latency_ns":N})"
      "\n"
      R"({"function":"llm::forward","args":[],"kwargs":[["input_ids",{"shape":[],"dtype":"int64"}],)"
      R"(["attention_mask",null],["use_cache",{"bool":true}]],"threw":true,"latency_ns":N})"
      "\n");

  SECTION("to a file") {
    const auto path = std::filesystem::temp_directory_path() / "hookscope_recorder_test.jsonl";
    rec.write_jsonl(path);
    std::ifstream in(path);
    std::stringstream read;
    read << in.rdbuf();
    CHECK(read.str() == rec.to_jsonl());
    std::filesystem::remove(path);
  }
  SECTION("an unwritable path is an error naming it") {
    CHECK_THROWS_WITH(rec.write_jsonl("/nonexistent-dir/x.jsonl"),
                      Catch::Contains("cannot write \"/nonexistent-dir/x.jsonl\"") ||
                          Catch::Contains("cannot write /nonexistent-dir/x.jsonl"));
  }
}

namespace {
// Every line hookscope logs while it lives.
struct captured_log {
  captured_log() {
    hookscope::set_log_sink([this](std::string_view line) {
      const std::lock_guard lock(mutex);
      lines.emplace_back(line);
    });
  }
  captured_log(const captured_log&) = delete;
  captured_log& operator=(const captured_log&) = delete;
  ~captured_log() { hookscope::set_log_sink({}); }
  std::mutex mutex;
  std::vector<std::string> lines;
};

std::vector<hookscope::call_record> read_back(const std::string& jsonl) {
  std::istringstream in(jsonl);
  hookscope::record_reader reader(in, "recorded");
  std::vector<hookscope::call_record> calls;
  hookscope::call_record r;
  while (reader.next(r)) calls.push_back(r);
  return calls;
}
}  // namespace

TEST_CASE("call_recorder::refused_calls") {
  const captured_log log;
  SECTION("an argument the capture refuses (value_error): that call only, said once, never thrown") {
    hookscope::call_recorder rec(hostile::odd, {.store_n_calls = hookscope::unlimited});
    const hookscope::rethrow_callback_exceptions_scope rethrow;  // refusing a call is not a callback error
    for (int i = 0; i < 4; ++i) {
      CHECK(hostile::odd({{i, 2}}) == i);
      CHECK(hostile::odd({{-1, 2}}) == -1);
    }
    CHECK(rec.refused_calls() == 4);
    REQUIRE(rec.num_calls() == 4);
    CHECK(rec.calls()[3].inputs.kwargs[0].second == value(tensor_spec{{3, 2}, dtype::float32}));
    CHECK(log.lines == std::vector<std::string>{"hookscope: call_recorder: 'hostile::odd': a call is not recorded: "
                                                "dimension -1 is negative (later calls that cannot be captured are "
                                                "left out without a message; refused_calls() counts them)"});
    CHECK(read_back(rec.to_jsonl()).size() == 4);
  }
  SECTION("a result the reader would refuse (a negative dimension): refused when recorded, not when written") {
    hookscope::call_recorder rec(hostile::shaped, {.store_n_calls = 3});
    for (std::int64_t d : {1, -3, 2, -4, 3, 4}) (void)hostile::shaped(d);
    CHECK(rec.refused_calls() == 2);
    REQUIRE(rec.num_calls() == 3);  // refused calls give their places back
    CHECK(log.lines == std::vector<std::string>{"hookscope: call_recorder: 'hostile::shaped': a call is not recorded: "
                                                "capture: tensor_traits<T>::shape gave the negative dimension -3 "
                                                "at index 0 of [-3,2] (later calls "
                                                "that cannot be captured are left out without a message; "
                                                "refused_calls() counts them)"});
    const auto calls = read_back(rec.to_jsonl());
    REQUIRE(calls.size() == 3);
    CHECK(*calls[2].result == value(tensor_spec{{3, 2}, dtype::float32}));
  }
}

namespace {
std::string random_bytes(std::mt19937_64& rng) {
  std::string s(rng() % 7, '\0');
  for (char& c : s) c = static_cast<char>(rng() % 4 == 0 ? 0xe2 : rng() % 256);
  return s;
}
double random_double(std::mt19937_64& rng) {
  const double specials[] = {HUGE_VAL, -HUGE_VAL, std::nan(""), 0.0, -0.0, 5e-324, 1.7976931348623157e308};
  return rng() % 2 ? specials[rng() % std::size(specials)] : std::ldexp(static_cast<double>(rng()), -int(rng() % 120));
}
}  // namespace

TEST_CASE("call_recorder and a unary operator& in the arguments' namespace: never called") {
  hookscope::call_recorder rec(expr::observed_eval);
  CHECK(expr::observed_eval(expr::term{3}) == 3);
  REQUIRE(rec.num_calls() == 1);
  CHECK(*rec.calls()[0].result == value(3));
  CHECK(expr::address_taken == 0);
}

// Through call_recorder's writer and record_reader: random arguments of the kinds captures make today (the value kinds
// bytes, opaque and variant go through the same writer in records.test.cpp's property test).
TEST_CASE("call_recorder round trip: random arguments read back equal") {
  std::mt19937_64 rng(Catch::rngSeed());
  hookscope::call_recorder rec(hostile::mixed, {.store_n_calls = hookscope::unlimited});
  std::vector<hookscope::value_fields> sent;
  for (int call = 0; call < 300; ++call) {
    const std::string s = random_bytes(rng);
    const double f = random_double(rng);
    const std::int64_t extremes[] = {std::numeric_limits<std::int64_t>::min(), std::numeric_limits<std::int64_t>::max(),
                                     0, -1};
    const std::int64_t i = rng() % 2 ? extremes[rng() % 4] : static_cast<std::int64_t>(rng());
    std::vector<std::string> words(rng() % 3);
    for (auto& w : words) w = random_bytes(rng);
    tensor_spec t{{}, dtype::int8};
    for (std::uint64_t d = rng() % 4; d > 0; --d) t.shape.push_back(rng() % 3 == 0 ? 0 : std::int64_t(rng() >> 2));
    const std::optional<std::string> o = rng() % 2 ? std::optional<std::string>(random_bytes(rng)) : std::nullopt;
    std::map<std::string, double> m;
    for (std::uint64_t k = rng() % 3; k > 0; --k) m[random_bytes(rng)] = random_double(rng);
    (void)hostile::mixed(s, f, i, words, t, o, m);
    sent.push_back(rec.calls().back().inputs.kwargs);
  }
  const auto back = read_back(rec.to_jsonl());
  REQUIRE(back.size() == sent.size());
  for (std::size_t k = 0; k < back.size(); ++k) {
    INFO("call " << k << ": " << hookscope::to_record_line(back[k]));
    REQUIRE(back[k].inputs.kwargs.size() == sent[k].size());
    for (std::size_t a = 0; a < sent[k].size(); ++a) {
      CHECK(back[k].inputs.kwargs[a].first == sent[k][a].first);
      // Compared as their encodings: NaN is not equal to itself.
      CHECK(hookscope::to_json(back[k].inputs.kwargs[a].second) == hookscope::to_json(sent[k][a].second));
    }
    CHECK(back[k].result->as_string() == sent[k][0].second.as_string());
  }
}

namespace {
// `threads` threads (0: the calling one) each making `per_thread` calls of probe::spin, each timed around by the steady
// clock: every recorded latency is at least the call's spin and at most the time around it.
void check_latencies_within_calls(int threads, int per_thread) {
  using clock = std::chrono::steady_clock;
  hookscope::call_recorder rec(probe::spin, {.store_n_calls = hookscope::unlimited, .global = true});
  const int n = std::max(threads, 1);
  std::vector<std::int64_t> around(static_cast<std::size_t>(n * per_thread));
  auto run = [&](int t) {
    for (int i = 0; i < per_thread; ++i) {
      const int id = i * n + t;
      const clock::time_point before = clock::now();
      (void)probe::spin(id);
      around[static_cast<std::size_t>(id)] =
          std::chrono::duration_cast<std::chrono::nanoseconds>(clock::now() - before).count();
    }
  };
  if (threads == 0) {
    run(0);
  } else {
    std::vector<std::thread> running;
    for (int t = 0; t < threads; ++t) running.emplace_back(run, t);
    for (auto& t : running) t.join();
  }
  const auto calls = rec.calls();
  REQUIRE(calls.size() == around.size());
  std::vector<bool> seen(around.size());
  for (const hookscope::call_record& c : calls) {
    const auto id = static_cast<std::size_t>(c.inputs.kwargs.at(0).second.as_int());
    REQUIRE(id < around.size());
    CHECK_FALSE(seen[id]);
    seen[id] = true;
    const std::int64_t spun = static_cast<std::int64_t>(id % 7) * 1000;
    INFO("call " << id << ": latency " << c.latency_ns.value() << " ns, " << around[id] << " ns around it");
    CHECK(c.latency_ns.value() <= around[id]);
    // Early in a run the ratio is measured over a few microseconds: the start's two readings are taken as the end's
    // are, so that their gaps cancel (a start whose nanoseconds were read after a cold clock made a call 7% short).
    CHECK(c.latency_ns.value() >= spun * 95 / 100);
  }
}
}  // namespace

TEST_CASE("call_recorder: latency_ns stays within the time around each call") {
  SECTION("one thread, calls of 0 to 6 us back to back") { check_latencies_within_calls(0, 400); }
  SECTION("threads recording at once") { check_latencies_within_calls(3, 200); }
  SECTION("threads started one after another as the run grows") {
    for (int round = 0; round < 4; ++round) check_latencies_within_calls(2, 50 << round);
  }
}

// Early in a process: the tick clock starts at the first call, and its ratio is measured over a run as short as a
// few calls. Run by the test below in a process of its own.
TEST_CASE("call_recorder: latency_ns early in a fresh process", "[.fresh_process]") {
  check_latencies_within_calls(2, 300);
  check_latencies_within_calls(0, 300);
}

TEST_CASE("call_recorder: latency_ns early in a fresh process from threads") {
  for (int run = 0; run < 3; ++run) {
    const pid_t child = fork();
    REQUIRE(child >= 0);
    if (child == 0) {
      // The test above alone, in a fresh image of this program: its clock starts with its first call.
      execl("/proc/self/exe", "recorder_test", "[fresh_process]", "--out", "/dev/null", static_cast<char*>(nullptr));
      _exit(127);
    }
    int status = 0;
    REQUIRE(waitpid(child, &status, 0) == child);
    INFO("run " << run << ": status " << status);
    CHECK(WIFEXITED(status));
    CHECK(WEXITSTATUS(status) == 0);
  }
}

TEST_CASE("call_recorder::refused_calls: repeated names among few and many children, deep or not") {
  const captured_log log;
  const std::string later =
      " (later calls that cannot be captured are left out without a message; refused_calls() "
      "counts them)";
  for (const std::size_t n : {2u, 16u, 17u, 40u}) {
    probe::bag distinct;
    for (std::size_t i = 0; i < n; ++i) distinct.names.push_back("c" + std::to_string(i));
    distinct.children.resize(n);
    INFO(n << " children");
    DYNAMIC_SECTION("a repeated name in an argument, at each pair of positions: refused, said once (" << n
                                                                                                      << " children)") {
      hookscope::call_recorder rec(probe::take, {.store_n_calls = hookscope::unlimited});
      std::size_t refused = 0;
      for (std::size_t i = 0; i < n; ++i) {
        for (std::size_t j = i + 1; j < n; ++j) {
          probe::bag repeated = distinct;
          repeated.names[j] = repeated.names[i];
          (void)probe::take(repeated, -1);
          ++refused;
          (void)probe::take(distinct, -1);
        }
      }
      CHECK(rec.refused_calls() == refused);
      CHECK(rec.num_calls() == refused);
      REQUIRE(log.lines.size() == 1);
      CHECK(log.lines[0] ==
            "hookscope: call_recorder: 'probe::take': a call is not recorded: b: the key \"c0\" given "
            "twice" +
                later);
      const auto back = read_back(rec.to_jsonl());
      REQUIRE(back.size() == refused);
      CHECK(back.back().inputs.kwargs.at(0).second.fields().size() == n);
    }
    DYNAMIC_SECTION("a repeated name in the result (" << n << " children)") {
      hookscope::call_recorder rec(probe::take, {.store_n_calls = 3});
      for (int i = 0; i < 4; ++i) {
        (void)probe::take(distinct, static_cast<int>(n) - 1);  // the last name repeats the middle one
        (void)probe::take(distinct, 0);
      }
      CHECK(rec.refused_calls() == 3);  // the 4th round finds the 3 places taken: not captured
      CHECK(rec.num_calls() == 3);      // refused calls give their places back
      REQUIRE(log.lines.size() == 1);
      CHECK(log.lines[0] == "hookscope: call_recorder: 'probe::take': a call is not recorded: result: the key \"" +
                                distinct.names[(n - 2) / 2] + "\" given twice" + later);
      CHECK(read_back(rec.to_jsonl()).size() == 3);
    }
    DYNAMIC_SECTION("a repeated name deep inside a child, and a chain cut at the capture's depth bound ("
                    << n << " children)") {
      hookscope::call_recorder rec(probe::take, {.store_n_calls = hookscope::unlimited});
      // 8 levels of one child "next", the last one holding the children: its names repeated, then distinct.
      auto chain = [](probe::bag bottom, int levels) {
        for (int i = 0; i < levels; ++i) bottom = probe::bag{{"next"}, {std::move(bottom)}};
        return bottom;
      };
      probe::bag repeated = distinct;
      repeated.names[n - 1] = repeated.names[0];
      (void)probe::take(chain(repeated, 8), -1);
      (void)probe::take(chain(distinct, 8), 0);
      (void)probe::take(chain(distinct, 60), 0);  // past the bound: cut, recorded
      CHECK(rec.refused_calls() == 1);
      REQUIRE(log.lines.size() == 1);
      std::string path = "b";
      for (int i = 0; i < 8; ++i) path += ".next";
      CHECK(log.lines[0] == "hookscope: call_recorder: 'probe::take': a call is not recorded: " + path +
                                ": the key \"c0\" given twice" + later);
      const auto back = read_back(rec.to_jsonl());
      REQUIRE(back.size() == 2);
      REQUIRE(rec.num_calls() == 2);
      for (std::size_t i = 0; i < 2; ++i) CHECK(back[i].inputs == rec.calls()[i].inputs);
    }
  }
}

#else

TEST_CASE("call_recorder in a disabled build records nothing") {
  hookscope::call_recorder rec(llm::forward);
  llm::forward(llm::ids(1, 7), std::nullopt, true);
  CHECK(rec.num_calls() == 0);
  CHECK(rec.to_jsonl().empty());
}

#endif
