// Shared labels (rule C3, docs/input_observer_rules.md): dims share a name only when some call gives both and every
// call giving both gives them equal sizes (absent is not different); every label is an identifier; summaries
// written, merged and read back name the dims as one engine fed every call does.
#include "shapes_scenarios.hpp"

#include <algorithm>
#include <map>
#include <random>
#include <set>
#include <string>
#include <vector>

using hookscope::dim_label;
using hookscope::dynamic_shapes;
using hookscope::is_dim_label;
using hookscope::parameter_list;
using shapes_test::ids;
using shapes_test::named;
using shapes_test::param;
using shapes_test::positional;
using shapes_test::t;

namespace {

const engine_options every_call{.store_n_calls = hookscope::unlimited, .keep_calls = false};

// name -> dim -> shared name (every tensor input is top-level here).
std::map<std::string, std::map<std::size_t, std::string>> names_of(const dynamic_shapes& ds) {
  std::map<std::string, std::map<std::size_t, std::string>> out;
  for (const auto& in : ds.inputs()) {
    for (const auto& d : in.dynamic_dims) out[in.name][d.dim] = d.shared_name;
  }
  return out;
}

std::string name_of(const dynamic_shapes& ds, const std::string& input, std::size_t dim) {
  for (const auto& in : ds.inputs()) {
    if (in.name != input) continue;
    for (const auto& d : in.dynamic_dims) {
      if (d.dim == dim) return d.shared_name;
    }
  }
  return "(not dynamic)";
}

bool warned(const dynamic_shapes& ds, const std::string& text) {
  return std::any_of(ds.warnings().begin(), ds.warnings().end(),
                     [&](const std::string& w) { return w.find(text) != w.npos; });
}

shape_engine through_summaries(const std::vector<call_inputs>& calls, std::vector<std::size_t> cuts,
                               const parameter_list& parameters = {}) {
  shape_engine merged(every_call);
  for (std::size_t i = 0; i + 1 < cuts.size(); ++i) {
    shape_engine part(every_call);
    if (!parameters.empty()) part.set_parameters(parameters);
    for (std::size_t c = cuts[i]; c < cuts[i + 1]; ++c) part.add_call(calls[c]);
    merged.merge(shape_engine::from_summary_json(part.to_summary_json("f")));
  }
  return merged;
}

}  // namespace

