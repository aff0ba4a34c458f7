// Phases (rule C6, docs/export_formats.md "Relations and profiles"): after the split on a dim being 1, each phase is
// split on a dim being 0 in some of its calls and not in the others (an input those calls left out); and a value
// holding no data beside calls holding some is left out (rule B4), as an empty sliding-window cache.
#include "hookscope/shapes.hpp"

#include "shapes_scenarios.hpp"

#include <catch2/catch.hpp>

#include <algorithm>
#include <array>
#include <map>
#include <optional>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

using shapes_test::error_of;
using shapes_test::ids;
using shapes_test::named;
using shapes_test::param;
using shapes_test::t;

namespace {

using shape = std::vector<std::int64_t>;
using range = hookscope::tensorrt_profile::shape_range;

const range& range_of(const hookscope::tensorrt_profile& p, const std::string& input) {
  for (const range& r : p.shapes) {
    if (r.input == input) return r;
  }
  FAIL("no range for " << input << " in profile " << p.phase);
  throw std::logic_error("unreachable");
}

// Recorded calls, each as the shapes of the inputs it gives (the engine's call and what it gave).
struct stream {
  shape_engine engine{engine_options{.store_n_calls = hookscope::unlimited}};
  std::vector<std::map<std::string, shape>> calls;

  void add(const std::vector<std::pair<std::string, std::optional<shape>>>& inputs) {
    value_fields kwargs;
    std::map<std::string, shape> given;
    for (const auto& [name, s] : inputs) {
      kwargs.emplace_back(name, s ? t(*s) : value());
      if (s) given[name] = *s;
    }
    engine.add_call(named(std::move(kwargs)));
    calls.push_back(std::move(given));
  }
};

// Every stored call in one profile, on its side of each of the profile's splits.
void check_sides(const hookscope::dynamic_shapes& ds, const stream& st) {
  std::vector<int> seen(st.calls.size(), 0);
  for (const auto& p : ds.tensorrt_profiles()) {
    INFO("profile " << p.phase);
    for (const std::size_t k : p.call_indexes) {
      ++seen.at(k);
      for (const auto& sp : p.splits) {
        const auto it = st.calls[k].find(sp.input);
        if (it != st.calls[k].end()) CHECK((it->second.at(sp.dim) == sp.value) == sp.equal);
      }
    }
  }
  CHECK(std::count(seen.begin(), seen.end(), 1) == static_cast<std::ptrdiff_t>(seen.size()));
}

}  // namespace

TEST_CASE("phases: a dim 0 in some calls of a phase splits it") {
  SECTION("prompts with and without an image, decode steps with and without one") {
    stream st;
    st.engine.set_parameters(
        {param("input_ids"), param("attention_mask"), param("past_key_values", value()), param("pixels", value())});
    st.engine.begin_recording();
    // The image's height varies: D2's placeholder has it 0, where a program traced from an image would guard it.
    const auto call = [&](std::int64_t s, std::int64_t p, bool image, bool cache) {
      st.add({{"input_ids", shape{1, s}},
              {"attention_mask", shape{1, p + s}},
              {"past_key_values", cache ? std::optional<shape>(shape{1, 2, p, 4}) : std::nullopt},
              {"pixels", image ? std::optional<shape>(shape{1, 3, 8 + s, 8}) : std::nullopt}});
    };
    call(7, 0, true, false), call(3, 0, false, true), call(1, 10, true, true), call(1, 11, false, true);
    call(5, 0, true, false), call(1, 5, false, true);
    const auto ds = st.engine.infer_dynamic_shapes({.dim_names = true, .profile_phases = true});
    check_sides(ds, st);
    std::vector<std::pair<std::string, std::vector<std::size_t>>> got;
    for (const auto& p : ds.tensorrt_profiles()) got.emplace_back(p.phase, p.call_indexes);
    CHECK(got == std::vector<std::pair<std::string, std::vector<std::size_t>>>{
                     {"sequence_length > 1, pixels_dim_2 > 0", {0, 4}},
                     {"sequence_length > 1, pixels_dim_2 = 0", {1}},
                     {"sequence_length = 1, pixels_dim_2 > 0", {2}},
                     {"sequence_length = 1, pixels_dim_2 = 0", {3, 5}}});
    const auto& text_only = ds.tensorrt_profiles()[1];
    REQUIRE(text_only.splits.size() == 2);
    CHECK(text_only.split->label == "sequence_length");
    CHECK((text_only.splits[1].label == "pixels_dim_2" && text_only.splits[1].value == 0 && text_only.splits[1].equal));
    CHECK_FALSE(text_only.splits[1].equals_one);
    CHECK(range_of(text_only, "pixels").max == shape{1, 3, 0, 8});
  }
  SECTION("an encoder-decoder's steps: every one of length 1, the first with its cache empty") {
    // {batch, encoder length, past}: each generate()'s first decoder step has no cache (D2 gives it length 0).
    stream st;
    st.engine.set_parameters({param("decoder_input_ids"), param("encoder_hidden"), param("self_cache", value()),
                              param("cross_cache", value())});
    st.engine.begin_recording();
    for (const auto& [b, n, p] :
         std::vector<std::array<std::int64_t, 3>>{{2, 5, 0}, {2, 5, 1}, {2, 5, 2}, {3, 7, 0}, {3, 7, 1}, {3, 7, 2}}) {
      st.add({{"decoder_input_ids", shape{b, 1}},
              {"encoder_hidden", shape{b, n, 16}},
              {"self_cache", p ? std::optional<shape>(shape{b, 2, p, 4}) : std::nullopt},
              {"cross_cache", p ? std::optional<shape>(shape{b, 2, n, 4}) : std::nullopt}});
    }
    // Without the split on 0 no dim splits them (the self-attention cache's length is 1 at the second steps only,
    // and nothing else is constant there): one program would take both, and a program traced from a later step
    // guards the cross-attention cache's length equal to the encoder's, which the first step's empty one breaks.
    const auto ds = st.engine.infer_dynamic_shapes({.profile_phases = true});
    check_sides(ds, st);
    REQUIRE(ds.tensorrt_profiles().size() == 2);
    const auto& first = ds.tensorrt_profiles()[0];
    const auto& later = ds.tensorrt_profiles()[1];
    CHECK(first.call_indexes == std::vector<std::size_t>{0, 3});
    CHECK(later.call_indexes == std::vector<std::size_t>{1, 2, 4, 5});
    REQUIRE(first.split);
    CHECK((first.split->value == 0 && first.split->equal && !later.split->equal));
    CHECK(range_of(first, "cross_cache").max[2] == 0);
    CHECK(range_of(later, "cross_cache").min[2] == 5);
  }
}

