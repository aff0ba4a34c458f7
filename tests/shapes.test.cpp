// Tests of the shape engine (hookscope/shapes.hpp) against docs/input_observer_rules.md, rule by rule: recording
// calls and inferring their dynamic shapes (infer_arguments and remove_inputs: shapes_arguments.test.cpp, the
// exporters: shapes_exporters.test.cpp, value_if_missing and its placeholders: shapes_placeholders.test.cpp). Every expected text below was worked out by hand from the rules; the
// comments give the reasoning where it is not obvious.
#include "hookscope/shapes.hpp"

#include <catch2/catch.hpp>

#include "shapes_scenarios.hpp"

#include <cstdint>
#include <string>
#include <vector>

using namespace shapes_test;

TEST_CASE("input_key") {
  CHECK(hookscope::input_key::parse("2").is_position());
  CHECK(hookscope::input_key::parse("2").position() == 2);
  CHECK(hookscope::input_key::parse("input_ids").name() == "input_ids");
  CHECK(hookscope::input_key::parse("2a").name() == "2a");
  CHECK(hookscope::input_key(3).to_string() == "3");
  CHECK_THROWS_AS(hookscope::input_key(-1), hookscope::inference_error);
}

TEST_CASE("shape_engine::add_call") {
  SECTION("store_n_calls per recording, and begin_recording adds as many again (A1)") {
    shape_engine e(engine_options{.store_n_calls = 2});
    e.begin_recording();
    CHECK(e.add_call(positional({t({1})})));
    CHECK(e.add_call(positional({t({2})})));
    CHECK_FALSE(e.add_call(positional({t({3})})));
    CHECK(e.num_obs() == 2);
    e.begin_recording();
    CHECK(e.add_call(positional({t({4})})));
    CHECK(e.add_call(positional({t({5})})));
    CHECK_FALSE(e.add_call(positional({t({6})})));
    CHECK(e.num_obs() == 4);
    // The ignored calls (3 and 6) are not in the summaries: dim 0 took 1, 2, 4, 5.
    auto ds = e.infer_dynamic_shapes();
    CHECK(ds.inputs()[0].min_shape == std::vector<std::int64_t>{1});
    CHECK(ds.inputs()[0].max_shape == std::vector<std::int64_t>{5});
  }
  SECTION("unlimited") {
    shape_engine e(engine_options{.store_n_calls = hookscope::unlimited});
    e.begin_recording();
    for (int i = 0; i < 10; ++i) CHECK(e.add_call(positional({t({i + 1})})));
    e.begin_recording();  // saturates instead of overflowing
    CHECK(e.add_call(positional({t({11})})));
    CHECK(e.num_obs() == 11);
  }
  SECTION("the best candidate is the first call with the most leaves, None included (A6, A7)") {
    shape_engine e;
    e.set_parameters({param("a"), param("b"), param("c")});
    e.add_call(positional({t({1}), value()}));           // 2 leaves
    e.add_call(positional({t({2}), value(), value()}));  // 3 leaves: the best
    e.add_call(positional({t({3}), t({3}), t({3})}));    // 3 leaves, not strictly more
    CHECK(e.info().best_candidate == 1);
    CHECK(e.info().calls[1].leaf_count == 3);
  }
  SECTION("keyword arguments in signature order, then the others in call order (A5)") {
    shape_engine e;
    e.set_parameters({param("a"), param("b"), param("kwargs", parameter_kind::var_keyword)});
    e.add_call(named({{"z", t({1})}, {"b", t({1})}, {"y", t({1})}, {"a", t({1})}}));
    const auto info = e.info();
    const auto& kw = info.calls[0].inputs.kwargs;
    REQUIRE(kw.size() == 4);
    CHECK(kw[0].first == "a");
    CHECK(kw[1].first == "b");
    CHECK(kw[2].first == "z");
    CHECK(kw[3].first == "y");
  }
  SECTION("an argument given twice is an error, not a crash") {
    shape_engine e;
    e.set_parameters({param("a")});
    CHECK_THAT(error_of([&] { e.add_call({{t({1})}, {{"a", t({1})}}}); }), Contains("'a' is given twice"));
    CHECK(e.num_obs() == 0);
  }
  SECTION("calls without a signature, and arguments beyond it") {
    shape_engine e;
    e.add_call(positional({t({1, 2}), t({3})}));
    e.add_call(positional({t({1, 3}), t({4})}));
    // No parameter names: positions are named arg<i>.
    auto ds = e.infer_dynamic_shapes({.dim_names = true});
    CHECK(ds.to_json() == R"([{"1":"arg0_dim_1"},{"0":"arg1_dim_0"}])");
    CHECK(ds.inputs()[1].name == "arg1");
  }
}