TEST_CASE("dynamic_shapes_options::dim_names") {
  SECTION("two optional inputs given in different calls, whose values match in order, differ inside a call") {
    // a: 2 (call 0), 3 (call 1); b: 2 (call 1), 3 (call 2): the same sequence, but call 1 gives a 3 and b 2.
    shape_engine e(every_call);
    e.add_call(named({{"a", t({2})}}));
    e.add_call(named({{"a", t({3})}, {"b", t({2})}}));
    e.add_call(named({{"b", t({3})}}));
    const auto ds = e.infer_dynamic_shapes({.dim_names = true});
    CHECK(name_of(ds, "a", 0) == "a_dim_0");
    CHECK(name_of(ds, "b", 0) == "b_dim_0");
  }
  SECTION("two optional inputs never given in the same call do not share a name") {
    shape_engine e(every_call);
    e.set_parameters({param("a"), param("b")});  // by position, None leaves an argument out and aligns (B1)
    e.add_call(positional({t({2}), value()}));
    e.add_call(positional({t({3}), value()}));
    e.add_call(positional({value(), t({2})}));
    e.add_call(positional({value(), t({3})}));
    const auto ds = e.infer_dynamic_shapes({.dim_names = true});
    CHECK(name_of(ds, "b", 0) == "b_dim_0");
  }
  SECTION("equal wherever both are given: shared, whatever the calls giving one only") {
    shape_engine e(every_call);
    e.add_call(named({{"a", t({2})}}));
    e.add_call(named({{"a", t({3})}, {"b", t({3})}}));
    e.add_call(named({{"b", t({7})}}));
    e.add_call(named({{"a", t({5})}, {"b", t({5})}}));
    const auto ds = e.infer_dynamic_shapes({.dim_names = true});
    CHECK(name_of(ds, "b", 0) == "a_dim_0");
  }
  SECTION("the KV cache's batch, absent at the prefill (None, left out, an empty list), is batch_size") {
    for (const int prefill : {0, 1, 2}) {
      shape_engine e(every_call);
      e.set_parameters({param("input_ids"), param("attention_mask"), param("past_key_values", value())});
      for (const std::int64_t batch : {1, 2, 3}) {
        value_fields first{{"input_ids", ids({batch, 5})}, {"attention_mask", ids({batch, 5})}};
        if (prefill == 0) first.emplace_back("past_key_values", value());
        if (prefill == 2) first.emplace_back("past_key_values", value::list({}));
        e.add_call(named(first));
        for (std::int64_t past = 5; past < 7; ++past) {
          const value kv = value::list({value::tuple({t({batch, 2, past, 4}), t({batch, 2, past, 4})})});
          e.add_call(named(
              {{"input_ids", ids({batch, 1})}, {"attention_mask", ids({batch, past + 1})}, {"past_key_values", kv}}));
        }
      }
      const auto ds = e.infer_dynamic_shapes({.dim_names = true});
      INFO("prefill " << prefill);
      CHECK(ds.to_json() == R"({"input_ids":{"0":"batch_size","1":"sequence_length"},)"
                            R"("attention_mask":{"0":"batch_size","1":"total_sequence_length"},)"
                            R"("past_key_values":[[{"0":"batch_size","2":"past_sequence_length"},)"
                            R"({"0":"batch_size","2":"past_sequence_length"}]]})");
      CHECK(ds.warnings().empty());
    }
  }
  SECTION("a well-known name refused: the note says whether the dims differ or are never given together") {
    shape_engine e(every_call);
    e.set_parameters({param("input_ids"), param("pixel_values", value())});
    e.add_call(positional({ids({1, 5}), value()}));
    e.add_call(positional({ids({2, 5}), value()}));
    e.add_call(positional({value(), t({3, 3})}));
    e.add_call(positional({value(), t({4, 3})}));
    auto ds = e.infer_dynamic_shapes({.dim_names = true});
    CHECK(name_of(ds, "pixel_values", 0) == "pixel_values_dim_0");
    CHECK(warned(ds,
                 "dimension 0 of 'pixel_values' is not named batch_size (its well-known name): no call gives it "
                 "together with dimension 0 of 'input_ids'"));
    e.add_call(positional({ids({1, 5}), t({2, 3})}));
    ds = e.infer_dynamic_shapes({.dim_names = true});
    CHECK(warned(ds, "its values differ from those of dimension 0 of 'input_ids'"));
  }
  SECTION("outputs take an input dim's name when equal in every call, not when only the sequences match") {
    shape_engine e(every_call);
    e.set_parameters({param("x"), param("a", value())});
    // x dim 0: 2, 3, 4; a dim 0 (calls 1, 2 only): 3, 4. The result's dim 0 follows x; its dim 1 (9, 3, 4) equals
    // a where a is given, but a result is in every call: only an input dim given in every call names it.
    e.add_call(named({{"x", t({2})}}), value::tuple({t({2, 9})}));
    e.add_call(named({{"x", t({3})}, {"a", t({3})}}), value::tuple({t({3, 3})}));
    e.add_call(named({{"x", t({4})}, {"a", t({4})}}), value::tuple({t({4, 4})}));
    const auto ds = e.infer_dynamic_shapes({.dim_names = true});
    REQUIRE(ds.outputs().size() == 1);
    REQUIRE(ds.outputs()[0].dynamic_dims.size() == 2);
    CHECK(ds.outputs()[0].dynamic_dims[0].shared_name == "x_dim_0");
    CHECK(ds.outputs()[0].dynamic_dims[1].shared_name != "x_dim_0");
    CHECK(name_of(ds, "a", 0) == "x_dim_0");  // equal to x wherever given
  }
}

