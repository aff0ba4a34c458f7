// The shape engine beyond the reference's rules: relations between dynamic dims, consistent TensorRT profiles (and phases), honest labels, outputs,
// the calls left out, avoid_specialization, the typed and ONNX outputs, and the bad inputs of the shape engine.
#include "hookscope/records.hpp"

#include "shapes_scenarios.hpp"

#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <string>
#include <vector>

using shapes_test::ids;
using shapes_test::named;
using shapes_test::param;
using shapes_test::t;

namespace {

// A decoder with a KV cache: two generations (batch 1 x 7 tokens, batch 2 x 5), each a prefill (an empty cache) and 3
// decode steps; the image only at the prefill; results (logits, key, value).
shape_engine decoder(std::size_t store = hookscope::unlimited, bool keep = true) {
  shape_engine e({.store_n_calls = store, .keep_calls = keep});
  e.set_parameters(
      {param("input_ids"), param("attention_mask"), param("past_key_values", value()), param("pixel_values", value())});
  e.begin_recording();
  for (const auto& [batch, prompt] : {std::pair<std::int64_t, std::int64_t>{1, 7}, {2, 5}}) {
    std::int64_t past = 0;
    for (int step = 0; step < 4; ++step) {
      const std::int64_t seq = step == 0 ? prompt : 1;
      const value kv = value::tuple({t({batch, 2, past, 8}), t({batch, 2, past, 8})});
      e.add_call(named({{"input_ids", ids({batch, seq})},
                        {"attention_mask", ids({batch, past + seq})},
                        {"past_key_values", kv},
                        {"pixel_values", step == 0 ? t({batch, 3, 16, 16}) : value()}}),
                 value::tuple({t({batch, seq, 32}), t({batch, 2, past + seq, 8}), t({batch, 2, past + seq, 8})}));
      past += seq;
    }
  }
  return e;
}

std::int64_t at(const std::vector<std::int64_t>& shape, std::size_t d) { return shape.at(d); }

// Every relation holds at the profile's points (min, opt, max).
void check_consistent(const hookscope::dynamic_shapes& ds, const hookscope::tensorrt_profile& p) {
  using range = hookscope::tensorrt_profile::shape_range;
  std::map<std::string, const range*> by_name;
  for (const range& r : p.shapes) by_name[r.input] = &r;
  for (auto point : {&range::min, &range::opt, &range::max}) {
    for (const hookscope::dim_relation& rel : ds.relations()) {
      const auto v = [&](const hookscope::dim_relation::dim_ref& d) { return at(by_name.at(d.input)->*point, d.dim); };
      std::int64_t rhs = rel.k * v(rel.terms[0]) + rel.c;
      if (rel.terms.size() > 1) rhs += v(rel.terms[1]);
      INFO(p.phase << ": " << rel.text);
      CHECK(v(rel.target) == rhs);
    }
  }
}

}  // namespace

