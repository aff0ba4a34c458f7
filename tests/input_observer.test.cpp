#include "hookscope/input_observer.hpp"

#include <catch2/catch.hpp>

#include <optional>
#include <string>
#include <thread>
#include <utility>
#include <vector>

using hookscope::dtype;
using hookscope::tensor_spec;
using hookscope::value;

namespace llm {

using kv_layer = std::pair<tensor_spec, tensor_spec>;

namespace impl {
inline tensor_spec forward(const tensor_spec& input_ids, const tensor_spec& attention_mask,
                           const std::vector<kv_layer>& past_key_values,
                           const std::optional<tensor_spec>& pixel_values) {
  (void)attention_mask;
  (void)past_key_values;
  (void)pixel_values;
  return {{input_ids.shape[0], input_ids.shape[1], 64}, dtype::float32};
}
inline int other(int x) { return x; }
}  // namespace impl

HOOKSCOPE_OBSERVABLE(forward, impl::forward, input_ids, attention_mask, past_key_values, pixel_values);
HOOKSCOPE_OBSERVABLE(other, impl::other, x);

tensor_spec ids(std::int64_t batch, std::int64_t length) { return {{batch, length}, dtype::int64}; }
kv_layer layer(std::int64_t batch, std::int64_t past) {
  return {{{batch, 2, past, 8}, dtype::float32}, {{batch, 2, past, 8}, dtype::float32}};
}
const tensor_spec image{{1, 3, 16, 16}, dtype::float32};

// A prompt of 7 tokens with an image, then two decode steps (the image only at the first step).
void generate() {
  forward(ids(1, 7), ids(1, 7), {}, image);
  forward(ids(1, 1), ids(1, 8), {layer(1, 7)}, std::nullopt);
  forward(ids(1, 1), ids(1, 9), {layer(1, 8)}, std::nullopt);
}

}  // namespace llm

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

#if HOOKSCOPE_ENABLED

namespace {
hookscope::input_observer observed_generation() {
  hookscope::input_observer obs;
  obs.value_if_missing("pixel_values", tensor_spec{{0, 3, 16, 16}, dtype::float32});
  {
    auto rec = obs.record(llm::forward);
    llm::generate();
  }
  return obs;
}
}  // namespace

TEST_CASE("input_observer::record") {
  SECTION("keeps store_n_calls calls per recording, and each recording adds that many") {
    hookscope::input_observer obs({.store_n_calls = 2});
    obs.value_if_missing("pixel_values", tensor_spec{{0, 3, 16, 16}, dtype::float32});
    {
      auto rec = obs.record(llm::forward);
      llm::generate();
    }
    CHECK(obs.num_obs() == 2);
    {
      auto rec = obs.record(llm::forward);
      llm::generate();
    }
    CHECK(obs.num_obs() == 4);
    llm::generate();  // no recording alive
    CHECK(obs.num_obs() == 4);
  }
  SECTION("stop() ends a recording early") {
    hookscope::input_observer obs;
    auto rec = obs.record(llm::forward);
    llm::forward(llm::ids(1, 7), llm::ids(1, 7), {}, std::nullopt);
    rec.stop();
    llm::forward(llm::ids(1, 7), llm::ids(1, 7), {}, std::nullopt);
    CHECK(obs.num_obs() == 1);
  }
  SECTION("sees this thread's calls, or every thread's with global") {
    hookscope::input_observer local;
    hookscope::input_observer everywhere({.global = true});
    auto a = local.record(llm::forward);
    auto b = everywhere.record(llm::forward);
    std::thread([] { llm::forward(llm::ids(2, 3), llm::ids(2, 3), {}, std::nullopt); }).join();
    CHECK(local.num_obs() == 0);
    CHECK(everywhere.num_obs() == 1);
  }
  SECTION("one function per observer") {
    hookscope::input_observer obs;
    auto rec = obs.record(llm::forward);
    CHECK_THROWS_WITH(
        obs.record(llm::other),
        "hookscope: input_observer: already recording 'llm::forward', cannot also record 'llm::other' (use one "
        "observer per function)");
  }
}

TEST_CASE("input_observer::record and a unary operator& in the arguments' namespace: never called") {
  hookscope::input_observer obs;
  {
    auto rec = obs.record(expr::observed_eval);
    CHECK(expr::observed_eval(expr::term{3}) == 3);
  }
  CHECK(obs.num_obs() == 1);
  CHECK(expr::address_taken == 0);
}