// Absent is not different: a dim joins a name's group when some call gives it with one of the group and none gives it
// different from any of them, so two dims never given together (an image at the prefills, a cache at the decode
// steps) both share input_ids' batch.
TEST_CASE("dynamic_shapes_options::dim_names across phases") {
  SECTION("never given together, each equal to the batch wherever given: one name") {
    shape_engine e(every_call);
    e.set_parameters({param("input_ids"), param("image"), param("cache")});
    for (const std::int64_t b : {2, 3}) {
      e.add_call(positional({ids({b, 7}), t({b, 3}), value()}));
      e.add_call(positional({ids({b, 1}), value(), t({b, 5})}));
    }
    const auto ds = e.infer_dynamic_shapes({.dim_names = true});
    CHECK(ds.to_json() == R"([{"0":"batch_size","1":"sequence_length"},{"0":"batch_size"},{"0":"batch_size"}])");
  }
  SECTION("one differs inside a call: it alone gets a name of its own") {
    shape_engine e(every_call);
    e.set_parameters({param("input_ids"), param("image"), param("cache")});
    for (const std::int64_t b : {2, 3}) {
      e.add_call(positional({ids({b, 7}), t({b, 3}), value()}));
      e.add_call(positional({ids({b, 1}), value(), t({5 - b, 5})}));
    }
    const auto ds = e.infer_dynamic_shapes({.dim_names = true});
    CHECK(ds.to_json() == R"([{"0":"batch_size","1":"sequence_length"},{"0":"batch_size"},{"0":"cache_dim_0"}])");
  }
  SECTION("an image's placeholder (batch 0) is given, so it differs: the cache still shares the batch") {
    shape_engine e(engine_options{.store_n_calls = hookscope::unlimited});
    e.set_parameters({param("input_ids"), param("pixel_values", value()), param("attention_mask", value()),
                      param("past_key_values", value())});
    e.value_if_missing("pixel_values", t({0, 3, 8, 8}));
    const auto kv = [](std::int64_t b, std::int64_t past) {
      return value::list({value::tuple({t({b, 2, past, 4}), t({b, 2, past, 4})})});
    };
    for (const auto& [b, n] : {std::pair<std::int64_t, std::int64_t>{2, 10}, {3, 7}}) {
      e.add_call(
          named({{"input_ids", ids({b, n})}, {"pixel_values", t({b, 3, 8, 8})}, {"attention_mask", ids({b, n})}}));
      e.add_call(
          named({{"input_ids", ids({b, 1})}, {"attention_mask", ids({b, n + 1})}, {"past_key_values", kv(b, n)}}));
    }
    const auto ds = e.infer_dynamic_shapes({.dim_names = true});
    CHECK(ds.to_json() ==
          R"({"input_ids":{"0":"batch_size","1":"sequence_length"},"pixel_values":{"0":"pixel_values_dim_0"},)"
          R"("attention_mask":{"0":"batch_size","1":"total_sequence_length"},)"
          R"("past_key_values":[[{"0":"batch_size","2":"past_sequence_length"},)"
          R"({"0":"batch_size","2":"past_sequence_length"}]]})");
  }
}

TEST_CASE("shape_engine::remove_inputs") {
  SECTION("the removed argument's dims are forgotten; the others keep what the calls showed of them") {
    shape_engine e(every_call);
    e.set_parameters({param("x"), param("a"), param("b")});
    e.add_call(positional({t({2}), t({2}), value()}));
    e.add_call(positional({t({3}), t({3}), t({3})}));
    e.add_call(positional({t({4}), value(), t({5})}));
    auto ds = e.infer_dynamic_shapes({.dim_names = true});
    CHECK(ds.to_json() == R"([{"0":"x_dim_0"},{"0":"x_dim_0"},{"0":"b_dim_0"}])");
    CHECK(e.remove_inputs({"a"}) == 3);
    ds = e.infer_dynamic_shapes({.dim_names = true});
    CHECK(ds.to_json() == R"([{"0":"x_dim_0"},{"0":"b_dim_0"}])");
    // b moved to position 1: a summary names it as one pass does, and the pairs read back.
    const shape_engine back = shape_engine::from_summary_json(e.to_summary_json("f"));
    CHECK(back.infer_dynamic_shapes({.dim_names = true}).to_json() == ds.to_json());
    CHECK(back.to_summary_json("f") == e.to_summary_json("f"));
  }
}

