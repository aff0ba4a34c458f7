// shape_engine::add_structure and add_call(call_structure, sizes): a call of a known structure recorded from its
// tensors' sizes alone gives exactly what add_call of the whole call gives (state, inferences, errors, call by call).
#include "hookscope/shapes.hpp"

#include "shapes_scenarios.hpp"

#include <functional>
#include <map>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

using shapes_test::t;

namespace {

using call = shapes_test::recorded_call;

// Decoder-like calls of a few structures per stream (as a model's calls are): positional or keyword ids, keywords out
// of signature order, None and scalar keywords (equal to their default, or constants), a nested cache of one or two
// layers, absent inputs, a keyword **kwargs absorbs, results (tuples, None, a scalar), and when `conflicts` a rank
// that changes (an inference error). The sizes are drawn per call.
std::vector<call> random_calls(std::mt19937& rng, std::size_t n, bool conflicts) {
  const auto pick = [&](int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); };
  const std::uint32_t stream = static_cast<std::uint32_t>(rng());
  std::vector<call> calls;
  for (std::size_t i = 0; i < n; ++i) {
    std::mt19937 kind(stream + static_cast<std::uint32_t>(pick(0, 5)));  // the call's structure
    const auto choose = [&](int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(kind); };
    const std::int64_t batch = pick(1, 3), seq = pick(0, 3) == 0 ? pick(2, 9) : 1, past = pick(1, 12);
    call c;
    const value ids =
        t(conflicts && choose(0, 3) == 0 ? std::vector<std::int64_t>{batch} : std::vector{batch, seq}, dtype::int64);
    value_fields kw;
    if (choose(0, 1)) {
      c.inputs.args.push_back(ids);
      if (choose(0, 3) == 0) c.inputs.args.push_back(t({batch, past + seq}, dtype::int64));
    } else {
      kw.emplace_back("input_ids", ids);
    }
    if (c.inputs.args.size() < 2) kw.emplace_back("attention_mask", t({batch, past + seq}, dtype::int64));
    std::vector<value> cache;
    for (int l = choose(1, 2); l > 0; --l)
      cache.push_back(value::tuple({t({batch, 2, past, 4}), t({batch, 2, past, 4})}));
    if (choose(0, 2)) kw.emplace_back("past_key_values", value::list(std::move(cache)));
    if (choose(0, 1)) kw.emplace_back("pixel_values", t({batch, 3, 8, 8}));
    if (choose(0, 4) == 0) kw.emplace_back("position_ids", value());
    const int use_cache = choose(0, 5);
    if (use_cache == 0) kw.emplace_back("use_cache", value(false));
    if (use_cache == 1) kw.emplace_back("use_cache", value(true));
    if (choose(0, 4) == 0) kw.emplace_back("extra", value::dict({{"scale", value(2.5)}, {"bias", t({seq})}}));
    std::shuffle(kw.begin(), kw.end(), kind);  // order_kwargs puts them in signature order
    c.inputs.kwargs = std::move(kw);
    const int result = choose(0, 5);
    if (result <= 2) c.result = value::tuple({t({batch, seq, 16}), t({batch, 2, past + seq, 4})});
    if (result == 3) c.result = value();
    if (result == 4) c.result = value(std::int64_t{7});
    calls.push_back(std::move(c));
  }
  return calls;
}

// The structure of a value (kinds, names, ranks, dtypes, scalars: everything but the sizes), its sizes appended.
void structure_of(const value& v, std::string& key, std::vector<std::int64_t>& sizes) {
  key += std::string(hookscope::to_string(v.type())) + "(";
  if (v.is_tensor()) {
    key += std::to_string(v.as_tensor().shape.size()) + std::string(hookscope::to_string(v.as_tensor().dtype));
    sizes.insert(sizes.end(), v.as_tensor().shape.begin(), v.as_tensor().shape.end());
  } else if (!hookscope::is_container(v)) {
    key += hookscope::to_json(v);
  } else {
    if (v.type() == value::kind::structure) key += v.struct_name();
    hookscope::for_each_child(v, [&](std::size_t i, const std::string* name, const value& child) {
      key += (name ? *name : std::to_string(i)) + ":";
      structure_of(child, key, sizes);
    });
  }
  key += ")";
}