TEST_CASE("B4: a value holding no data beside calls holding data") {
  SECTION("left out in either order; kept where every call holds none; two counts without data conflict") {
    // An empty sliding-window cache keeps a 0-d tensor per layer (its window) and nothing else.
    const auto full = [](std::int64_t b, std::int64_t past) {
      return value::structure("Cache", {{"k0", t({b, 2, past, 4})},
                                        {"v0", t({b, 2, past, 4})},
                                        {"w0", t({})},
                                        {"k1", t({b, 2, past, 4})},
                                        {"v1", t({b, 2, past, 4})},
                                        {"w1", t({})}});
    };
    const value empty = value::structure("Cache", {{"0", t({})}, {"1", t({})}});
    for (const bool empty_first : {true, false}) {
      INFO("empty first " << empty_first);
      shape_engine e;
      e.set_parameters({param("x"), param("cache", value())});
      e.begin_recording();
      const auto prefill = [&](std::int64_t b, std::int64_t s) {
        e.add_call(named({{"x", ids({b, s})}, {"cache", empty}}));
      };
      const auto step = [&](std::int64_t b, std::int64_t past) {
        e.add_call(named({{"x", ids({b, 1})}, {"cache", full(b, past)}}));
      };
      if (empty_first) prefill(2, 5);
      step(2, 5), step(3, 7);
      if (!empty_first) prefill(2, 5);
      prefill(3, 7);
      const auto ds = e.infer_dynamic_shapes({.dim_names = true});
      CHECK(ds.inputs().size() == 7);  // x and the cache's six leaves
      const std::size_t prefill_index = empty_first ? 0 : 2;
      const value args = e.infer_arguments({.candidate = prefill_index}).arguments;
      // Placeholders of the full cache: length 0, the prefill's batch; the 0-d tensors as they were seen.
      CHECK(hookscope::to_json(args) ==
            R"({"dict":[["x",{"shape":[2,5],"dtype":"int64"}],["cache",{"struct":"Cache","fields":[)"
            R"(["k0",{"shape":[2,2,0,4],"dtype":"float32"}],["v0",{"shape":[2,2,0,4],"dtype":"float32"}],)"
            R"(["w0",{"shape":[],"dtype":"float32"}],["k1",{"shape":[2,2,0,4],"dtype":"float32"}],)"
            R"(["v1",{"shape":[2,2,0,4],"dtype":"float32"}],["w1",{"shape":[],"dtype":"float32"}]]}]]})");
      const auto profiles = e.infer_dynamic_shapes({.profile_phases = true}).tensorrt_profiles();
      REQUIRE(profiles.size() == 2);
      CHECK(profiles[empty_first ? 1 : 0].call_indexes ==
            (empty_first ? std::vector<std::size_t>{1, 2} : std::vector<std::size_t>{0, 1}));
    }
    // Every call holding no data: that value is the input (a struct of 0-d tensors only is not an empty cache).
    shape_engine all;
    all.set_parameters({param("x"), param("state")});
    all.add_call(named({{"x", t({1})}, {"state", empty}}));
    all.add_call(named({{"x", t({2})}, {"state", empty}}));
    CHECK(all.infer_dynamic_shapes().inputs().size() == 3);
    // Two values without data of different counts: still a conflict.
    shape_engine two;
    two.set_parameters({param("x"), param("state")});
    two.add_call(named({{"x", t({1})}, {"state", empty}}));
    two.add_call(named({{"x", t({2})}, {"state", value::list({t({}), t({}), t({})})}}));
    CHECK_THAT(error_of([&] { (void)two.infer_dynamic_shapes(); }),
               Contains("named argument 'state' has 3 flattened leaves in call 1 but previously got 2"));
  }
}