TEST_CASE("dynamic_shapes_options::dim_labels") {
  SECTION("an explicit label on dims that differ inside a call: kept, with a warning; never together: no warning") {
    shape_engine e(every_call);
    e.set_parameters({param("a"), param("b")});
    e.add_call(positional({t({2}), value()}));
    e.add_call(positional({t({3}), value()}));
    e.add_call(positional({value(), t({5})}));
    e.add_call(positional({value(), t({6})}));
    const dynamic_shapes_options o{.dim_labels = {dim_label{"a", 0, "n"}, dim_label{"b", 0, "n"}}};
    auto ds = e.infer_dynamic_shapes(o);
    CHECK(ds.to_json() == R"([{"0":"n"},{"0":"n"}])");
    CHECK(!warned(ds, "the label n"));
    e.add_call(positional({t({2}), t({3})}));
    ds = e.infer_dynamic_shapes(o);
    CHECK(ds.to_json() == R"([{"0":"n"},{"0":"n"}])");
    CHECK(warned(ds,
                 "the label n is given to dimension 0 of 'a' and to dimension 0 of 'b', whose observed values "
                 "differ"));
  }
}

TEST_CASE("labels are identifiers") {
  // Names a program may give its parameters; each input's dim 0 takes values no other takes, so none is shared.
  const std::vector<std::string> hostile{
      "pixel-values", "pixel_values", "pixel.values", "a.b",           "\xc3\xa9t\xc3\xa9", "\xff\xfe", "0abc", "_",
      "class",        "x y",          "a,b:c",        "pixel_values_2"};
  shape_engine e(every_call);
  for (std::int64_t call = 0; call < 2; ++call) {
    value_fields kwargs;
    for (std::size_t i = 0; i < hostile.size(); ++i) {
      kwargs.emplace_back(hostile[i], t({static_cast<std::int64_t>(10 * i + call + 2)}));
    }
    e.add_call(named(kwargs));
  }
  for (const auto& o : {dynamic_shapes_options{.dim_names = true},
                        dynamic_shapes_options{.dim_labels = {dim_label{"class", 0, "c"}}}}) {
    const auto ds = e.infer_dynamic_shapes(o);
    std::set<std::string> labels;
    for (const auto& in : ds.inputs()) {
      REQUIRE(in.dynamic_dims.size() == 1);
      INFO(in.name << ": " << in.dynamic_dims[0].label);
      CHECK(is_dim_label(in.dynamic_dims[0].label));
      CHECK(is_dim_label(in.dynamic_dims[0].shared_name));
      labels.insert(in.dynamic_dims[0].label);
    }
    CHECK(labels.size() == hostile.size());                 // two names made alike stay apart
    CHECK(name_of(ds, "pixel_values", 0) == "batch_size");  // shared_name: always the automatic name
  }
  const auto ds = e.infer_dynamic_shapes({.dim_names = true});
  // pixel_values and pixel_values_2 are parameters' own names: the names made identifiers take the next ones.
  CHECK(name_of(ds, "pixel-values", 0) == "pixel_values_3_dim_0");
  CHECK(name_of(ds, "pixel.values", 0) == "pixel_values_4_dim_0");
  CHECK(name_of(ds, "pixel_values_2", 0) == "pixel_values_2_dim_0");
  CHECK(name_of(ds, "0abc", 0) == "_0abc_dim_0");
  CHECK(name_of(ds, "class", 0) == "class_dim_0");

  SECTION("an empty parameter name, and a well-known name that is not an identifier") {
    shape_engine f(every_call);
    f.add_call(named({{"", t({2, 5})}}));
    f.add_call(named({{"", t({3, 6})}}));
    const auto fd = f.infer_dynamic_shapes(
        {.dim_names = true, .known_dim_names = {hookscope::known_dim_name{"", 1, "total length"}}});
    CHECK(fd.to_json() == R"({"":{"0":"__dim_0","1":"total_length"}})");
  }
}

