// value_if_missing (rule A4, docs/input_observer_rules.md) and its placeholders under the batch rule C2: what a key by
// name or by position gives a call, and which arguments count as observed. Every expected text was worked out by hand
// from the rules.
#include "hookscope/shapes.hpp"

#include <catch2/catch.hpp>

#include "shapes_scenarios.hpp"

#include <cstdint>
#include <string>

using namespace shapes_test;

TEST_CASE("shape_engine::value_if_missing") {
  SECTION("by name: only when the call leaves it out (A4)") {
    auto e = vision(true);
    // pixel_values is inserted in the decode calls and sorted to its signature place; it took 1, then 0 twice.
    CHECK(e.infer_dynamic_shapes().to_json() ==
          R"({"input_ids":{"1":"DYNAMIC"},"pixel_values":{"0":"DYNAMIC"},"attention_mask":{"1":"DYNAMIC"},)"
          R"("past_key_values":[[{"2":"DYNAMIC"},{"2":"DYNAMIC"}]]})");
    const auto info = e.info();
    CHECK(info.calls[0].inputs.kwargs[1].second == t({1, 3, 896, 896}, dtype::float16));
    CHECK(info.calls[1].inputs.kwargs[1].second == t({0, 3, 896, 896}, dtype::float16));
  }
  SECTION("by name, a call giving it by position: replaced there, as a position key replaces (A4)") {
    shape_engine e;
    e.set_parameters({param("x"), param("y", value())});
    e.value_if_missing("y", t({0, 4}));
    e.add_call(positional({t({2, 3}), t({2, 4})}));
    e.add_call(positional({t({3, 3}), value()}));
    const auto info = e.info();
    CHECK(info.calls[0].inputs.args[1] == t({0, 4}));
    CHECK(info.calls[1].inputs.args[1] == t({0, 4}));
    CHECK(info.calls[1].inputs.kwargs.empty());
    // y is the placeholder in both calls: static; call 0 gave a tensor, so set_batch_dimension_for forces its dim 0.
    CHECK(e.infer_dynamic_shapes().to_json() == R"([{"0":"DYNAMIC"},{}])");
    CHECK(e.infer_dynamic_shapes({.batch_dimension_for = {"y"}}).to_json() == R"([{"0":"DYNAMIC"},{"0":"DYNAMIC"}])");
  }
  SECTION("by position: always replaces") {
    shape_engine e;
    e.set_parameters({param("x"), param("y")});
    e.value_if_missing(1, t({0, 4}));
    e.add_call(positional({t({2, 3}), t({2, 3})}));
    e.add_call(positional({t({2, 4}), t({2, 5})}));
    // y is [0,4] in both calls, so static.
    CHECK(e.infer_dynamic_shapes().to_json() == R"([{"1":"DYNAMIC"},{}])");
  }
  SECTION("errors") {
    shape_engine e;
    e.set_parameters({param("x"), param("y")});
    e.value_if_missing("pixel_values", t({0}));
    CHECK_THAT(error_of([&] { e.add_call(positional({t({1})})); }),
               Contains("unexpected keyword argument 'pixel_values'") && Contains("(x, y)"));
    shape_engine f;
    f.set_parameters({param("x"), param("y")});
    f.value_if_missing(5, t({0}));
    CHECK_THAT(error_of([&] { f.add_call(positional({t({1})})); }), Contains("position 5 is beyond"));
    shape_engine g;
    g.set_parameters({param("x"), param("y")});
    g.value_if_missing(1, t({0}));
    CHECK_THAT(error_of([&] { g.add_call(positional({t({1})})); }),
               Contains("position 1 is not given in this call") && Contains("only 1 positional"));
    CHECK(g.num_obs() == 0);
  }
  SECTION("a name accepted by **kwargs") {
    shape_engine e;
    e.set_parameters({param("x"), param("kwargs", parameter_kind::var_keyword)});
    e.value_if_missing("extra", t({0, 2}));
    e.add_call(named({{"x", t({1})}}));
    e.add_call(named({{"x", t({2})}, {"extra", t({1, 2})}}));
    CHECK(e.infer_dynamic_shapes().to_json() == R"({"x":{"0":"DYNAMIC"},"kwargs":{"extra":{"0":"DYNAMIC"}}})");
  }
}