TEST_CASE("shape_engine::infer_dynamic_shapes") {
  SECTION("LLM prefill and decode with a DynamicCache") {
    auto e = llm();
    // Best candidate: call 1 (4 leaves). input_ids dim 1 took 7,1,1; attention_mask dim 1 7,8,9; cache dim 2 7,8.
    auto ds = e.infer_dynamic_shapes();
    CHECK(ds.to_json() == R"({"input_ids":{"1":"DYNAMIC"},"attention_mask":{"1":"DYNAMIC"},)"
                          R"("past_key_values":[{"2":"DYNAMIC"},{"2":"DYNAMIC"}]})");
    REQUIRE(ds.inputs().size() == 4);
    CHECK(ds.inputs()[2].name == "past_key_values.key_0");
    CHECK(ds.inputs()[2].path == std::vector<std::string>{"past_key_values", "key_0"});
    CHECK(ds.inputs()[2].dtype == dtype::float16);
    CHECK(ds.inputs()[0].dtype == dtype::int64);
    CHECK(ds.warnings().empty());
  }
  SECTION("batch forcing by name") {
    auto ds = llm().infer_dynamic_shapes({.batch_dimension_for = {"input_ids", "attention_mask"}});
    CHECK(ds.to_json() ==
          R"({"input_ids":{"0":"DYNAMIC","1":"DYNAMIC"},"attention_mask":{"0":"DYNAMIC","1":"DYNAMIC"},)"
          R"("past_key_values":[{"2":"DYNAMIC"},{"2":"DYNAMIC"}]})");
    const auto& d0 = ds.inputs()[0].dynamic_dims[0];
    CHECK(d0.forced);
    CHECK(d0.min == 1);
    CHECK(d0.max == 1);
    // Both forced batch dims were only seen as 1: one warning each (C5).
    REQUIRE(ds.warnings().size() == 2);
    CHECK_THAT(ds.warnings()[0], Contains("dimension 0 of 'input_ids'") && Contains("only seen as 1"));
    CHECK_THAT(ds.warnings()[1], Contains("dimension 0 of 'attention_mask'"));
  }
  SECTION("batch forcing reaches every leaf of a nested argument") {
    auto ds = llm().infer_dynamic_shapes({.batch_dimension_for = {"past_key_values"}});
    CHECK(ds.to_json() == R"({"input_ids":{"1":"DYNAMIC"},"attention_mask":{"1":"DYNAMIC"},)"
                          R"("past_key_values":[{"0":"DYNAMIC","2":"DYNAMIC"},{"0":"DYNAMIC","2":"DYNAMIC"}]})");
  }
  SECTION("batch forcing by position, by name of a positional argument, for all") {
    CHECK(two_positional().infer_dynamic_shapes({.batch_dimension_for = {"1"}}).to_json() ==
          R"([{"1":"DYNAMIC"},{"0":"DYNAMIC","1":"DYNAMIC"}])");
    CHECK(two_positional().infer_dynamic_shapes({.batch_dimension_for = {"y"}}).to_json() ==
          R"([{"1":"DYNAMIC"},{"0":"DYNAMIC","1":"DYNAMIC"}])");
    CHECK(two_positional().infer_dynamic_shapes({.batch_dimension_for_all = true}).to_json() ==
          R"([{"0":"DYNAMIC","1":"DYNAMIC"},{"0":"DYNAMIC","1":"DYNAMIC"}])");
    CHECK(two_positional().infer_dynamic_shapes({.batch_dimension_for = {"nothing", "7"}}).to_json() ==
          R"([{"1":"DYNAMIC"},{"1":"DYNAMIC"}])");
  }
  SECTION("a position also matches a parameter given by name (C++ records every parameter by name)") {
    auto ds = llm().infer_dynamic_shapes({.batch_dimension_for = {"1"}});  // attention_mask
    CHECK(ds.to_json() == R"({"input_ids":{"1":"DYNAMIC"},"attention_mask":{"0":"DYNAMIC","1":"DYNAMIC"},)"
                          R"("past_key_values":[{"2":"DYNAMIC"},{"2":"DYNAMIC"}]})");
  }
  SECTION("automatic labels: well-known names, shared by identical sequences") {
    auto ds = llm().infer_dynamic_shapes({.batch_dimension_for = {"input_ids", "attention_mask"}, .dim_names = true});
    CHECK(ds.to_json() == R"({"input_ids":{"0":"batch_size","1":"sequence_length"},)"
                          R"("attention_mask":{"0":"batch_size","1":"total_sequence_length"},)"
                          R"("past_key_values":[{"2":"past_sequence_length"},{"2":"past_sequence_length"}]})");
    // x dim 1 and y dim 1 both took 6, 7, 8: y shares x's name (C3's example).
    CHECK(two_positional().infer_dynamic_shapes({.dim_names = true}).to_json() ==
          R"([{"1":"x_dim_1"},{"1":"x_dim_1"}])");
    // Forced batches: x dim 0 took 2,2,2 and y dim 0 3,3,3: different sequences, different names.
    CHECK(two_positional().infer_dynamic_shapes({.batch_dimension_for_all = true, .dim_names = true}).to_json() ==
          R"([{"0":"x_dim_0","1":"x_dim_1"},{"0":"y_dim_0","1":"x_dim_1"}])");
  }
  SECTION("shared_name is always computed; labels stay DYNAMIC by default") {
    auto ds = two_positional().infer_dynamic_shapes();
    CHECK(ds.inputs()[0].dynamic_dims[0].label == "DYNAMIC");
    CHECK(ds.inputs()[0].dynamic_dims[0].shared_name == "x_dim_1");
    CHECK(ds.inputs()[1].dynamic_dims[0].shared_name == "x_dim_1");
    auto llm_ds = llm().infer_dynamic_shapes({.batch_dimension_for = {"input_ids", "attention_mask"}});
    CHECK(llm_ds.inputs()[0].dynamic_dims[0].shared_name == "batch_size");
    CHECK(llm_ds.inputs()[1].dynamic_dims[0].shared_name == "batch_size");
  }
  SECTION("well-known names come from dynamic_shapes_options::known_dim_names") {
    using hookscope::known_dim_name;
    dynamic_shapes_options o{.batch_dimension_for = {"input_ids", "attention_mask"}, .dim_names = true};
    REQUIRE(o.known_dim_names.size() == hookscope::default_known_dim_names().size());
    // A custom table replaces the default one: input_ids dim 0 is "b", and attention_mask dim 0 (1, 1, 1 like it)
    // shares it; the dims the table does not name are named after their input.
    o.known_dim_names = {known_dim_name{"input_ids", 0, "b"}, known_dim_name{"attention_mask", 1, "kv_len"}};
    CHECK(llm().infer_dynamic_shapes(o).to_json() ==
          R"({"input_ids":{"0":"b","1":"input_ids_dim_1"},"attention_mask":{"0":"b","1":"kv_len"},)"
          R"("past_key_values":[{"2":"past_key_values_dim_2"},{"2":"past_key_values_dim_2"}]})");
    // An empty table: no well-known name at all, for the labels and for shared_name.
    o.known_dim_names.clear();
    CHECK(llm().infer_dynamic_shapes(o).to_json() ==
          R"({"input_ids":{"0":"input_ids_dim_0","1":"input_ids_dim_1"},)"
          R"("attention_mask":{"0":"input_ids_dim_0","1":"attention_mask_dim_1"},)"
          R"("past_key_values":[{"2":"past_key_values_dim_2"},{"2":"past_key_values_dim_2"}]})");
    o.dim_names = false;
    CHECK(llm().infer_dynamic_shapes(o).inputs()[0].dynamic_dims[0].shared_name == "input_ids_dim_0");
    // A positional argument without a parameter is known by its label name, arg<i>.
    shape_engine e;
    e.add_call(positional({t({1, 2})}));
    e.add_call(positional({t({1, 3})}));
    CHECK(
        e.infer_dynamic_shapes({.dim_names = true, .known_dim_names = {known_dim_name{"arg0", 1, "seq"}}}).to_json() ==
        R"([{"1":"seq"}])");
  }
  SECTION("explicit labels, with the fallback <input>_dim_<d>") {
    using hookscope::dim_label;
    CHECK(two_positional().infer_dynamic_shapes({.dim_labels = {dim_label{0, 1, "seq"}}}).to_json() ==
          R"([{"1":"seq"},{"1":"y_dim_1"}])");
    CHECK(two_positional().infer_dynamic_shapes({.dim_labels = {dim_label{"x", 1, "seq"}}}).to_json() ==
          R"([{"1":"seq"},{"1":"y_dim_1"}])");
    // The entries by position win over those by name: x's dim 1 is only named through "x", so it falls back.
    CHECK(two_positional()
              .infer_dynamic_shapes({.dim_labels = {dim_label{0, 0, "a"}, dim_label{"x", 1, "b"}}})
              .to_json() == R"([{"1":"x_dim_1"},{"1":"y_dim_1"}])");
    // With dim_names too, the dims without an explicit label get the automatic one.
    CHECK(two_positional().infer_dynamic_shapes({.dim_names = true, .dim_labels = {dim_label{1, 1, "n"}}}).to_json() ==
          R"([{"1":"x_dim_1"},{"1":"n"}])");
  }
  SECTION("explicit labels that name no dimension: a warning each, the automatic names kept") {
    using hookscope::dim_label;
    const auto warnings_of = [](const std::vector<dim_label>& labels) {
      const hookscope::dynamic_shapes ds = two_positional().infer_dynamic_shapes({.dim_labels = labels});
      std::vector<std::string> texts;
      for (const auto& w : ds.warnings()) texts.push_back(w.text());
      return texts;
    };
    const std::vector<std::string> past_rank = {
        "hookscope: the label 'w' names no dimension: dimension 7 of 'x' is static, or past the rank, in every call: "
        "it changes nothing"};
    CHECK(warnings_of({dim_label{"x", 7, "w"}}) == past_rank);
    CHECK(warnings_of({dim_label{"x", 0, "w"}}).size() == 1);  // dim 0 is static
    CHECK(warnings_of({dim_label{5, 1, "w"}}).size() == 1);    // no position 5
    CHECK(warnings_of({dim_label{"x", 1, "a"}, dim_label{"x", 1, "b"}}) ==
          std::vector<std::string>{
              "hookscope: dimension 1 of 'x' is given the label 'a' and then 'b': the first is kept"});
    CHECK(warnings_of({dim_label{"x", 1, "a"}, dim_label{"x", 1, "a"}}).empty());
    CHECK(warnings_of({dim_label{"x", 1, "a"}, dim_label{1, 1, "b"}}).empty());
    // By position first: x's entry by name is then not taken, and the sentence says it may be why.
    const auto shadowed = warnings_of({dim_label{0, 0, "a"}, dim_label{"x", 1, "b"}});
    REQUIRE(shadowed.size() == 2);
    CHECK_THAT(shadowed[1], Catch::Contains("dimension 1 of 'x'") &&
                                Catch::Contains("(or the argument's entries by position win over those by name)"));
  }
  SECTION("min, max and opt (most frequent, smallest on a tie)") {
    shape_engine e(engine_options{.store_n_calls = hookscope::unlimited});
    for (std::int64_t n : {4, 2, 4, 8, 2}) e.add_call(positional({t({n, 3})}));
    const auto ds = e.infer_dynamic_shapes();
    const auto& d = ds.inputs()[0].dynamic_dims.at(0);
    CHECK(d.min == 2);
    CHECK(d.max == 8);
    CHECK(d.opt == 2);  // 2 and 4 twice each
    CHECK(ds.inputs()[0].opt_shape == std::vector<std::int64_t>{2, 3});
    CHECK(ds.inputs()[0].shapes_seen == std::vector<std::vector<std::int64_t>>{{4, 3}, {2, 3}, {8, 3}});
  }
  SECTION("extra positional arguments align as the keywords of the best candidate (B3)") {
    shape_engine e;
    e.set_parameters({param("x"), param("y")});
    e.add_call({{t({1, 2})}, {{"y", t({1, 2})}}});   // the best: first with 2 leaves
    e.add_call(positional({t({1, 3}), t({1, 4})}));  // y by position here
    CHECK(e.infer_dynamic_shapes().to_json() == R"({"x":{"1":"DYNAMIC"},"y":{"1":"DYNAMIC"}})");
    CHECK(e.infer_arguments().arguments == value::dict({{"x", t({1, 2})}, {"y", t({1, 2})}}));
  }
  SECTION("list and tuple items are named by index") {
    auto ds = vision(true).infer_dynamic_shapes();
    CHECK(ds.inputs()[3].name == "past_key_values.0.0");
    CHECK(ds.inputs()[4].name == "past_key_values.0.1");
  }
  SECTION("0/1 warnings: a value_if_missing placeholder of size 0 next to a real 1") {
    auto ds = vision(true).infer_dynamic_shapes();
    REQUIRE(ds.warnings().size() == 1);
    CHECK_THAT(ds.warnings()[0], Contains("dimension 0 of 'pixel_values'") && Contains("only seen as 0 and 1"));
    CHECK(ds.inputs()[1].dynamic_dims[0].opt == 0);
  }
  SECTION("*args grouped under its name, extra keywords nested under the **kwargs name") {
    shape_engine e;
    e.set_parameters({param("x"), param("args", parameter_kind::var_positional), param("y", value()),
                      param("kwargs", parameter_kind::var_keyword)});
    e.add_call({{t({2, 3}), t({4})}, {{"y", t({5, 1})}, {"z", t({6})}}});
    e.add_call({{t({2, 4}), t({5})}, {{"z", t({7})}, {"y", t({5, 2})}}});
    auto ds = e.infer_dynamic_shapes();
    CHECK(ds.to_json() ==
          R"({"x":{"1":"DYNAMIC"},"args":[{"0":"DYNAMIC"}],"y":{"1":"DYNAMIC"},"kwargs":{"z":{"0":"DYNAMIC"}}})");
    CHECK(ds.inputs()[1].name == "args.0");
    CHECK(ds.inputs()[3].name == "z");
  }
  SECTION("nested dicts, lists and custom classes; non-tensors are null") {
    shape_engine e;
    e.set_parameters({param("inputs"), param("cache")});
    for (std::int64_t n : {1, 2}) {
      value inputs = value::dict({{"a", t({2, n + 2})}, {"b", value::list({t({4, n}), t({4, n})})}, {"c", value()}});
      e.add_call(named(
          {{"inputs", inputs}, {"cache", value::structure("Cache", {{"k", t({1, n + 2})}, {"v", t({1, n + 2})}})}}));
    }
    auto ds = e.infer_dynamic_shapes();
    CHECK(ds.to_json() == R"({"inputs":{"a":{"1":"DYNAMIC"},"b":[{"1":"DYNAMIC"},{"1":"DYNAMIC"}],"c":null},)"
                          R"("cache":[{"1":"DYNAMIC"},{"1":"DYNAMIC"}]})");
    std::vector<std::string> names;
    for (const auto& in : ds.inputs()) names.push_back(in.name);
    CHECK(names == std::vector<std::string>{"inputs.a", "inputs.b.0", "inputs.b.1", "cache.k", "cache.v"});
    // The root mirrors it: inputs is a dict node, cache a list node (a custom class), c a null node.
    using kind = hookscope::dynamic_shapes::node::kind;
    CHECK(ds.root().type == kind::dict);
    CHECK(ds.root().children[0].second.type == kind::dict);
    CHECK(ds.root().children[0].second.children[2].second.type == kind::null);
    CHECK(ds.root().children[1].second.type == kind::list);
  }
  SECTION("constants: equal values give null entries; values equal to the default are dropped") {
    shape_engine e;
    e.set_parameters({param("x"), param("use_cache", value(true)), param("temperature", value(1.0)),
                      param("mode", value("a")), param("n", parameter_kind::positional_or_keyword)});
    // temperature 1 == 1.0 and mode "a" equal their defaults; n has no scalar default: all dropped.
    e.add_call(named({{"x", t({1, 2})}, {"use_cache", false}, {"temperature", 1}, {"mode", "a"}, {"n", 3}}));
    e.add_call(named({{"x", t({1, 3})}, {"use_cache", false}}));
    CHECK(e.infer_dynamic_shapes().to_json() == R"({"x":{"1":"DYNAMIC"},"use_cache":null})");
    CHECK(e.info().calls[0].constants == value_fields{{"use_cache", false}});
    CHECK(e.infer_arguments().arguments == value::dict({{"x", t({1, 2})}, {"use_cache", false}}));

    shape_engine d;
    d.set_parameters({param("x"), param("use_cache", value(true))});
    d.add_call(named({{"x", t({1, 2})}, {"use_cache", 1}}));  // 1 == True: dropped
    d.add_call(named({{"x", t({1, 3})}, {"use_cache", true}}));
    CHECK(d.infer_dynamic_shapes().to_json() == R"({"x":{"1":"DYNAMIC"}})");
  }
  SECTION("a rank-0 tensor is static and written {}") {
    shape_engine e;
    e.add_call(positional({t({}), t({2})}));
    e.add_call(positional({t({}), t({3})}));
    auto ds = e.infer_dynamic_shapes();
    CHECK(ds.to_json() == R"([{},{"0":"DYNAMIC"}])");
    CHECK(ds.inputs()[0].rank == 0);
  }
  SECTION("a slot no call gives a tensor for is null (the reference fails there)") {
    shape_engine e;
    e.set_parameters({param("x"), param("flag")});
    e.add_call(positional({t({2}), value(3)}));
    e.add_call(positional({t({3}), value(4)}));
    CHECK(e.infer_dynamic_shapes().to_json() == R"([{"0":"DYNAMIC"},null])");
  }
  SECTION("shapes_seen is bounded") {
    shape_engine e(engine_options{.store_n_calls = hookscope::unlimited});
    for (std::int64_t n = 1; n <= 20; ++n) e.add_call(positional({t({n})}));
    auto ds = e.infer_dynamic_shapes();
    CHECK(ds.inputs()[0].shapes_seen.size() == 16);
    CHECK(ds.inputs()[0].shapes_seen_truncated);
    CHECK(ds.inputs()[0].dynamic_dims[0].max == 20);
    CHECK_THAT(ds.warnings().back(), Contains("more than 16 distinct shapes"));
  }
}