TEST_CASE("shared labels on odd values") {
  SECTION("sizes 0 and 2^62, one call, a dim equal to itself only") {
    const std::int64_t huge = std::int64_t{1} << 62;
    shape_engine e(every_call);
    e.add_call(named({{"a", t({0, huge})}, {"b", t({0, huge})}}));
    auto ds = e.infer_dynamic_shapes({.batch_dimension_for_all = true, .dim_names = true});
    CHECK(ds.to_json() == R"({"a":{"0":"a_dim_0"},"b":{"0":"a_dim_0"}})");
    e.add_call(named({{"a", t({huge, huge})}, {"b", t({0, 0})}}));
    ds = e.infer_dynamic_shapes({.dim_names = true});
    CHECK(ds.to_json() == R"({"a":{"0":"a_dim_0"},"b":{"1":"b_dim_1"}})");
  }
  SECTION("thousands of dims: the first max_label_dims tracked, the others share only when given in every call") {
    // 700 leaves of rank 2 per call (1400 dims): dim 0 is the batch everywhere, dim 1 a length per leaf; x is left
    // out of the last call, y is in every call, and z too (with x's sizes).
    const auto leaves = [](std::int64_t c) {
      std::vector<value> out;
      for (std::int64_t i = 0; i < 700; ++i) out.push_back(t({c + 1, i + c}));
      return value::list(std::move(out));
    };
    std::vector<call_inputs> calls;
    for (std::int64_t c = 0; c < 4; ++c) {
      value_fields kwargs{{"y", t({c + 1})}, {"z", leaves(c)}};
      if (c < 3) kwargs.insert(kwargs.begin(), {"x", leaves(c)});
      calls.push_back(named(kwargs));
    }
    shape_engine e(every_call);
    for (const auto& c : calls) e.add_call(c);
    const auto ds = e.infer_dynamic_shapes({.dim_names = true});
    // Tracked, by (leaf, argument, dim): leaf 0's 5 dims, 4 per leaf for leaves 1 to 254 (1021), then leaf 255's
    // x dim 0, x dim 1 and z dim 0. Untracked x dims (given in 3 calls of 4) share nothing: x.256 dim 0 is
    // x_dim_0_2, ..., x.699 dim 0 x_dim_0_445.
    CHECK(warned(ds,
                 "dynamic dims given in only some calls share no name: which dims are equal where both are given "
                 "is tracked for the 1024 first"));
    CHECK(name_of(ds, "x.0", 0) == "x_dim_0");
    CHECK(name_of(ds, "y", 0) == "x_dim_0");
    CHECK(name_of(ds, "z.0", 0) == "x_dim_0");
    CHECK(name_of(ds, "x.255", 0) == "x_dim_0");
    CHECK(name_of(ds, "x.256", 0) == "x_dim_0_2");
    CHECK(name_of(ds, "x.699", 0) == "x_dim_0_445");
    // Untracked z dims are in every call: equal sizes in call order are equal dims, shared among themselves.
    CHECK(name_of(ds, "z.699", 0) == name_of(ds, "z.698", 0));
    CHECK(name_of(ds, "z.699", 1) != name_of(ds, "z.698", 1));
    for (const auto& in : ds.inputs()) {
      for (const auto& d : in.dynamic_dims) CHECK(is_dim_label(d.label));
    }
    // Beyond the bound too, summaries of any split merge into what one pass gives.
    CHECK(through_summaries(calls, {0, 1, 4}).to_summary_json("f") == e.to_summary_json("f"));
    CHECK(through_summaries(calls, {0, 2, 2, 4}).infer_dynamic_shapes({.dim_names = true}).to_json() == ds.to_json());
  }
}