TEST_CASE("input_observer::value_if_missing") {
  SECTION("by position: the position names the parameter") {
    hookscope::input_observer obs;
    obs.value_if_missing(3, tensor_spec{{0, 3, 16, 16}, dtype::float32});
    {
      auto rec = obs.record(llm::forward);
      llm::generate();
    }
    CHECK(obs.infer_dynamic_shapes().to_json() == observed_generation().infer_dynamic_shapes().to_json());
  }
  SECTION("a position out of the signature is an error when recording starts") {
    hookscope::input_observer obs;
    obs.value_if_missing(4, tensor_spec{{0}, dtype::float32});
    CHECK_THROWS_WITH(
        obs.record(llm::forward),
        "hookscope: input_observer::value_if_missing: position 4 is out of the signature of 'llm::forward', "
        "which has 4 parameters");
  }
  SECTION("an unknown name is an error when recording starts") {
    hookscope::input_observer obs;
    obs.value_if_missing("pixel_value", tensor_spec{{0}, dtype::float32});
    CHECK_THROWS_WITH(
        obs.record(llm::forward),
        "hookscope: input_observer::value_if_missing: 'pixel_value' is not a parameter of 'llm::forward'");
  }
  SECTION("without it, the image-only-at-prefill calls cannot be aligned") {
    hookscope::input_observer obs;
    {
      auto rec = obs.record(llm::forward);
      llm::generate();
    }
    // The best candidate (the first call with the most leaves) is the first decode step, which has no image.
    CHECK_THROWS_AS(obs.infer_dynamic_shapes(), hookscope::inference_error);
  }
}

TEST_CASE("input_observer::infer_dynamic_shapes") {
  const hookscope::input_observer obs = observed_generation();
  REQUIRE(obs.num_obs() == 3);
  // Worked out by hand: input_ids (1,7) (1,1) (1,1) -> dim 1; attention_mask lengths 7 8 9 -> dim 1; the cache
  // (empty at prefill: placeholders) past lengths 7 8 -> dim 2; pixel_values batch 1 0 0 (the filled-in value) -> dim 0.
  SECTION("default labels") {
    CHECK(obs.infer_dynamic_shapes().to_json() ==
          R"({"input_ids":{"1":"DYNAMIC"},"attention_mask":{"1":"DYNAMIC"},)"
          R"("past_key_values":[[{"2":"DYNAMIC"},{"2":"DYNAMIC"}]],"pixel_values":{"0":"DYNAMIC"}})");
  }
  SECTION("batch forced for the text inputs") {
    CHECK(obs.infer_dynamic_shapes({.batch_dimension_for = {"input_ids", "attention_mask"}}).to_json() ==
          R"({"input_ids":{"0":"DYNAMIC","1":"DYNAMIC"},"attention_mask":{"0":"DYNAMIC","1":"DYNAMIC"},)"
          R"("past_key_values":[[{"2":"DYNAMIC"},{"2":"DYNAMIC"}]],"pixel_values":{"0":"DYNAMIC"}})");
  }
  SECTION("well-known names") {
    CHECK(obs.infer_dynamic_shapes({.dim_names = true}).to_json() ==
          R"({"input_ids":{"1":"sequence_length"},"attention_mask":{"1":"total_sequence_length"},)"
          R"("past_key_values":[[{"2":"past_sequence_length"},{"2":"past_sequence_length"}]],)"
          R"("pixel_values":{"0":"batch_size"}})");
  }
  SECTION("a dynamic dimension seen only as 0 or 1 is warned about") {
    const auto ds = obs.infer_dynamic_shapes();
    REQUIRE(ds.warnings().size() == 1);
    CHECK(ds.warnings()[0].sentence.find("pixel_values") != std::string::npos);
  }
}

TEST_CASE("input_observer::infer_arguments") {
  const hookscope::input_observer obs = observed_generation();
  // The first call with as many arguments as the best candidate is the prefill; its empty cache becomes the last
  // seen cache's shapes with the highest dynamic dimension (2, the past length) set to 0.
  CHECK(hookscope::to_json(obs.infer_arguments()) ==
        R"({"dict":[["input_ids",{"shape":[1,7],"dtype":"int64"}],["attention_mask",{"shape":[1,7],"dtype":"int64"}],)"
        R"(["past_key_values",{"list":[{"tuple":[{"shape":[1,2,0,8],"dtype":"float32"},)"
        R"({"shape":[1,2,0,8],"dtype":"float32"}]}]}],["pixel_values",{"shape":[1,3,16,16],"dtype":"float32"}]]})");
}

TEST_CASE("input_observer::info and remove_inputs") {
  hookscope::input_observer obs = observed_generation();
  const auto info = obs.info();
  REQUIRE(info.calls.size() == 3);
  CHECK(info.best_candidate == 1);  // the first call with the most leaves: 1 + 1 + 2 + 1 (the filled image)
  CHECK(obs.remove_inputs({"pixel_values", "no_such_input"}) > 0);  // unknown names are ignored
  CHECK(obs.remove_inputs({"pixel_values"}) == 0);                  // nothing left to remove
  CHECK(obs.infer_dynamic_shapes().to_json() == R"({"input_ids":{"1":"DYNAMIC"},"attention_mask":{"1":"DYNAMIC"},)"
                                                R"("past_key_values":[[{"2":"DYNAMIC"},{"2":"DYNAMIC"}]]})");
}

#else

TEST_CASE("input_observer in a disabled build records nothing") {
  hookscope::input_observer obs;
  {
    auto rec = obs.record(llm::forward);
    llm::generate();
  }
  CHECK(obs.num_obs() == 0);
  CHECK_THROWS_AS(obs.infer_dynamic_shapes(), hookscope::inference_error);
}

#endif