TEST_CASE("relations and consistent profiles on the decoder") {
  const shape_engine e = decoder();
  const auto ds = e.infer_dynamic_shapes({.dim_names = true});
  REQUIRE(ds.relations().size() == 1);
  CHECK(ds.relations()[0].text == "total_sequence_length = sequence_length + past_sequence_length");
  CHECK_FALSE(ds.relations()[0].torch_derived);

  SECTION("one profile: opt is call 0, min/max widened along the relation") {
    REQUIRE(ds.tensorrt_profiles().size() == 1);
    const auto& p = ds.tensorrt_profiles()[0];
    CHECK(p.calls == 8);
    check_consistent(ds, p);
    REQUIRE(p.shapes[1].input == "attention_mask");
    CHECK(p.shapes[1].min == std::vector<std::int64_t>{1, 1});  // 5 widened to 1 + 0
    CHECK(p.shapes[1].opt == std::vector<std::int64_t>{1, 7});
    CHECK(p.shapes[1].max == std::vector<std::int64_t>{2, 16});  // 10 widened to 7 + 9
    CHECK(p.widened.size() == 2);
  }
  SECTION("phases: prefill and decode, each consistent") {
    const auto phased = e.infer_dynamic_shapes({.dim_names = true, .profile_phases = true});
    REQUIRE(phased.tensorrt_profiles().size() == 2);
    CHECK(phased.tensorrt_profiles()[0].phase == "sequence_length > 1");
    CHECK(phased.tensorrt_profiles()[0].calls == 2);
    CHECK(phased.tensorrt_profiles()[1].phase == "sequence_length = 1");
    CHECK(phased.tensorrt_profiles()[1].calls == 6);
    for (const auto& p : phased.tensorrt_profiles()) {
      check_consistent(phased, p);
      CHECK(p.widened.empty());
    }
    CHECK(phased.tensorrt_profiles()[1].shapes[2].opt == std::vector<std::int64_t>{1, 2, 7, 8});
  }
  SECTION("labels: the image's batch, given at the prefills only, is batch_size (equal wherever both are given)") {
    CHECK(ds.to_json() == R"({"input_ids":{"0":"batch_size","1":"sequence_length"},)"
                          R"("attention_mask":{"0":"batch_size","1":"total_sequence_length"},)"
                          R"("past_key_values":[{"0":"batch_size","2":"past_sequence_length"},)"
                          R"({"0":"batch_size","2":"past_sequence_length"}],"pixel_values":{"0":"batch_size"}})");
    for (const auto& w : ds.warnings()) CHECK(w.sentence.find("is not named batch_size") == std::string::npos);
  }
  SECTION("outputs, flattened as inputs are") {
    REQUIRE(ds.outputs().size() == 3);
    CHECK(ds.outputs()[0].name == "result.0");
    CHECK(ds.outputs()[0].dynamic_dims.size() == 2);
    CHECK(ds.outputs()[1].name == "result.1");
    CHECK(ds.outputs()[1].dynamic_dims[1].dim == 2);
    CHECK(ds.outputs()[1].dynamic_dims[1].min == 5);
    CHECK(ds.outputs()[1].dynamic_dims[1].max == 10);
  }
  SECTION("typed structure and ONNX dynamic_axes") {
    CHECK(ds.to_typed_json().substr(0, 9) == R"({"dict":[)");
    CHECK(ds.to_typed_json().find(R"(["past_key_values",{"tuple":[{"0":"batch_size")") != std::string::npos);
    CHECK(ds.to_onnx().find(R"("past_key_values.1":{"0":"batch_size","2":"past_sequence_length"})") !=
          std::string::npos);
    CHECK(ds.to_onnx().find(R"("result.0":{"0":"batch_size","1":"sequence_length"})") != std::string::npos);
    CHECK(ds.outputs()[1].dynamic_dims[1].label == "total_sequence_length");  // past + sequence, as the mask
  }
}

TEST_CASE("tensorrt_profile::call_indexes: the stored calls each profile covers") {
  // The decoder's calls: 0 and 4 prefills, the others decode steps.
  using indexes = std::vector<std::size_t>;
  const auto check = [](const shape_engine& e, const indexes& prefills, const indexes& decodes) {
    const auto ds = e.infer_dynamic_shapes({.dim_names = true, .profile_phases = true});
    REQUIRE(ds.tensorrt_profiles().size() == 2);
    const auto& prefill = ds.tensorrt_profiles()[0];
    const auto& decode = ds.tensorrt_profiles()[1];
    CHECK(prefill.phase == "sequence_length > 1");
    CHECK(prefill.call_indexes == prefills);
    CHECK(decode.call_indexes == decodes);
    // Each stored call in exactly one profile, `calls` of them in each.
    CHECK(prefill.calls == prefills.size());
    CHECK(decode.calls == decodes.size());
    indexes every = prefill.call_indexes;
    every.insert(every.end(), decode.call_indexes.begin(), decode.call_indexes.end());
    std::sort(every.begin(), every.end());
    indexes expected(e.info().calls.size());
    for (std::size_t i = 0; i < expected.size(); ++i) expected[i] = i;
    CHECK(every == expected);
  };
  SECTION("two phases; one profile lists every call") {
    const shape_engine e = decoder();
    check(e, {0, 4}, {1, 2, 3, 5, 6, 7});
    const auto all = e.infer_dynamic_shapes({.dim_names = true});
    REQUIRE(all.tensorrt_profiles().size() == 1);
    CHECK(all.tensorrt_profiles()[0].call_indexes == indexes{0, 1, 2, 3, 4, 5, 6, 7});
  }
  SECTION("a merge: the later engine's calls after the earlier one's, repeated calls each listed") {
    shape_engine e = decoder();
    e.merge(decoder());
    check(e, {0, 4, 8, 12}, {1, 2, 3, 5, 6, 7, 9, 10, 11, 13, 14, 15});
  }
  SECTION("remove_inputs rewrites the stored calls and merges their distinct calls: the calls stay in their phase") {
    shape_engine e = decoder();
    CHECK(e.remove_inputs({"pixel_values"}) > 0);
    check(e, {0, 4}, {1, 2, 3, 5, 6, 7});
  }
  SECTION("store_n_calls: the stored calls only") { check(decoder(6), {0, 4}, {1, 2, 3, 5}); }
  SECTION("calls not kept: no index, the counts unchanged") {
    const auto ds =
        decoder(hookscope::unlimited, false).infer_dynamic_shapes({.dim_names = true, .profile_phases = true});
    REQUIRE(ds.tensorrt_profiles().size() == 2);
    CHECK(ds.tensorrt_profiles()[0].call_indexes.empty());
    CHECK(ds.tensorrt_profiles()[1].call_indexes.empty());
    CHECK(ds.tensorrt_profiles()[0].calls == 2);
    CHECK(ds.tensorrt_profiles()[1].calls == 6);
  }
}

