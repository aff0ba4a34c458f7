// Tests of shape_engine::infer_arguments and shape_engine::remove_inputs (hookscope/shapes.hpp) against
// docs/input_observer_rules.md, on the scenarios of shapes_scenarios.hpp; expected values worked out by hand.
#include "hookscope/shapes.hpp"

#include <catch2/catch.hpp>

#include "shapes_scenarios.hpp"

#include <cstdint>
#include <string>
#include <vector>

using namespace shapes_test;

TEST_CASE("shape_engine::infer_arguments") {
  SECTION("default candidate: the first call with the best candidate's argument counts (D1)") {
    // Call 1 has three keywords like the best (call 1): nothing to fill.
    CHECK(llm().infer_arguments().arguments ==
          value::dict({{"input_ids", ids({1, 1})}, {"attention_mask", ids({1, 8})}, {"past_key_values", cache(7)}}));
  }
  SECTION("placeholders from the last call with a tensor, highest dynamic dim set to 0 (D2)") {
    // Call 0 has no cache: the last one seen is 1x2x8x4, whose dim 2 varies.
    argument_options o;
    o.candidate = std::size_t{0};
    CHECK(llm().infer_arguments(o).arguments ==
          value::dict({{"input_ids", ids({1, 7})}, {"attention_mask", ids({1, 7})}, {"past_key_values", cache(0)}}));
    o.flat = true;
    CHECK(llm().infer_arguments(o).arguments ==
          value::list({ids({1, 7}), ids({1, 7}), t({1, 2, 0, 4}, dtype::float16), t({1, 2, 0, 4}, dtype::float16)}));
  }
  SECTION("placeholders from the observed call agreeing best with the candidate (D2, beyond the reference)") {
    // Two generations (batch 2, then 3), each a prefill with an empty cache and two decode steps: the prefill of
    // batch 2 takes its placeholder from a batch-2 decode step (agreeing on input_ids' batch), not from the last
    // call (batch 3), so the arguments are a call the model can run.
    shape_engine e(engine_options{.store_n_calls = 6});
    e.set_parameters({param("input_ids"), param("past_key_values", value())});
    for (std::int64_t b : {2, 3}) {
      e.add_call(named({{"input_ids", ids({b, 5})}, {"past_key_values", value()}}));
      e.add_call(named({{"input_ids", ids({b, 1})}, {"past_key_values", t({b, 2, 5, 4})}}));
      e.add_call(named({{"input_ids", ids({b, 1})}, {"past_key_values", t({b, 2, 6, 4})}}));
    }
    argument_options o;
    o.candidate = std::size_t{0};
    CHECK(e.infer_arguments(o).arguments ==
          value::dict({{"input_ids", ids({2, 5})}, {"past_key_values", t({2, 2, 0, 4})}}));
    o.candidate = std::size_t{3};  // a tie with the last call: the reference's rule
    CHECK(e.infer_arguments(o).arguments ==
          value::dict({{"input_ids", ids({3, 5})}, {"past_key_values", t({3, 2, 0, 4})}}));
    // The prefill phase's profile holds the same consistent placeholders.
    dynamic_shapes_options so;
    so.profile_phases = true;
    const auto profiles = e.infer_dynamic_shapes(so).tensorrt_profiles();
    bool checked = false;
    for (const auto& p : profiles) {
      if (p.shapes[0].opt[1] != 5) continue;  // the prefill phase
      CHECK(p.shapes[1].min == std::vector<std::int64_t>{2, 2, 0, 4});
      CHECK(p.shapes[1].max == std::vector<std::int64_t>{3, 2, 0, 4});
      checked = true;
    }
    CHECK(checked);
  }
  SECTION("placeholders of new inputs take their sizes where every call had a dim equal to one they give") {
    // Batches 2 and 3 observed; new inputs of batch 4 without a cache: the placeholder has batch 4 (the cache's
    // batch equals input_ids' in every call giving both), not a source call's, which the model would refuse. Its
    // length stays 0, and a dim no given one equals keeps the source's size.
    shape_engine e(engine_options{.store_n_calls = 6});
    e.set_parameters({param("input_ids"), param("past_key_values", value()), param("w", value())});
    for (std::int64_t b : {2, 3}) {
      e.add_call(named({{"input_ids", ids({b, 5})}, {"past_key_values", value()}}));
      e.add_call(named({{"input_ids", ids({b, 1})}, {"past_key_values", t({b, 2, 5, 4})}, {"w", t({b + 5, 3})}}));
      e.add_call(named({{"input_ids", ids({b, 1})}, {"past_key_values", t({b, 2, 6, 4})}, {"w", t({b + 5, 3})}}));
    }
    argument_options o;
    o.candidate = named({{"input_ids", ids({4, 9})}});
    CHECK(e.infer_arguments(o).arguments ==
          value::dict({{"input_ids", ids({4, 9})}, {"past_key_values", t({4, 2, 0, 4})}, {"w", t({0, 3})}}));
    o.candidate = named({{"input_ids", ids({4, 1})}, {"w", t({11, 3})}});
    CHECK(e.infer_arguments(o).arguments ==
          value::dict({{"input_ids", ids({4, 1})}, {"past_key_values", t({4, 2, 0, 4})}, {"w", t({11, 3})}}));
  }
  SECTION("placeholders: an empty tensor is reused, a static one is copied, batch forcing plays no part") {
    shape_engine e;
    e.set_parameters({param("x"), param("m", value()), param("e", value())});
    e.add_call(named({{"x", t({1, 2})}}));
    e.add_call(named({{"x", t({1, 3})}, {"m", t({1, 5})}, {"e", t({1, 0})}}));
    e.add_call(named({{"x", t({1, 4})}, {"m", t({1, 5})}, {"e", t({2, 0})}}));
    argument_options o;
    o.candidate = std::size_t{0};
    // m never varies: zeros of 1x5. e's last tensor 2x0 is empty: reused as is.
    CHECK(e.infer_arguments(o).arguments == value::dict({{"x", t({1, 2})}, {"m", t({1, 5})}, {"e", t({2, 0})}}));
  }
  SECTION("new inputs aligned on the best candidate") {
    argument_options o;
    o.candidate = named({{"input_ids", ids({2, 3})}, {"attention_mask", ids({2, 3})}});
    CHECK(llm().infer_arguments(o).arguments ==
          value::dict({{"input_ids", ids({2, 3})}, {"attention_mask", ids({2, 3})}, {"past_key_values", cache(0)}}));
    o.candidate = named({{"input_ids", ids({2, 3})}, {"use_cache", false}});  // a constant the best does not have
    CHECK_THAT(error_of([&] { (void)llm().infer_arguments(o).arguments; }), Contains("different constant values"));
    o.candidate =
        named({{"input_ids", ids({2, 3})}, {"past_key_values", value::structure("DynamicCache", {{"key_0", t({1})}})}});
    CHECK_THAT(error_of([&] { (void)llm().infer_arguments(o).arguments; }),
               Contains("named argument 'past_key_values' has 1 flattened leaves but previously got 2"));
    // Parameters the calls gave by position, new inputs by name (a dict): taken by name; y, left out, is empty.
    shape_engine p;
    p.set_parameters({param("x"), param("y", value())});
    p.add_call(positional({t({1, 2}), t({1, 5})}));
    p.add_call(positional({t({2, 3}), t({2, 5})}));
    o.candidate = named({{"x", t({4, 7})}});
    CHECK(p.infer_arguments(o).arguments == value::tuple({t({4, 7}), t({0, 5})}));
  }
  SECTION("value_if_missing gives the placeholder") {
    argument_options o;
    o.candidate = std::size_t{1};
    auto args = vision(true).infer_arguments(o).arguments;
    CHECK(args.fields()[1] == std::pair<std::string, value>{"pixel_values", t({0, 3, 896, 896}, dtype::float16)});
  }
  SECTION("tuple, dict, renamed dict, args/kwargs (D3)") {
    CHECK(two_positional().infer_arguments().arguments == value::tuple({t({2, 6}), t({3, 6})}));
    argument_options o;
    o.as_args_kwargs = true;
    CHECK(two_positional().infer_arguments(o).arguments ==
          value::tuple({value::tuple({t({2, 6}), t({3, 6})}), value::dict({})}));
    shape_engine m;
    m.set_parameters({param("input_ids"), param("attention_mask")});
    m.add_call({{ids({1, 5})}, {{"attention_mask", ids({1, 5})}}});
    m.add_call({{ids({1, 6})}, {{"attention_mask", ids({1, 6})}}});
    CHECK(m.infer_arguments().arguments == value::dict({{"input_ids", ids({1, 5})}, {"attention_mask", ids({1, 5})}}));
    CHECK(m.infer_dynamic_shapes({.dim_names = true}).to_json() ==
          R"({"input_ids":{"1":"sequence_length"},"attention_mask":{"1":"total_sequence_length"}})");
  }
  SECTION("*args needs as_args_kwargs; extra keywords stay flat") {
    shape_engine e;
    e.set_parameters(
        {param("x"), param("args", parameter_kind::var_positional), param("kwargs", parameter_kind::var_keyword)});
    e.add_call({{t({2, 3}), t({4})}, {{"z", t({6})}}});
    e.add_call({{t({2, 4}), t({5})}, {{"z", t({7})}}});
    CHECK_THAT(error_of([&] { (void)e.infer_arguments().arguments; }),
               Contains("because of '*args'") && Contains("as_args_kwargs"));
    argument_options o;
    o.as_args_kwargs = true;
    CHECK(e.infer_arguments(o).arguments ==
          value::tuple({value::tuple({t({2, 3}), t({4})}), value::dict({{"z", t({6})}})}));
  }
  SECTION("errors") {
    argument_options o;
    o.candidate = std::size_t{3};
    CHECK_THAT(error_of([&] { (void)llm().infer_arguments(o).arguments; }),
               Contains("no stored call at index 3 (3 stored)"));
    CHECK_THAT(error_of([&] { (void)llm(engine_options{.keep_calls = false}).infer_arguments(o).arguments; }),
               Contains("keep_calls is false"));
  }
  SECTION("a leaf None in every call stays None, a falsy scalar stays itself") {
    // The reference raises ("no tensor at position 1"); the model was given None, 0, "" or False there.
    for (const value& falsy : {value(), value(0), value(-0.0), value(std::string()), value(false)}) {
      INFO(hookscope::to_json(falsy));
      shape_engine e;
      e.set_parameters({param("inputs"), param("flag")});
      e.add_call({{value::dict({{"a", t({2})}, {"c", falsy}}), falsy}, {}});
      e.add_call({{value::dict({{"a", t({3})}, {"c", falsy}}), falsy}, {}});
      // The representative call is the first with the most tensors (call 0); call 1 is asked for by index.
      CHECK(e.infer_arguments().arguments == value::tuple({value::dict({{"a", t({2})}, {"c", falsy}}), falsy}));
      argument_options o;
      o.candidate = std::size_t{1};
      CHECK(e.infer_arguments(o).arguments == value::tuple({value::dict({{"a", t({3})}, {"c", falsy}}), falsy}));
    }
  }
  SECTION("a falsy scalar where other calls give a tensor is a placeholder (B4)") {
    shape_engine e;
    e.set_parameters({param("x"), param("mask")});
    e.add_call(named({{"x", t({2})}, {"mask", t({2, 4})}}));
    e.add_call(named({{"x", t({3})}, {"mask", value(0)}}));
    argument_options o;
    o.candidate = std::size_t{1};
    const value got = e.infer_arguments(o).arguments;
    REQUIRE(got.type() == value::kind::dict);
    CHECK(got.fields().at(1).second.is_tensor());
  }
}