TEST_CASE("shared labels: property over random call streams") {
  // Inputs a..d, each optional (left out, None, or given), rank 2, sizes from {1, 2, 3} so that equal values often
  // happen by chance; every dim 0 forced dynamic so that constant dims are compared too.
  const std::vector<std::string> inputs{"a", "b", "c", "d"};
  std::size_t shared = 0;  // pairs of dims sharing a name, over every stream: the property is not vacuous
  for (std::uint32_t seed = 1; seed <= 60; ++seed) {
    std::mt19937 rng(seed);
    const auto pick = [&](int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); };
    const std::size_t n = static_cast<std::size_t>(pick(1, 30));
    std::vector<call_inputs> calls;
    std::vector<std::map<std::string, std::vector<std::int64_t>>> given(n);
    const int shape_kinds = pick(1, 3);
    for (std::size_t c = 0; c < n; ++c) {
      std::vector<value> args;  // by position, None for an input left out: every call aligns (B1, B4)
      for (const std::string& name : inputs) {
        if (pick(0, 2) == 0) {
          args.emplace_back();
          continue;
        }
        const std::vector<std::int64_t> shape{pick(1, shape_kinds), pick(1, 3)};
        given[c][name] = shape;
        args.push_back(t(shape));
      }
      calls.push_back(positional(args));
    }
    const auto fresh = [&] {
      shape_engine e(every_call);
      e.set_parameters({param("a"), param("b"), param("c"), param("d")});
      return e;
    };
    shape_engine one = fresh();
    for (const auto& c : calls) one.add_call(c);
    std::size_t with_tensor = 0;
    for (const auto& g : given) with_tensor += !g.empty();
    INFO("seed " << seed << ", " << n << " calls");
    if (with_tensor == 0) continue;
    const dynamic_shapes_options o{.batch_dimension_for_all = true, .dim_names = true};
    const auto ds = one.infer_dynamic_shapes(o);
    const auto names = names_of(ds);
    std::vector<std::pair<std::string, std::size_t>> dims;
    for (const auto& [input, by_dim] : names) {
      for (const auto& [dim, name] : by_dim) {
        CHECK(is_dim_label(name));
        dims.emplace_back(input, dim);
      }
    }
    // A name's dims are equal in every call giving two of them, and each is given with another of its name in some
    // call (absent is not different: two of them may never be given together).
    std::vector<bool> with_other(dims.size(), false), has_other(dims.size(), false);
    for (std::size_t i = 0; i < dims.size(); ++i) {
      for (std::size_t j = i + 1; j < dims.size(); ++j) {
        const auto& [x, dx] = dims[i];
        const auto& [y, dy] = dims[j];
        if (names.at(x).at(dx) != names.at(y).at(dy)) continue;
        has_other[i] = has_other[j] = true;
        bool together = false, equal = true;
        for (const auto& g : given) {
          if (!g.count(x) || !g.count(y)) continue;
          together = true;
          equal = equal && g.at(x)[dx] == g.at(y)[dy];
        }
        INFO(x << " dim " << dx << " and " << y << " dim " << dy << " share " << names.at(x).at(dx));
        CHECK(equal);
        if (together) with_other[i] = with_other[j] = true;
        ++shared;
      }
    }
    for (std::size_t i = 0; i < dims.size(); ++i) {
      INFO(dims[i].first << " dim " << dims[i].second << " shares " << names.at(dims[i].first).at(dims[i].second));
      CHECK(with_other[i] == has_other[i]);
    }
    // Written, split, merged and read back: the same names and the same summary.
    std::vector<std::size_t> cuts{0, n};
    for (int k = pick(0, 4); k > 0; --k) cuts.push_back(static_cast<std::size_t>(pick(0, static_cast<int>(n))));
    std::sort(cuts.begin(), cuts.end());
    const shape_engine merged = through_summaries(calls, cuts, one.parameters());
    CHECK(names_of(merged.infer_dynamic_shapes(o)) == names);
    CHECK(merged.to_summary_json("f") == one.to_summary_json("f"));
  }
  CHECK(shared > 50);
}