TEST_CASE("relations: k*b + c, equality under different labels, nothing from one call") {
  shape_engine e;
  e.set_parameters({param("x"), param("y")});
  e.begin_recording();
  for (std::int64_t n : {3, 5, 4}) e.add_call(named({{"x", t({n, 4})}, {"y", t({2 * n + 1, 4})}}));
  auto ds = e.infer_dynamic_shapes();
  REQUIRE(ds.relations().size() == 1);
  CHECK(ds.relations()[0].text == "y_dim_0 = 2*x_dim_0 + 1");
  CHECK(ds.relations()[0].torch_derived);
  CHECK(ds.relations()[0].k == 2);
  CHECK(ds.relations()[0].c == 1);

  shape_engine one;
  one.add_call(named({{"x", t({3, 4})}, {"y", t({7, 4})}}));
  CHECK(one.infer_dynamic_shapes({.batch_dimension_for_all = true}).relations().empty());
}

TEST_CASE("explicit labels that contradict the observations get a warning") {
  shape_engine e;
  e.set_parameters({param("a"), param("b")});
  e.begin_recording();
  e.add_call(named({{"a", t({1, 3})}, {"b", t({1, 4})}}));
  e.add_call(named({{"a", t({1, 5})}, {"b", t({1, 9})}}));
  const auto ds = e.infer_dynamic_shapes({.dim_labels = {{"a", 1, "n"}, {"b", 1, "n"}}});
  CHECK(ds.to_json() == R"({"a":{"1":"n"},"b":{"1":"n"}})");  // kept: the user asked for them
  bool warned = false;
  for (const auto& w : ds.warnings())
    warned = warned || w.sentence.find("the label n is given to") != std::string::npos;
  CHECK(warned);
}

TEST_CASE("dynamic_shapes::report with outputs named longer than every input") {
  shape_engine e({.store_n_calls = hookscope::unlimited});
  e.set_parameters({param("x")});
  e.begin_recording();
  for (const std::int64_t n : {2, 3}) {
    e.add_call(named({{"x", t({n, 4})}}), value::dict({{"a_rather_long_output_name", t({n, 8})}}));
  }
  const std::string report = e.infer_dynamic_shapes().report();
  // Every table row keeps its dtype in one column: the name column is as wide as the longest name, output or input.
  const std::size_t column = report.find("dtype");
  REQUIRE(column != std::string::npos);
  for (const char* row : {"x ", "result.a_rather_long_output_name "}) {
    const std::size_t at = report.find(std::string("\n") + row);
    REQUIRE(at != std::string::npos);
    CHECK(report.substr(at + 1 + column, 7) == "float32");
  }
}

TEST_CASE("calls beyond store_n_calls are counted") {
  const shape_engine e = decoder(3);
  CHECK(e.num_obs() == 3);
  CHECK(e.info().calls_ignored == 5);
  CHECK(e.info().calls_seen == 8);
}

TEST_CASE("avoid_specialization") {
  const shape_engine e = decoder(8);
  const hookscope::inferred_arguments chosen = e.infer_arguments({.avoid_specialization = true});
  CHECK(hookscope::to_json(chosen.arguments).rfind(R"({"dict":[["input_ids",{"shape":[2,5],"dtype":"int64"}],)", 0) ==
        0);
  REQUIRE(chosen.warnings.size() == 1);
  CHECK(chosen.warnings[0].sentence.find("dimension 2 of 'past_key_values.0' is 0") != std::string::npos);
  // The call reported is the stored call the arguments start from: its input_ids are the [2,5] above.
  REQUIRE(chosen.call.has_value());
  const hookscope::engine_info info = e.info();
  REQUIRE(*chosen.call < info.calls.size());
  CHECK(hookscope::to_json(info.calls[*chosen.call].inputs.kwargs.front().second) ==
        R"({"shape":[2,5],"dtype":"int64"})");
  CHECK(e.infer_arguments({.avoid_specialization = true}).arguments == chosen.arguments);
  // The default stays the reference's choice: call 0.
  CHECK(hookscope::to_json(e.infer_arguments().arguments)
            .rfind(R"({"dict":[["input_ids",{"shape":[1,7],"dtype":"int64"}],)", 0) == 0);
  CHECK(e.infer_arguments().call == std::optional<std::size_t>(0));
  CHECK(e.infer_arguments().warnings.empty());
  CHECK_THROWS_AS(decoder(hookscope::unlimited, false).infer_arguments({.avoid_specialization = true}).arguments,
                  hookscope::inference_error);
}