TEST_CASE("shape_engine::set_parameters") {
  shape_engine e;
  e.set_parameters({param("x"), param("y")});
  SECTION("the same parameters again: nothing changes") {
    e.set_parameters({param("x"), param("y")});
    e.add_call(named({{"x", t({2})}, {"y", t({3})}}));
    e.set_parameters({param("x"), param("y")});
    CHECK(e.info().calls.size() == 1);
  }
  SECTION("other parameters: refused, naming the ones set and the function called") {
    CHECK(error_of([&] { e.set_parameters({param("x")}); }) ==
          "hookscope: set_parameters: the parameters are already set to (x, y) and cannot change");
  }
  SECTION("after calls were added: refused") {
    shape_engine late;
    late.add_call(named({{"x", t({2})}}));
    CHECK(error_of([&] { late.set_parameters({param("x")}); }) ==
          "hookscope: set_parameters: set the parameters before adding calls");
  }
}

TEST_CASE("shape_engine errors") {
  SECTION("nothing recorded") {
    shape_engine e;
    CHECK_THAT(error_of([&] { (void)e.infer_dynamic_shapes(); }), Contains("no call was recorded"));
    CHECK_THAT(error_of([&] { (void)e.infer_arguments().arguments; }), Contains("no call was recorded"));
    CHECK(e.info().calls.empty());
  }
  SECTION("different ranks (C1)") {
    shape_engine e;
    e.set_parameters({param("x")});
    e.add_call(named({{"x", t({2, 3})}}));
    e.add_call(named({{"x", t({2, 3, 4})}}));
    CHECK_THAT(error_of([&] { (void)e.infer_dynamic_shapes(); }),
               Contains("'x'") && Contains("same rank") && Contains("2x3x4") && Contains("2x3,"));
  }
  SECTION("a named argument missing from the best candidate (B1)") {
    auto e = vision(false);  // pixel_values only at prefill, no value_if_missing
    CHECK_THAT(error_of([&] { (void)e.infer_dynamic_shapes(); }),
               Contains("must contain all the named arguments") && Contains("call 0 names 'pixel_values'") &&
                   Contains("input_ids, attention_mask, past_key_values"));
  }
  SECTION("different constants (B2)") {
    shape_engine e;
    e.set_parameters({param("x"), param("use_cache", value(true))});
    e.add_call(named({{"x", t({1, 2})}, {"use_cache", false}}));
    e.add_call(named({{"x", t({1, 3})}}));
    e.add_call(named({{"x", t({1, 4})}, {"use_cache", true}}));
    CHECK(error_of([&] { (void)e.infer_dynamic_shapes(); }) ==
          "hookscope: two calls were made with different constant values, {} (call 1) != {use_cache: false} "
          "(best candidate, call 0)");
  }
  SECTION("different leaf counts (B4)") {
    shape_engine e;
    e.set_parameters({param("x"), param("cache")});
    e.add_call(named({{"x", t({1})}, {"cache", value::list({t({1}), t({1})})}}));
    e.add_call(named({{"x", t({2})}, {"cache", value::list({t({1}), t({1}), t({1})})}}));
    CHECK(error_of([&] { (void)e.infer_dynamic_shapes(); }) ==
          "hookscope: named argument 'cache' has 3 flattened leaves in call 1 but previously got 2; inference is "
          "impossible in that case");
    shape_engine p;
    p.add_call(positional({value::tuple({t({1}), t({1})})}));
    p.add_call(positional({value::tuple({t({1})})}));
    CHECK_THAT(error_of([&] { (void)p.infer_dynamic_shapes(); }),
               Contains("positional argument 0 ('arg0') has 1 flattened leaves in call 1 but previously got 2"));
  }
  SECTION("a best candidate leaving out what other calls give takes their structure there (B5)") {
    // The reference cannot align these (NotImplementedError): the best candidate's None for mask is 1 leaf where
    // the call giving mask gives 2. The slot takes the structure of the call giving it; the best gets placeholders.
    shape_engine e;
    e.set_parameters({param("x"), param("mask"), param("z")});
    e.add_call(positional({t({1, 2}), value(), t({5})}));                      // 3 leaves: the best
    e.add_call(positional({t({1, 3}), value::list({t({1, 3}), t({1, 3})})}));  // 3 leaves, mask has 2
    CHECK(e.infer_dynamic_shapes().inputs().size() == 4);
    argument_options o;
    o.candidate = std::size_t{0};
    o.as_args_kwargs = true;
    CHECK(hookscope::to_json(e.infer_arguments(o).arguments) ==
          R"({"tuple":[{"tuple":[{"shape":[1,2],"dtype":"float32"},{"list":[{"shape":[1,3],"dtype":"float32"},)"
          R"({"shape":[1,3],"dtype":"float32"}]},{"shape":[5],"dtype":"float32"}]},{"dict":[]}]})");
    // The same with the empty cache a prefill gives, as a keyword, when the prefill has the most leaves.
    shape_engine k;
    k.set_parameters({param("x"), param("image", value()), param("cache", value())});
    k.add_call(named({{"x", t({2, 5})},
                      {"image", value::list({t({2, 4}), t({2, 4}), t({2, 4})})},
                      {"cache", value::structure("Cache", {})}}));
    k.add_call(named({{"x", t({2, 1})}, {"cache", value::structure("Cache", {{"k", t({2, 5})}, {"v", t({2, 5})}})}}));
    k.add_call(named({{"x", t({2, 1})}, {"cache", value::structure("Cache", {{"k", t({2, 6})}, {"v", t({2, 6})}})}}));
    CHECK(k.infer_dynamic_shapes().inputs().size() == 6);
  }
  SECTION("a keyword named like the **kwargs parameter") {
    shape_engine e;
    e.set_parameters({param("x"), param("kwargs", parameter_kind::var_keyword)});
    e.add_call(named({{"x", t({1})}, {"kwargs", t({1})}, {"z", t({1})}}));
    CHECK_THAT(error_of([&] { (void)e.infer_dynamic_shapes(); }), Contains("name collision") && Contains("**kwargs"));
  }
  SECTION("a signature that changes") {
    shape_engine e;
    e.set_parameters({param("x")});
    e.set_parameters({param("x")});  // the same again is fine
    CHECK_THAT(error_of([&] { e.set_parameters({param("y")}); }), Contains("cannot change"));
  }
}

