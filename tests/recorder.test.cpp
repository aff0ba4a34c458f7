#include "hookscope/recorder.hpp"

#include <catch2/catch.hpp>

#include <chrono>
#include <fstream>
#include <optional>
#include <sstream>
#include <stdexcept>
#include <system_error>
#include <thread>

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

#else

TEST_CASE("call_recorder in a disabled build records nothing") {
  hookscope::call_recorder rec(llm::forward);
  llm::forward(llm::ids(1, 7), std::nullopt, true);
  CHECK(rec.num_calls() == 0);
  CHECK(rec.to_jsonl().empty());
}

#endif