std::string structure_of(const call& c, std::vector<std::int64_t>& sizes) {
  std::string key = "args:";
  for (const value& a : c.inputs.args) structure_of(a, key, sizes);
  key += "kwargs:";
  for (const auto& [name, v] : c.inputs.kwargs) structure_of(v, key += name + "=", sizes);
  if (c.result) structure_of(*c.result, key += "result:", sizes);
  return key;
}

// Everything the engine gives, as text: its inferences (or their errors), what it keeps, its summary when it has one.
std::string state_of(const shape_engine& e) {
  std::string out;
  const auto attempt = [&](const char* what, const std::function<std::string()>& f) {
    shapes_test::append_attempt(out, what, f);
  };
  for (const bool names : {false, true}) {
    attempt("shapes", [&] {
      const auto ds = e.infer_dynamic_shapes({.dim_names = names, .profile_phases = names});
      std::string text = ds.to_json() + ds.to_typed_json() + ds.to_onnx() + ds.to_trtexec() + ds.report();
      for (const auto& o : ds.outputs()) text += o.name + ";";
      return text;
    });
  }
  attempt("args", [&] { return hookscope::to_json(e.infer_arguments({.as_args_kwargs = true}).arguments); });
  attempt("info", [&] {
    const hookscope::engine_info info = e.info();
    std::string text = "seen " + std::to_string(info.calls_seen) + " ignored " + std::to_string(info.calls_ignored) +
                       " best " + std::to_string(info.best_candidate) + "\n";
    for (const hookscope::call_info& c : info.calls) {
      for (const value& a : c.inputs.args) text += hookscope::to_json(a) + " ";
      for (const auto& [name, v] : c.inputs.kwargs) text += name + "=" + hookscope::to_json(v) + " ";
      for (const auto& [name, v] : c.constants) text += "const " + name + "=" + hookscope::to_json(v) + " ";
      text += std::to_string(c.leaf_count) + "\n";
    }
    return text;
  });
  attempt("summary", [&] { return e.to_summary_json("forward"); });
  out += "num_obs " + std::to_string(e.num_obs()) + "\n";
  return out;
}

// Two engines given the same calls: `whole` by add_call of each call, `sized` by add_call(structure, sizes), one
// structure per distinct structure (as a record reader recognises them). Each logs every call's outcome or error.
struct two_engines {
  shape_engine whole, sized;
  std::map<std::string, hookscope::call_structure> structures{};
  std::string whole_log{}, sized_log{};

  explicit two_engines(engine_options o) : whole(o), sized(o) {}

  template <class F>
  void both(F&& f) {
    f(whole);
    f(sized);
  }

  static void logged(std::string& log, std::size_t i, const std::function<bool()>& f) {
    try {
      log += std::to_string(i) + (f() ? " kept\n" : " ignored\n");
    } catch (const hookscope::inference_error& e) {
      log += std::to_string(i) + " threw " + e.what() + "\n";
    }
  }

  void add(const call& c, std::size_t i) {
    logged(whole_log, i, [&] { return c.result ? whole.add_call(c.inputs, *c.result) : whole.add_call(c.inputs); });
    std::vector<std::int64_t> sizes;
    const std::string key = structure_of(c, sizes);
    auto it = structures.find(key);
    if (it == structures.end()) {
      it = structures.emplace(key, sized.add_structure(c.inputs, c.result ? &*c.result : nullptr)).first;
    }
    REQUIRE(it->second.sizes == sizes.size());
    logged(sized_log, i, [&] { return sized.add_call(it->second, sizes); });
  }

  void check() const {
    CHECK(sized_log == whole_log);
    CHECK(state_of(sized) == state_of(whole));
  }
};