TEST_CASE("shape_engine inference leaves the engine as it was") {
  auto e = llm();
  CHECK(e.remove_inputs({"use_cache"}) == 0);  // forgets what recording derived from the signature
  const shape_engine& c = e;
  const std::string json = c.infer_dynamic_shapes().to_json();
  const value args = c.infer_arguments().arguments;
  // New inputs with more positional arguments than any call gave: nothing is created for them.
  argument_options o;
  o.candidate = call_inputs{{ids({1, 3}), ids({1, 3}), value(), value(), ids({2})}, {}};
  (void)error_of([&] { (void)c.infer_arguments(o).arguments; });
  const auto before = c.info();
  CHECK(c.infer_dynamic_shapes().to_json() == json);
  CHECK(c.infer_arguments().arguments == args);
  const auto after = c.info();
  REQUIRE(after.calls.size() == before.calls.size());
  for (std::size_t i = 0; i < after.calls.size(); ++i) CHECK(after.calls[i].aligned == before.calls[i].aligned);
}

TEST_CASE("shape_engine::info") {
  const auto info = llm().info();
  REQUIRE(info.calls.size() == 3);
  CHECK(info.best_candidate == 1);
  CHECK(info.parameters.size() == 4);
  CHECK(info.calls[0].inputs.kwargs.size() == 2);  // None and use_cache=True dropped
  CHECK(info.calls[0].aligned == std::vector<value>{ids({1, 7}), ids({1, 7}), value(), value()});
  CHECK(info.calls[2].inputs.kwargs[0].first == "input_ids");  // signature order
  const auto streamed = llm(engine_options{.keep_calls = false}).info();
  REQUIRE(streamed.calls.size() == 1);
  CHECK(streamed.best_candidate == 0);
  CHECK(streamed.calls[0].leaf_count == 4);
}