TEST_CASE("shape_engine::to_summary_json dim_pairs") {
  shape_engine e(every_call);
  e.add_call(named({{"a", t({2, 4})}}));
  e.add_call(named({{"a", t({3, 4})}, {"b", t({3})}}));
  e.add_call(named({{"b", t({5})}}));
  const std::string good = e.to_summary_json("f");
  // a dim 0 and b dim 0 are together in call 1 and equal there; a's dims differ in every call giving them.
  REQUIRE(good.find(R"("dim_pairs":{"dims":[[0,0,0],[0,0,1],[1,0,0]],"together":["7","7","7"],)"
                    R"("differ":["2","5","2"],"truncated":false})") != std::string::npos);

  SECTION("round trip: the same document, the same names") {
    const shape_engine back = shape_engine::from_summary_json(good);
    CHECK(back.to_summary_json("f") == good);
    CHECK(back.infer_dynamic_shapes({.dim_names = true}).to_json() ==
          e.infer_dynamic_shapes({.dim_names = true}).to_json());
    CHECK(name_of(back.infer_dynamic_shapes({.dim_names = true}), "b", 0) == "a_dim_0");
  }
  SECTION("without dim_pairs: nothing shared, and a warning says so") {
    const std::size_t at = good.find(R"(,"dim_pairs")");
    std::string text = good.substr(0, at) + "}";
    const auto ds = shape_engine::from_summary_json(text).infer_dynamic_shapes({.dim_names = true});
    CHECK(name_of(ds, "b", 0) == "b_dim_0");
    CHECK(warned(ds, "or the summary read did not say"));
    // Merged with one that has them: the dims the part without them saw are not known, so not shared either.
    for (const bool pairs_first : {true, false}) {
      shape_engine merged = shape_engine::from_summary_json(pairs_first ? good : text);
      merged.merge(shape_engine::from_summary_json(pairs_first ? text : good));
      CHECK(name_of(merged.infer_dynamic_shapes({.dim_names = true}), "b", 0) == "b_dim_0");
    }
  }
  SECTION("a damaged dim_pairs: format_error naming the JSON path") {
    const auto damaged = [&](const std::string& from, const std::string& to) {
      std::string text = good;
      const std::size_t at = text.find(from);
      REQUIRE(at != std::string::npos);
      return text.replace(at, from.size(), to);
    };
    const std::vector<std::pair<std::string, std::string>> table{
        {R"([[0,0,0],)", R"([[9,0,0],)"},           // no such argument
        {R"([[0,0,0],)", R"([[0,0,7],)"},           // no such dim
        {R"([[0,0,0],)", R"([[0,0,-1],)"},          // a negative index
        {R"([[0,0,0],)", R"([[0,0],)"},             // not a triple
        {R"([0,0,1],)", R"([0,0,0],)"},             // a dim listed twice
        {R"(["7","7","7"])", R"(["7","7"])"},       // a row missing
        {R"(["7","7","7"])", R"(["7","7","f"])"},   // a bit beyond the dims
        {R"(["7","7","7"])", R"(["7","7","x"])"},   // not hexadecimal
        {R"(["7","7","7"])", R"(["7","7","07"])"},  // too long
        {R"(["7","7","7"])", R"(["7","7","6"])"},   // not symmetric
        {R"(["2","5","2"])", R"(["6","5","2"])"},   // not symmetric either
        {R"(["2","5","2"])", R"(["3","5","2"])"},   // a dim that differs from itself
        {R"(["7","7","7"])", R"(["6","7","7"])"},   // a tracked dim no call gave
        {R"("truncated":false})", R"("truncated":0})"},
        {R"("dim_pairs":{)", R"("dim_pairs":7,"x":{)"},
    };
    for (const auto& [from, to] : table) {
      INFO(from << " -> " << to);
      const std::string text = damaged(from, to);
      CHECK_THROWS_WITH(shape_engine::from_summary_json(text), Catch::Contains("$.dim_pairs"));
    }
    // differ without together
    std::string text = good;
    text.replace(text.find(R"("together":["7","7","7"])"), 24, R"("together":["3","3","4"])");
    CHECK_THROWS_WITH(shape_engine::from_summary_json(text), Catch::Contains("differ but are never together"));
  }
}