TEST_CASE("bad inputs of the engine") {
  SECTION("a NaN constant equals itself") {
    shape_engine e;
    e.set_parameters({param("x"), param("eps", value(0.5))});
    e.begin_recording();
    const double nan = std::numeric_limits<double>::quiet_NaN();
    e.add_call(named({{"x", t({2})}, {"eps", value(nan)}}));
    e.add_call(named({{"x", t({3})}, {"eps", value(nan)}}));
    CHECK(e.infer_dynamic_shapes().to_json() == R"({"x":{"0":"DYNAMIC"},"eps":null})");
  }
  SECTION("huge dims: placeholders get their 0, no signed overflow") {
    shape_engine e;
    e.set_parameters({param("x"), param("y", value())});
    e.begin_recording();
    const std::int64_t big = std::int64_t{1} << 40;
    e.add_call(named({{"x", t({1})}}));
    e.add_call(named({{"x", t({2})}, {"y", t({big, big, 2})}}));
    e.add_call(named({{"x", t({3})}, {"y", t({big, big, 3})}}));
    const value args = e.infer_arguments({.candidate = std::size_t{0}}).arguments;
    CHECK(hookscope::to_json(args) == R"({"dict":[["x",{"shape":[1],"dtype":"float32"}],)"
                                      R"(["y",{"shape":[1099511627776,1099511627776,0],"dtype":"float32"}]]})");
  }
  SECTION("a dtype that changes: a warning naming the input and the dtypes") {
    shape_engine e;
    e.begin_recording();
    e.add_call(named({{"x", t({2}, dtype::float32)}}));
    e.add_call(named({{"x", t({3}, dtype::float16)}}));
    const auto ds = e.infer_dynamic_shapes();
    bool warned = false;
    for (const auto& w : ds.warnings())
      warned = warned || w.sentence.find("'x' changed dtype between calls (float32, float16)") != std::string::npos;
    CHECK(warned);
  }
  SECTION("a name trtexec / ONNX Runtime cannot carry: an error naming it") {
    shape_engine e;
    e.begin_recording();
    e.add_call(named({{"a,b", t({2})}}));
    e.add_call(named({{"a,b", t({3})}}));
    const auto ds = e.infer_dynamic_shapes();
    CHECK_THROWS_WITH(ds.to_trtexec(), Catch::Contains("'a,b'") && Catch::Contains("','"));
    CHECK_THROWS_AS(ds.to_ort_options(), hookscope::inference_error);
    CHECK(ds.to_onnx() == R"({"a,b":{"0":"a_b_dim_0"}})");  // JSON carries any input name; labels are identifiers
  }
  SECTION("depth limits agree: what to_json writes, value_from_json and the record reader read") {
    const auto nest = [](int n) {
      value v = t({2});
      for (int i = 0; i < n; ++i) v = value::tuple({v});
      return v;
    };
    const value deepest = nest(61);  // 2 levels a tuple, 2 the tensor: 124 <= 125
    const std::string text = hookscope::to_json(deepest);
    CHECK(hookscope::value_from_json(text) == deepest);
    for (const std::string& line : {R"({"function":"f","args":[)" + text + R"(],"kwargs":[]})",
                                    R"({"function":"f","args":[],"kwargs":[["x",)" + text + "]]}"}) {
      CHECK_NOTHROW(hookscope::parse_record(line));
    }
    CHECK_THROWS_AS(hookscope::to_json(nest(62)), hookscope::format_error);  // 126: it would not read back
    CHECK_THROWS_AS(hookscope::value_from_json(text.substr(0, 0) + "{\"tuple\":[" + text + "]}"),
                    hookscope::format_error);
  }
  SECTION("many keyword arguments in one call") {
    // Linear time is what makes this finish (quadratic took minutes); it is measured in tests/cli/test_cli.py's
    // large inputs and bench/, not asserted here: a unit test checks what comes out.
    value_fields kwargs, wider;
    for (int i = 0; i < 40000; ++i) kwargs.emplace_back("k" + std::to_string(i), t({1, 2}));
    for (int i = 0; i < 40000; ++i) wider.emplace_back("k" + std::to_string(i), t({1, 3 + i % 5}));  // dims vary
    shape_engine e;
    e.begin_recording();
    e.add_call(named(kwargs));
    e.add_call(named(wider));
    const auto ds = e.infer_dynamic_shapes();
    REQUIRE(ds.inputs().size() == 40000);
    CHECK(ds.inputs()[39999].name == "k39999");
    CHECK(ds.inputs()[39999].dynamic_dims.size() == 1);
    CHECK(ds.inputs()[39999].dynamic_dims[0].max == 3 + 39999 % 5);
  }
}