TEST_CASE("shape_engine keep_calls=false gives the same results") {
  const auto same = [](const std::function<shape_engine(engine_options)>& make) {
    for (const dynamic_shapes_options& o :
         {dynamic_shapes_options{}, dynamic_shapes_options{.batch_dimension_for_all = true, .dim_names = true}}) {
      const auto kept = make({}).infer_dynamic_shapes(o);
      const auto streamed = make({.keep_calls = false}).infer_dynamic_shapes(o);
      CHECK(kept.to_json() == streamed.to_json());
      CHECK(kept.report() == streamed.report());
      CHECK(kept.to_trtexec() == streamed.to_trtexec());
    }
    CHECK(make({}).infer_arguments().arguments == make({.keep_calls = false}).infer_arguments().arguments);
    CHECK(make({}).num_obs() == make({.keep_calls = false}).num_obs());
  };
  same([](engine_options o) { return llm(o); });
  same([](engine_options o) { return vision(true, o); });
  // Many calls, streamed: summaries only.
  shape_engine e(engine_options{.store_n_calls = hookscope::unlimited, .keep_calls = false});
  for (std::int64_t n = 0; n < 1000; ++n) e.add_call(named({{"x", t({2, n % 10 + 1})}}));
  const auto ds = e.infer_dynamic_shapes();
  CHECK(ds.inputs()[0].dynamic_dims[0].min == 1);
  CHECK(ds.inputs()[0].dynamic_dims[0].max == 10);
  CHECK(ds.inputs()[0].dynamic_dims[0].opt == 1);  // every value 100 times
  CHECK(e.info().calls.size() == 1);
}