std::vector<parameter> signature() {
  using shapes_test::param;
  return {param("input_ids"),
          param("attention_mask"),
          param("past_key_values", value()),
          param("pixel_values", value()),
          param("position_ids", value()),
          param("use_cache", value(true)),
          param("kwargs", parameter_kind::var_keyword)};
}

}  // namespace

TEST_CASE("shape_engine::add_structure") {
  SECTION("random call streams: the same log, state, summaries and inferences as add_call of each call") {
    // value_if_missing: none, by name, by position (replacing a positional argument; an error for calls that give
    // fewer), a position beyond the signature (an error for every call), a name the signature lacks (**kwargs takes it).
    const std::vector<std::vector<std::pair<hookscope::input_key, value>>> fillers = {
        {},
        {{"pixel_values", t({0, 3, 8, 8})}},
        {{std::size_t{0}, t({1, 1}, dtype::int64)}},
        {{std::size_t{1}, t({1, 4}, dtype::int64)}, {"pixel_values", t({0, 3, 8, 8})}},
        {{std::size_t{9}, t({1})}},
        {{"token_type_ids", t({1, 1}, dtype::int64)}}};
    std::uint32_t seed = 0;
    std::size_t n_calls = 0, n_structures = 0;
    for (const std::size_t store : {hookscope::unlimited, std::size_t{3}}) {
      for (const bool keep_calls : {true, false}) {
        for (std::size_t f = 0; f < fillers.size(); ++f) {
          for (int round = 0; round < 4; ++round) {
            std::mt19937 rng(++seed);
            const std::size_t n = std::uniform_int_distribution<std::size_t>(1, 40)(rng);
            const std::vector<call> calls = random_calls(rng, n, round == 3);
            INFO("seed " << seed << ", store_n_calls " << store << ", keep_calls " << keep_calls << ", filler " << f);
            two_engines e({.store_n_calls = store, .keep_calls = keep_calls});
            e.both([&](shape_engine& x) {
              x.set_parameters(signature());
              for (const auto& [key, v] : fillers[f]) x.value_if_missing(key, v);
              x.begin_recording();
            });
            for (std::size_t i = 0; i < n; ++i) {
              if (i == n / 2) e.both([](shape_engine& x) { x.begin_recording(); });  // a second recording
              e.add(calls[i], i);
            }
            e.check();
            n_calls += n;
            n_structures += e.structures.size();
          }
        }
      }
    }
    CHECK(n_structures * 2 < n_calls);  // most calls are of a structure seen before: the path without value trees
  }

  SECTION("an argument given twice: every call of the structure refused as add_call refuses it") {
    two_engines e({.store_n_calls = hookscope::unlimited});
    e.both([](shape_engine& x) { x.set_parameters(signature()); });
    const call twice{{{t({1, 3}, dtype::int64)}, {{"input_ids", t({1, 3}, dtype::int64)}}}, std::nullopt};
    const call fine{{{t({1, 5}, dtype::int64)}, {{"attention_mask", t({1, 5}, dtype::int64)}}}, std::nullopt};
    for (std::size_t i = 0; i < 6; ++i) e.add(i % 2 ? fine : twice, i);
    CHECK_THAT(e.sized_log, Contains("4 threw hookscope: argument 'input_ids' is given twice in one call"));
    CHECK(e.sized.num_obs() == 3);
    e.check();
  }

  SECTION("a value_if_missing position beyond the call's arguments: refused on every call, as add_call refuses it") {
    two_engines e({.store_n_calls = hookscope::unlimited});
    e.both([](shape_engine& x) {
      x.set_parameters(signature());
      x.value_if_missing(std::size_t{1}, t({1, 1}, dtype::int64));
    });
    const call one{{{t({1, 3}, dtype::int64)}, {}}, std::nullopt};
    for (std::size_t i = 0; i < 3; ++i) e.add(one, i);
    CHECK_THAT(e.sized_log, Contains("2 threw hookscope: value_if_missing position 1 is not given in this call"));
    CHECK(e.sized.num_obs() == 0);
    e.check();
  }

  SECTION("a structure prepared before set_parameters, value_if_missing, remove_inputs and merge change things") {
    for (std::uint32_t seed = 100; seed < 110; ++seed) {
      std::mt19937 rng(seed);
      const std::vector<call> calls = random_calls(rng, 30, false);
      two_engines e({.store_n_calls = hookscope::unlimited, .keep_calls = seed % 2 == 0});
      for (const call& c : calls) {  // every structure prepared before the engine has a signature
        std::vector<std::int64_t> sizes;
        const std::string key = structure_of(c, sizes);
        if (!e.structures.count(key)) {
          e.structures.emplace(key, e.sized.add_structure(c.inputs, c.result ? &*c.result : nullptr));
        }
      }
      e.both([](shape_engine& x) {
        x.set_parameters(signature());
        x.begin_recording();
      });
      shape_engine other({.store_n_calls = hookscope::unlimited});
      other.set_parameters(signature());
      other.begin_recording();
      for (std::size_t i = 0; i < 4; ++i) other.add_call(calls[i].inputs);
      INFO("seed " << seed);
      for (std::size_t i = 0; i < calls.size(); ++i) {
        if (i == 6) e.both([&](shape_engine& x) { x.merge(other); });
        if (i == 12) e.both([](shape_engine& x) { x.value_if_missing("pixel_values", t({0, 3, 8, 8})); });
        if (i == 18) e.both([](shape_engine& x) { x.value_if_missing("pixel_values", t({0, 3, 4, 4})); });
        if (i == 24) e.both([](shape_engine& x) { x.remove_inputs({"position_ids", "attention_mask"}); });
        e.add(calls[i], i);
      }
      e.check();
    }
  }

  SECTION("more distinct calls than the engine counts jointly, met again after evictions: the same summary") {
    // 6,000 distinct calls of one structure (past 0..5999), then each again in another order: the engine keeps 4,096
    // combinations, evicting and renumbering them, while the structure's table of distinct calls still names them.
    const engine_options o{.store_n_calls = hookscope::unlimited, .keep_calls = false};
    shape_engine whole(o), sized(o);
    for (shape_engine* e : {&whole, &sized}) {
      e->set_parameters(signature());
      e->begin_recording();
    }
    const call_inputs in{{}, {{"input_ids", t({1, 1}, dtype::int64)}, {"attention_mask", t({1, 1}, dtype::int64)}}};
    const hookscope::call_structure s = sized.add_structure(in);
    std::mt19937 rng(5);
    std::vector<std::int64_t> pasts(6000);
    for (std::size_t i = 0; i < pasts.size(); ++i) pasts[i] = static_cast<std::int64_t>(i);
    for (int round = 0; round < 2; ++round) {
      for (const std::int64_t past : pasts) {
        const std::int64_t batch = 1 + past % 3;
        whole.add_call(
            {{}, {{"input_ids", t({batch, 1}, dtype::int64)}, {"attention_mask", t({batch, past + 1}, dtype::int64)}}});
        const std::vector<std::int64_t> sizes{batch, 1, batch, past + 1};
        sized.add_call(s, sizes);
      }
      std::shuffle(pasts.begin(), pasts.end(), rng);
    }
    CHECK(sized.to_summary_json() == whole.to_summary_json());
    CHECK(sized.infer_dynamic_shapes().to_json() == whole.infer_dynamic_shapes().to_json());
  }
  SECTION("the prepared call does not leak into kept calls: later sizes leave earlier kept calls as they were") {
    shape_engine e({.store_n_calls = hookscope::unlimited});
    e.set_parameters(signature());
    e.begin_recording();
    const call_inputs in{{t({1, 1}, dtype::int64)}, {{"attention_mask", t({1, 1}, dtype::int64)}}};
    const value result = t({1, 1, 16});
    const hookscope::call_structure s = e.add_structure(in, &result);
    CHECK(s.sizes == 7);
    const std::vector<std::int64_t> sizes[] = {{1, 7, 1, 7, 1, 7, 16}, {1, 1, 1, 8, 1, 1, 16}, {2, 1, 2, 9, 2, 1, 16}};
    for (const auto& z : sizes) CHECK(e.add_call(s, z));
    const hookscope::engine_info info = e.info();
    REQUIRE(info.calls.size() == 3);
    CHECK(hookscope::to_json(info.calls[0].inputs.args[0]) == R"({"shape":[1,7],"dtype":"int64"})");
    CHECK(hookscope::to_json(info.calls[1].inputs.kwargs[0].second) == R"({"shape":[1,8],"dtype":"int64"})");
    CHECK(hookscope::to_json(info.calls[2].inputs.args[0]) == R"({"shape":[2,1],"dtype":"int64"})");
    CHECK(e.infer_dynamic_shapes().outputs().size() == 1);
  }
}