TEST_CASE("shape_engine::remove_inputs") {
  SECTION("removes an argument everywhere and counts the calls that had it (D4)") {
    auto e = llm();
    CHECK(e.remove_inputs({"attention_mask"}) == 3);
    CHECK(e.infer_dynamic_shapes().to_json() ==
          R"({"input_ids":{"1":"DYNAMIC"},"past_key_values":[{"2":"DYNAMIC"},{"2":"DYNAMIC"}]})");
    CHECK(e.parameters().size() == 3);
    CHECK(e.remove_inputs({"unknown"}) == 0);
    CHECK(e.infer_arguments().arguments == value::dict({{"input_ids", ids({1, 1})}, {"past_key_values", cache(7)}}));
  }
  SECTION("by position, and constants") {
    shape_engine e;
    e.set_parameters({param("x"), param("y"), param("flag", value(false))});
    e.add_call({{t({1, 2}), t({3, 2})}, {{"flag", true}}});
    e.add_call({{t({1, 3}), t({3, 3})}, {{"flag", true}}});
    CHECK(e.remove_inputs({"0", "flag"}) == 4);
    CHECK(e.infer_dynamic_shapes().to_json() == R"([{"1":"DYNAMIC"}])");
    CHECK(e.infer_arguments().arguments == value::tuple({t({3, 2})}));
  }
  SECTION("a removed name given again by a later call starts afresh") {
    auto e = llm();
    CHECK(e.remove_inputs({"attention_mask"}) == 3);
    e.begin_recording();
    e.add_call(named({{"input_ids", ids({1, 1})}, {"attention_mask", ids({1, 10})}, {"past_key_values", cache(9)}}));
    // attention_mask is no longer a parameter: a keyword after the signature's, seen once (static).
    CHECK(e.infer_dynamic_shapes().to_json() ==
          R"({"input_ids":{"1":"DYNAMIC"},"past_key_values":[{"2":"DYNAMIC"},{"2":"DYNAMIC"}],"attention_mask":{}})");
  }
  SECTION("errors") {
    shape_engine e;
    CHECK_THAT(error_of([&] { (void)e.remove_inputs({"x"}); }), Contains("no input was captured"));
    e.set_parameters(
        {param("x"), param("args", parameter_kind::var_positional), param("kwargs", parameter_kind::var_keyword)});
    e.add_call(positional({t({1})}));
    CHECK_THAT(error_of([&] { (void)e.remove_inputs({"args"}); }),
               Contains("cannot remove the variadic parameter 'args'"));
    CHECK_THAT(error_of([&] { (void)e.remove_inputs({"kwargs"}); }), Contains("variadic parameter 'kwargs'"));
    CHECK_THAT(error_of([&] { (void)e.remove_inputs({"1"}); }), Contains("variadic parameter 'args'"));
  }
}