TEST_CASE("shape_engine odd inputs") {
  // Every entry point on unusual calls: the only failure allowed is an inference_error.
  const std::vector<std::vector<call_inputs>> recordings = {
      {call_inputs{}},
      {call_inputs{}, positional({value()})},
      {positional({value(), value(0), value(""), value::list({}), value::dict({})})},
      {positional({value::structure("Empty", {})}), positional({value::structure("Cache", {{"k", t({1})}})})},
      {named({{"a", value()}}), named({{"b", value::tuple({})}})},
      {positional({t({1}), t({2})}), positional({t({1, 2})})},
      {positional({value::list({value::list({value::list({t({3})})})})}), positional({value::list({})})},
      {named({{"kwargs", t({1})}}), named({{"kwargs", t({2})}, {"other", t({3})}})},
      {positional({value::variant(0, t({1})), value::opaque("h*"), value::bytes({})}),
       positional({value::variant(1, value::tuple({t({2}), t({2})})), value::opaque("h*", true), value()})},
      {positional({value::variant(7, value())}), positional({value::list({value::opaque("m"), t({0})})})},
  };
  for (bool keep : {true, false}) {
    for (const auto& calls : recordings) {
      shape_engine e(engine_options{.store_n_calls = hookscope::unlimited, .keep_calls = keep});
      e.set_parameters(
          {param("a"), param("args", parameter_kind::var_positional), param("kwargs", parameter_kind::var_keyword)});
      e.value_if_missing("pixel_values", t({0, 3}));
      for (const auto& c : calls) {
        try {
          e.add_call(c);
        } catch (const hookscope::inference_error&) {
        }
      }
      const auto tolerate = [](const std::function<void()>& f) {
        try {
          f();
        } catch (const hookscope::inference_error&) {
        }
      };
      tolerate([&] {
        const auto ds = e.infer_dynamic_shapes({.batch_dimension_for_all = true, .dim_names = true});
        (void)ds.to_json();
        (void)ds.to_trtexec();
        (void)ds.to_ort_options();
        (void)ds.report();
      });
      tolerate([&] { (void)e.infer_arguments().arguments; });
      tolerate([&] {
        argument_options o;
        o.as_args_kwargs = true;
        (void)e.infer_arguments(o).arguments;
      });
      (void)e.info();
      tolerate([&] { (void)e.remove_inputs({"a", "0", "nothing"}); });
      tolerate([&] { (void)e.infer_dynamic_shapes(); });
    }
  }
  SUCCEED("no crash");
}