// C2: an argument every call of a selection gives only as a placeholder gets no batch dimension.
TEST_CASE("dynamic_shapes_options::batch_dimension_for on placeholders") {
  // The decode steps of a vision-language model: pixel_values is value_if_missing's placeholder in every call.
  const auto decode = [] {
    shape_engine e(engine_options{.store_n_calls = hookscope::unlimited});
    e.set_parameters({param("input_ids"), param("pixel_values", value()), param("attention_mask", value()),
                      param("past_key_values", value())});
    e.value_if_missing("pixel_values", t({0, 3, 8, 8}));
    const auto kv = [](std::int64_t b, std::int64_t past) {
      return value::list({value::tuple({t({b, 2, past, 4}), t({b, 2, past, 4})})});
    };
    e.add_call(named({{"input_ids", ids({2, 1})}, {"attention_mask", ids({2, 11})}, {"past_key_values", kv(2, 10)}}));
    e.add_call(named({{"input_ids", ids({3, 1})}, {"attention_mask", ids({3, 12})}, {"past_key_values", kv(3, 11)}}));
    return e;
  };
  const std::string expected = R"({"input_ids":{"0":"DYNAMIC"},"pixel_values":{},)"
                               R"("attention_mask":{"0":"DYNAMIC","1":"DYNAMIC"},)"
                               R"("past_key_values":[[{"0":"DYNAMIC","2":"DYNAMIC"},{"0":"DYNAMIC","2":"DYNAMIC"}]]})";
  SECTION("for all: the placeholder stays static, silently") {
    const auto ds = decode().infer_dynamic_shapes({.batch_dimension_for_all = true});
    CHECK(ds.to_json() == expected);
    CHECK(ds.warnings().empty());
  }
  SECTION("named: static, with a warning naming it") {
    const auto ds = decode().infer_dynamic_shapes({.batch_dimension_for = {"pixel_values", "input_ids"}});
    CHECK(ds.to_json() == expected);
    REQUIRE(ds.warnings().size() == 1);
    CHECK_THAT(ds.warnings()[0], Contains("asked for 'pixel_values'") && Contains("only as its value_if_missing") &&
                                     Contains("no dynamic batch dimension"));
    CHECK(ds.warnings()[0].type == hookscope::inference_warning::kind::batch_dimension_unobserved);
    CHECK(ds.warnings()[0].input == "pixel_values");
  }
  SECTION("named by position: the placeholder a position is replaced by where the calls give none") {
    shape_engine e;
    e.set_parameters({param("x"), param("y")});
    e.value_if_missing(1, t({0, 4}));
    e.add_call(positional({t({2, 3}), value()}));
    e.add_call(positional({t({3, 4}), value()}));
    const auto ds = e.infer_dynamic_shapes({.batch_dimension_for = {"1", "0"}});
    CHECK(ds.to_json() == R"([{"0":"DYNAMIC","1":"DYNAMIC"},{}])");
    REQUIRE(ds.warnings().size() == 1);
    CHECK_THAT(ds.warnings()[0], Contains("asked for 'y'"));
  }
  SECTION("named by position, replacing a tensor one call gave: observed, so the batch dim is forced") {
    // The references' answer: the position is replaced in every call, and set_batch_dimension_for forces dim 0.
    shape_engine e;
    e.set_parameters({param("x"), param("y")});
    e.value_if_missing(1, t({0, 4}));
    e.add_call(positional({t({2, 3}), t({2, 3})}));
    e.add_call(positional({t({3, 4}), value()}));
    const auto ds = e.infer_dynamic_shapes({.batch_dimension_for = {"1", "0"}});
    CHECK(ds.to_json() == R"([{"0":"DYNAMIC","1":"DYNAMIC"},{"0":"DYNAMIC"}])");
    for (const auto& w : ds.warnings()) CHECK(w.type != hookscope::inference_warning::kind::batch_dimension_unobserved);
    CHECK(e.infer_dynamic_shapes().to_json() == R"([{"0":"DYNAMIC","1":"DYNAMIC"},{}])");
  }
  SECTION("given by some call: the batch dim is forced as before") {
    const auto ds = vision(true).infer_dynamic_shapes({.batch_dimension_for_all = true});
    CHECK(ds.to_json() == R"({"input_ids":{"0":"DYNAMIC","1":"DYNAMIC"},"pixel_values":{"0":"DYNAMIC"},)"
                          R"("attention_mask":{"0":"DYNAMIC","1":"DYNAMIC"},)"
                          R"("past_key_values":[[{"0":"DYNAMIC","2":"DYNAMIC"},{"0":"DYNAMIC","2":"DYNAMIC"}]]})");
  }
  SECTION("None in every call, named: a warning") {
    shape_engine e;
    e.set_parameters({param("x"), param("y")});
    e.add_call(positional({t({2, 3}), value()}));
    e.add_call(positional({t({3, 3}), value()}));
    const auto ds = e.infer_dynamic_shapes({.batch_dimension_for = {"y"}});
    CHECK(ds.to_json() == R"([{"0":"DYNAMIC"},null])");
    REQUIRE(ds.warnings().size() == 1);
    CHECK_THAT(ds.warnings()[0], Contains("asked for 'y', which no call gave as a tensor"));
    CHECK(ds.warnings()[0].type == hookscope::inference_warning::kind::batch_dimension_unobserved);
    CHECK(ds.warnings()[0].input == "y");
  }
  SECTION("through a summary: the placeholder count is written, read and merged") {
    const auto e = decode();
    const std::string text = e.to_summary_json("f");
    CHECK_THAT(text, Contains(R"("if_missing":2)"));
    const auto read = shape_engine::from_summary_json(text);
    CHECK(read.infer_dynamic_shapes({.batch_dimension_for_all = true}).to_json() == expected);
    CHECK(read.to_summary_json("f") == text);
    // Two shards of one call each, merged: the counts add up to what one pass wrote.
    const auto shard = [&](std::int64_t b, std::int64_t past) {
      shape_engine one(engine_options{.store_n_calls = hookscope::unlimited});
      one.set_parameters({param("input_ids"), param("pixel_values", value()), param("attention_mask", value()),
                          param("past_key_values", value())});
      one.value_if_missing("pixel_values", t({0, 3, 8, 8}));
      one.add_call(named({{"input_ids", ids({b, 1})},
                          {"attention_mask", ids({b, past + 1})},
                          {"past_key_values", value::list({value::tuple({t({b, 2, past, 4}), t({b, 2, past, 4})})})}}));
      return shape_engine::from_summary_json(one.to_summary_json("f"));
    };
    auto merged = shard(2, 10);
    merged.merge(shard(3, 11));
    CHECK(merged.to_summary_json("f") == text);
  }
}