TEST_CASE("shape_engine::add_call(call_structure, sizes)") {
  shape_engine e({.store_n_calls = hookscope::unlimited});
  e.begin_recording();
  const hookscope::call_structure s = e.add_structure({{t({1, 2}), value(3)}, {{"m", value::tuple({t({4})})}}});
  CHECK(s.sizes == 3);
  SECTION("a size count that differs: argument_error (a std::invalid_argument) naming both counts, nothing recorded") {
    const std::vector<std::int64_t> two{1, 2}, four{1, 2, 3, 4};
    CHECK_THROWS_MATCHES(
        e.add_call(s, two), hookscope::argument_error,
        Catch::Matchers::Message("hookscope: add_call: 2 sizes given for a call structure of 3 sizes"));
    CHECK_THROWS_AS(e.add_call(s, four), std::invalid_argument);
    CHECK(e.num_obs() == 0);
  }
  SECTION("an unknown structure, or another engine's: std::invalid_argument") {
    const std::vector<std::int64_t> three{1, 2, 3};
    CHECK_THROWS_AS(e.add_call(hookscope::call_structure{s.id + 1, 3}, three), std::invalid_argument);
    CHECK_THROWS_AS(e.add_call(hookscope::call_structure{}, three), std::invalid_argument);
    shape_engine other({.store_n_calls = hookscope::unlimited});
    const hookscope::call_structure theirs =
        other.add_structure({{t({1, 2}), value(3)}, {{"m", value::tuple({t({4})})}}});
    CHECK(theirs.id != s.id);
    CHECK_THROWS_WITH(e.add_call(theirs, three), Contains("is not one of this engine's (add_structure)"));
    CHECK(other.add_call(theirs, three));
    CHECK(e.num_obs() == 0);
  }
  SECTION("a negative size: inference_error naming it, nothing recorded") {
    const std::vector<std::int64_t> negative{1, -2, 3};
    CHECK_THROWS_MATCHES(
        e.add_call(s, negative), hookscope::inference_error,
        Catch::Matchers::Message("hookscope: add_call: size 1 is negative (-2): a dimension's size is 0 or more"));
    CHECK(e.num_obs() == 0);
  }
  SECTION("remove_structure: the structure's id is refused afterwards, the others and what was recorded stay") {
    const std::vector<std::int64_t> three{1, 2, 3};
    const hookscope::call_structure kept = e.add_structure({{t({5, 6}), value(3)}, {{"m", value::tuple({t({7})})}}});
    CHECK(e.add_call(s, three));
    e.remove_structure(s);
    CHECK_THROWS_WITH(e.add_call(s, three), Contains("or was removed"));
    CHECK_THROWS_AS(e.remove_structure(s), std::invalid_argument);
    CHECK(e.add_call(kept, three));
    const hookscope::call_structure again = e.add_structure({{t({1, 2}), value(3)}, {{"m", value::tuple({t({4})})}}});
    CHECK(again.id != s.id);  // a removed structure's id never names another
    CHECK(e.add_call(again, three));
    CHECK(e.num_obs() == 3);
  }
  SECTION("the engine moved: its structures go with it") {
    const std::vector<std::int64_t> three{1, 2, 3};
    CHECK(e.add_call(s, three));
    shape_engine moved = std::move(e);
    CHECK(moved.add_call(s, three));
    CHECK(moved.num_obs() == 2);
  }
}