TEST_CASE("shape_engine with the kinds of C++ captures: variant, opaque, bytes") {
  SECTION("a variant's tensor is dynamic as any container's; Python's structure is the alternative's") {
    shape_engine e;
    e.set_parameters({param("x"), param("h")});
    for (std::int64_t n : {1, 2, 5}) e.add_call(positional({value::variant(0, t({n, 3})), value::opaque("handle*")}));
    const auto ds = e.infer_dynamic_shapes();
    CHECK(ds.to_json() == R"([{"0":"DYNAMIC"},null])");  // the opaque handle is a constant: no tensor, null
    REQUIRE(ds.inputs().size() == 1);
    CHECK(ds.inputs()[0].name == "x.0");  // the path step of alternative 0
  }
  SECTION("bytes and opaque leaves are constants, kept in the representative arguments") {
    shape_engine e;
    e.set_parameters({param("x"), param("b"), param("h")});
    const std::byte raw[] = {std::byte{0xff}};
    e.add_call(positional({t({1}), value::bytes(raw), value::opaque("T")}));
    e.add_call(positional({t({2}), value::bytes(raw), value::opaque("T")}));
    CHECK(e.infer_dynamic_shapes().to_json() == R"([{"0":"DYNAMIC"},null,null])");
    CHECK(e.infer_arguments().arguments == value::tuple({t({1}), value::bytes(raw), value::opaque("T")}));
  }
}
