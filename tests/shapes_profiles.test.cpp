// Relations with evidence and profiles solved from them (rule C6; docs/export_formats.md "Relations" and "Profiles"):
// the measured bugs as named tests, hostile values, and an oracle over random call streams that checks what the
// consumers of a profile rely on. The oracle's budget: HOOKSCOPE_ORACLE_CALLS (calls per stream, default 40) and
// HOOKSCOPE_ORACLE_STREAMS (default 60); its seed is fixed (HOOKSCOPE_ORACLE_SEED to change it).
#include "hookscope/shapes.hpp"

#include "shapes_scenarios.hpp"

#include <catch2/catch.hpp>

#include <algorithm>
#include <array>
#include <cstdlib>
#include <map>
#include <random>
#include <string>
#include <vector>

using shapes_test::ids;
using shapes_test::named;
using shapes_test::param;
using shapes_test::t;

namespace {

using shape = std::vector<std::int64_t>;
using range = hookscope::tensorrt_profile::shape_range;

// One generated call: the shapes of the inputs it gives, by name (absent: not given).
using call_shapes = std::map<std::string, shape>;

std::size_t env_or(const char* name, std::size_t fallback) {
  const char* v = std::getenv(name);
  return v && *v ? static_cast<std::size_t>(std::strtoull(v, nullptr, 10)) : fallback;
}

const range& range_of(const hookscope::tensorrt_profile& p, const std::string& input) {
  for (const range& r : p.shapes) {
    if (r.input == input) return r;
  }
  FAIL("no range for " << input << " in profile " << p.phase);
  throw std::logic_error("unreachable");
}

std::int64_t rhs(const hookscope::dim_relation& rel,
                 const std::function<std::int64_t(const hookscope::dim_relation::dim_ref&)>& v) {
  std::int64_t x = rel.k * v(rel.terms[0]) + rel.c;
  if (rel.terms.size() > 1) x += v(rel.terms[1]);
  return x;
}

// What a consumer of the profiles relies on, checked against the calls as generated (not as the engine saw them).
void check_oracle(const hookscope::dynamic_shapes& ds, const std::vector<call_shapes>& calls) {
  const auto& profiles = ds.tensorrt_profiles();
  INFO(ds.report());
  REQUIRE_FALSE(profiles.empty());
  // A listed relation holds in every call giving its dims.
  for (const hookscope::dim_relation& rel : ds.relations()) {
    INFO(rel.text);
    CHECK(rel.supporting_calls >= 2);
    CHECK(rel.distinct_points >= (rel.terms.size() == 1 && (rel.k != 1 || rel.c != 0) ? 3u : 2u));
    for (const call_shapes& c : calls) {
      bool all = c.count(rel.target.input) != 0;
      for (const auto& term : rel.terms) all = all && c.count(term.input) != 0;
      if (!all) continue;
      CHECK(c.at(rel.target.input).at(rel.target.dim) ==
            rhs(rel, [&](const auto& d) { return c.at(d.input).at(d.dim); }));
    }
  }
  // The bound on widening: a dim no relation defines stays within what was observed; a defined one is at most its
  // relation applied to its terms' bounds.
  // Dims equal in every call share a label (their values, so their bound): bounds are kept per label.
  std::map<std::pair<std::string, std::size_t>, std::string> key;
  std::map<std::string, std::int64_t> bound_of;
  for (const auto& in : ds.inputs()) {
    for (std::size_t d = 0; d < in.rank; ++d) key[{in.name, d}] = in.name + "#" + std::to_string(d);
    for (const auto& dd : in.dynamic_dims) key[{in.name, dd.dim}] = dd.shared_name;
    for (std::size_t d = 0; d < in.rank; ++d) {
      auto& b = bound_of[key.at({in.name, d})];
      b = std::max(b, in.max_shape[d]);
    }
  }
  const auto bound = [&](const std::string& input, std::size_t d) -> std::int64_t& {
    return bound_of.at(key.at({input, d}));
  };
  for (std::size_t pass = 0; pass <= ds.relations().size(); ++pass) {
    for (const hookscope::dim_relation& rel : ds.relations()) {
      auto& b = bound(rel.target.input, rel.target.dim);
      b = std::max(b, rhs(rel, [&](const auto& d) { return bound(d.input, d.dim); }));
    }
  }
  for (const auto& p : profiles) {
    INFO("profile " << p.phase);
    for (const hookscope::dim_relation& rel : ds.relations()) {
      for (auto point : {&range::min, &range::opt, &range::max}) {
        const auto v = [&](const hookscope::dim_relation::dim_ref& d) {
          return (range_of(p, d.input).*point).at(d.dim);
        };
        INFO(rel.text);
        CHECK(v(rel.target) == rhs(rel, v));
      }
    }
    for (const range& r : p.shapes) {
      for (std::size_t d = 0; d < r.min.size(); ++d) {
        INFO(r.input << " dim " << d);
        CHECK(0 <= r.min[d]);
        CHECK(r.min[d] <= r.opt[d]);
        CHECK(r.opt[d] <= r.max[d]);
        CHECK(r.max[d] <= bound(r.input, d));
      }
    }
    // opt is one observed call: every input that call gives has exactly its shape there.
    bool observed = false;
    for (const call_shapes& c : calls) {
      bool same = true;
      for (const auto& given : c) {  // not a structured binding: Clang 14 cannot capture one
        const auto it =
            std::find_if(p.shapes.begin(), p.shapes.end(), [&](const range& r) { return r.input == given.first; });
        same = same && (it == p.shapes.end() || it->opt == given.second);
      }
      observed = observed || same;
    }
    CHECK(observed);
  }
  // call_indexes (when the engine keeps the calls): every call in exactly one profile, ascending, on its phase's side
  // of the split dim; with every distinct call kept, `calls` of them per profile, each fitting its profile whole.
  std::size_t listed = 0;
  for (const auto& p : profiles) listed += p.call_indexes.size();
  if (listed != 0) {
    const bool truncated = std::any_of(ds.warnings().begin(), ds.warnings().end(), [](const auto& w) {
      return w.type == hookscope::inference_warning::kind::combinations_truncated;
    });
    CHECK(listed == calls.size());
    std::vector<std::size_t> profile_of(calls.size(), profiles.size());
    for (std::size_t q = 0; q < profiles.size(); ++q) {
      const auto& p = profiles[q];
      INFO("profile " << p.phase);
      CHECK(std::is_sorted(p.call_indexes.begin(), p.call_indexes.end()));
      if (!truncated) CHECK(p.call_indexes.size() == p.calls);
      for (const std::size_t k : p.call_indexes) {
        REQUIRE(k < calls.size());
        CHECK(profile_of[k] == profiles.size());
        profile_of[k] = q;
        for (const auto& sp : p.splits) {  // on its phase's side of every split it gives the dim of
          const auto split = calls[k].find(sp.input);
          if (split != calls[k].end()) CHECK((split->second.at(sp.dim) == sp.value) == sp.equal);
        }
        if (p.split) CHECK(p.split->label == p.splits.front().label);
        if (truncated) continue;
        for (const auto& given : calls[k]) {
          const range& r = range_of(p, given.first);
          for (std::size_t d = 0; d < given.second.size(); ++d) {
            INFO("call " << k << ": " << given.first << " dim " << d << " = " << given.second[d]);
            CHECK((r.min[d] <= given.second[d] && given.second[d] <= r.max[d]));
          }
        }
      }
    }
    CHECK(std::count(profile_of.begin(), profile_of.end(), profiles.size()) == 0);
  }
  // Every observed value lies within some profile (each profile, when there is one).
  for (const call_shapes& c : calls) {
    for (const auto& given : c) {
      const std::string& name = given.first;
      const shape& s = given.second;
      for (std::size_t d = 0; d < s.size(); ++d) {
        const bool covered = std::any_of(profiles.begin(), profiles.end(), [&](const auto& p) {
          const range& r = range_of(p, name);
          return r.min[d] <= s[d] && s[d] <= r.max[d];
        });
        INFO(name << " dim " << d << " = " << s[d]);
        CHECK(covered);
      }
    }
  }
}

// Records calls and remembers what each gave.
struct stream {
  shape_engine engine;
  std::vector<call_shapes> calls;
  explicit stream(engine_options o = {.store_n_calls = hookscope::unlimited}) : engine(o) {}
  void add(const std::vector<std::pair<std::string, std::optional<shape>>>& inputs) {
    value_fields kw;
    call_shapes c;
    for (const auto& [name, s] : inputs) {
      kw.emplace_back(name, s ? t(*s) : value());
      if (s) c[name] = *s;
    }
    engine.add_call(named(std::move(kw)));
    calls.push_back(std::move(c));
  }
};

// An LLM's forward(): input_ids (b, s), attention_mask (b, p + s), a KV cache (b, 2, p, 4) absent at the prefill
// (or empty, with `empty_cache`).
stream llm(const std::vector<std::array<std::int64_t, 3>>& steps, bool empty_cache = false) {  // (batch, seq, past)
  stream st;
  st.engine.set_parameters({param("input_ids"), param("attention_mask"), param("past_key_values", value())});
  st.engine.begin_recording();
  for (const auto& [b, s, p] : steps) {
    const bool cache = p != 0 || empty_cache;
    st.add({{"input_ids", shape{b, s}},
            {"attention_mask", shape{b, p + s}},
            {"past_key_values", cache ? std::optional<shape>(shape{b, 2, p, 4}) : std::nullopt}});
  }
  return st;
}

bool has_relation(const hookscope::dynamic_shapes& ds, const std::string& text) {
  return std::any_of(ds.relations().begin(), ds.relations().end(), [&](const auto& r) { return r.text == text; });
}

}  // namespace

TEST_CASE("dim_relation: evidence") {
  SECTION("a prefill and one decode step: the sum, and no fitted line through two points") {
    // The measured runaway: past = 7*total - 49 was listed beside total = sequence + past, and widening alternated
    // between them to attention_mask 1x5764808.
    stream st = llm({{1, 7, 0}, {1, 1, 7}}, true);
    const auto ds = st.engine.infer_dynamic_shapes({.dim_names = true});
    REQUIRE(ds.relations().size() == 1);
    CHECK(ds.relations()[0].text == "total_sequence_length = sequence_length + past_sequence_length");
    CHECK(ds.relations()[0].supporting_calls == 2);
    CHECK(ds.relations()[0].distinct_points == 2);
    REQUIRE(ds.tensorrt_profiles().size() == 1);
    const range& mask = range_of(ds.tensorrt_profiles()[0], "attention_mask");
    // By hand: sequence 1..7, past 0..7, so total 1..14.
    CHECK(mask.min == shape{1, 1});
    CHECK(mask.opt == shape{1, 7});
    CHECK(mask.max == shape{1, 14});
    check_oracle(ds, st.calls);
  }
  SECTION("a fitted line needs three distinct points, an equality two") {
    stream st;
    st.engine.set_parameters({param("x"), param("y")});
    st.engine.begin_recording();
    st.add({{"x", shape{3, 4}}, {"y", shape{7, 4}}});
    st.add({{"x", shape{5, 4}}, {"y", shape{11, 4}}});
    CHECK(st.engine.infer_dynamic_shapes().relations().empty());  // two points fit any line
    st.add({{"x", shape{5, 4}}, {"y", shape{11, 4}}});            // a repeated point is no evidence
    CHECK(st.engine.infer_dynamic_shapes().relations().empty());
    st.add({{"x", shape{4, 4}}, {"y", shape{9, 4}}});
    const auto ds = st.engine.infer_dynamic_shapes();
    REQUIRE(ds.relations().size() == 1);
    CHECK(ds.relations()[0].text == "y_dim_0 = 2*x_dim_0 + 1");
    CHECK(ds.relations()[0].supporting_calls == 4);
    CHECK(ds.relations()[0].distinct_points == 3);
    check_oracle(ds, st.calls);
  }
  SECTION("a relation that would define a dim through itself: not listed, a warning names it") {
    // a = b + e with b = 2a - 64 and e = 64 - a: the sum is found first; b = 2*a - 64 also holds (3 points), but b is
    // a term of a's relation, so listing it would make a cycle the profiles cannot solve.
    stream st;
    st.engine.set_parameters({param("a"), param("b"), param("e")});
    st.engine.begin_recording();
    for (const std::int64_t a : {33, 34, 35}) st.add({{"a", shape{a}}, {"b", shape{2 * a - 64}}, {"e", shape{64 - a}}});
    const auto ds = st.engine.infer_dynamic_shapes();
    REQUIRE(ds.relations().size() == 1);
    CHECK(ds.relations()[0].text == "a_dim_0 = b_dim_0 + e_dim_0");
    bool warned = false;
    for (const auto& w : ds.warnings())
      warned = warned || w.sentence.find("b_dim_0 = 2*a_dim_0 - 64 held in every") != std::string::npos;
    CHECK(warned);
    check_oracle(ds, st.calls);
  }
  SECTION("300 independent dims beside two fitted relations: both found, none invented") {
    // Every pair of classes is tried for a fitted line (step 4, not capped like sums): most pairs fail within a few
    // calls, and the ones that hold must still be found after the noise.
    stream st;
    std::vector<hookscope::parameter> params;
    for (int i = 0; i < 300; ++i) params.push_back(param("n" + std::to_string(i)));
    for (const char* name : {"x", "y", "w"}) params.push_back(param(name));
    st.engine.set_parameters(params);
    st.engine.begin_recording();
    std::mt19937_64 rng(5);
    std::uniform_int_distribution<std::int64_t> size(1, 1000);
    for (int c = 0; c < 30; ++c) {
      std::vector<std::pair<std::string, std::optional<shape>>> in;
      for (int i = 0; i < 300; ++i) in.emplace_back("n" + std::to_string(i), shape{size(rng)});
      const std::int64_t x = size(rng);
      in.emplace_back("x", shape{x});
      in.emplace_back("y", shape{3 * x + 2});
      in.emplace_back("w", shape{x + 5});
      st.add(in);
    }
    const auto ds = st.engine.infer_dynamic_shapes();
    REQUIRE(ds.relations().size() == 2);
    CHECK(has_relation(ds, "y_dim_0 = 3*x_dim_0 + 2"));
    CHECK(has_relation(ds, "w_dim_0 = x_dim_0 + 5"));
    check_oracle(ds, st.calls);
  }
  SECTION("the report says how many calls support each relation") {
    stream st = llm({{1, 7, 0}, {1, 1, 7}, {1, 1, 8}});
    const std::string report = st.engine.infer_dynamic_shapes({.dim_names = true}).report();
    CHECK_THAT(report, Contains("total_sequence_length = sequence_length + past_sequence_length  [attention_mask "
                                "dim 1]: 3 calls, 3 distinct points;"));
  }
}

TEST_CASE("tensorrt_profile: solved from the relations") {
  SECTION("relations referring to each other: every point satisfies every relation, within the bound") {
    // total = sequence + past, and a second input computed from total (2*total + 1): the fixed passes of widening
    // ended with points violating one of them (max x86).
    stream st;
    st.engine.set_parameters(
        {param("input_ids"), param("attention_mask"), param("past_key_values", value()), param("z")});
    st.engine.begin_recording();
    for (const auto& [s, p] :
         std::vector<std::pair<std::int64_t, std::int64_t>>{{7, 0}, {1, 7}, {1, 8}, {5, 0}, {1, 5}}) {
      st.add({{"input_ids", shape{1, s}},
              {"attention_mask", shape{1, p + s}},
              {"past_key_values", p == 0 ? std::nullopt : std::optional<shape>(shape{1, 2, p, 4})},
              {"z", shape{2 * (p + s) + 1}}});
    }
    const auto ds = st.engine.infer_dynamic_shapes({.dim_names = true});
    CHECK(has_relation(ds, "total_sequence_length = sequence_length + past_sequence_length"));
    CHECK(has_relation(ds, "z_dim_0 = 2*total_sequence_length + 1"));
    const auto& p = ds.tensorrt_profiles().at(0);
    // By hand: sequence 1..7, past 0..8: total 1..15, z 3..31.
    CHECK(range_of(p, "attention_mask").max == shape{1, 15});
    CHECK(range_of(p, "z").min == shape{3});
    CHECK(range_of(p, "z").max == shape{31});
    check_oracle(ds, st.calls);
  }
  SECTION("a phase in which no call gives every input: opt is one observed call, placeholders filled") {
    stream st;
    st.engine.set_parameters(
        {param("input_ids"), param("attention_mask"), param("past_key_values", value()), param("pixels", value())});
    st.engine.begin_recording();
    // The image's shape never varies: its placeholder is a tensor of that shape (no dim set to 0), which splits
    // nothing.
    const auto call = [&](std::int64_t s, std::int64_t p, bool image, bool cache) {
      st.add({{"input_ids", shape{1, s}},
              {"attention_mask", shape{1, p + s}},
              {"past_key_values", cache ? std::optional<shape>(shape{1, 2, p, 4}) : std::nullopt},
              {"pixels", image ? std::optional<shape>(shape{1, 3, 8, 8}) : std::nullopt}});
    };
    // Prefill phase: an image without a cache, then an empty cache without an image: no call gives both. Decode
    // phase: one step with an image (alignment needs a call giving every input), the others without.
    call(7, 0, true, false), call(3, 0, false, true), call(1, 10, true, true), call(1, 11, false, true);
    call(5, 0, true, false), call(1, 5, false, true);
    const auto ds = st.engine.infer_dynamic_shapes({.dim_names = true, .profile_phases = true});
    REQUIRE(ds.tensorrt_profiles().size() == 2);
    CHECK(ds.tensorrt_profiles()[0].phase == "sequence_length > 1");
    const auto& prefill = ds.tensorrt_profiles()[0];
    // By hand: calls 0, 1, 4, each once. Per-dim modes over them, placeholders filled (the smallest on a tie): ids
    // 1x3, mask 1x3, cache 1x2x0x4 (calls 0 and 4 get the placeholder, call 1 gives it empty), pixels 1x3x8x8.
    // Agreeing dims: call 0 1+1+4+4 = 10, call 1 2+2+4+4 = 12, call 4 10.
    CHECK(range_of(prefill, "input_ids").opt == shape{1, 3});
    CHECK(range_of(prefill, "past_key_values").opt == shape{1, 2, 0, 4});
    CHECK(range_of(prefill, "pixels").opt == shape{1, 3, 8, 8});
    const auto& decode = ds.tensorrt_profiles()[1];
    // The only decode step giving every input the phase gives: call 2.
    CHECK(range_of(decode, "attention_mask").opt == shape{1, 11});
    CHECK(range_of(decode, "past_key_values").opt == shape{1, 2, 10, 4});
    CHECK(range_of(decode, "pixels").opt == shape{1, 3, 8, 8});
    check_oracle(ds, st.calls);
  }
  SECTION("one generate(): a phase of a single call (its one prefill) is a phase") {
    // {batch, sequence, past}: one prefill of 5 tokens, then decode steps.
    for (const auto& steps : {std::vector<std::array<std::int64_t, 3>>{{1, 5, 0}, {1, 1, 5}, {1, 1, 6}, {1, 1, 7}},
                              std::vector<std::array<std::int64_t, 3>>{{2, 5, 0}, {2, 1, 5}}}) {
      INFO(steps.size() << " calls");
      stream st = llm(steps);
      const auto ds = st.engine.infer_dynamic_shapes({.dim_names = true, .profile_phases = true});
      REQUIRE(ds.tensorrt_profiles().size() == 2);
      const auto& prefill = ds.tensorrt_profiles()[0];
      CHECK(prefill.phase == "sequence_length > 1");
      CHECK(range_of(prefill, "input_ids").min == shape{steps[0][0], 5});
      CHECK(range_of(prefill, "input_ids").max == shape{steps[0][0], 5});
      CHECK(range_of(ds.tensorrt_profiles()[1], "input_ids").max == shape{steps[0][0], 1});
      check_oracle(ds, st.calls);
    }
    stream one = llm({{1, 5, 0}});  // nothing varies: nothing to split
    CHECK(one.engine.infer_dynamic_shapes({.profile_phases = true}).tensorrt_profiles().size() == 1);
  }
  SECTION("more than 4096 distinct calls: min and max cover the calls beyond the kept ones") {
    stream st({.store_n_calls = hookscope::unlimited, .keep_calls = false});
    st.engine.set_parameters({param("x"), param("y")});
    st.engine.begin_recording();
    for (std::int64_t n = 1; n <= 5000; ++n) st.add({{"x", shape{n, 3}}, {"y", shape{n + 1, 3}}});
    const auto ds = st.engine.infer_dynamic_shapes();
    bool truncated = false;
    for (const auto& w : ds.warnings())
      truncated = truncated || w.sentence.find("more than 4096 distinct") != std::string::npos;
    CHECK(truncated);
    REQUIRE(ds.tensorrt_profiles().size() == 1);
    CHECK(range_of(ds.tensorrt_profiles()[0], "x").min == shape{1, 3});
    CHECK(range_of(ds.tensorrt_profiles()[0], "x").max == shape{5000, 3});
    CHECK(range_of(ds.tensorrt_profiles()[0], "y").max == shape{5001, 3});
    CHECK(has_relation(ds, "y_dim_0 = x_dim_0 + 1"));
    check_oracle(ds, st.calls);
  }
  SECTION("more than 4096 distinct calls, one of them breaking a relation: the relation is not listed") {
    // Whether the breaking call is among the kept distinct calls depends on its hash: kept, the relation is never
    // found; not kept, its y (5002) lies beyond what the relation computes from x's max over every call (5001), so
    // no profile point covering every call satisfies it and it is dropped with a warning.
    const auto breaking = [](std::int64_t x) {
      stream st({.store_n_calls = hookscope::unlimited, .keep_calls = false});
      st.engine.set_parameters({param("x"), param("y")});
      st.engine.begin_recording();
      for (std::int64_t n = 1; n <= 5000; ++n) st.add({{"x", shape{n, 3}}, {"y", shape{n + 1, 3}}});
      st.add({{"x", shape{x, 3}}, {"y", shape{5002, 3}}});
      return st;
    };
    // x = 5000: this call is among the kept ones (the relation is never found); x = 4000: it is not (the relation is
    // found on the kept calls, then dropped by the profiles).
    for (const std::int64_t x : {5000, 4000}) {
      const stream s = breaking(x);
      const auto ds = s.engine.infer_dynamic_shapes();
      INFO("x = " << x);
      CHECK_FALSE(has_relation(ds, "y_dim_0 = x_dim_0 + 1"));
      bool dropped = false;
      for (const auto& w : ds.warnings())
        dropped = dropped || w.sentence.find("y_dim_0 = x_dim_0 + 1 held in every kept") != std::string::npos;
      CHECK(dropped == (x == 4000));
      check_oracle(ds, s.calls);
    }
  }
  SECTION("over 4096 distinct calls, a call not kept breaking an equality: not listed") {
    // y = x in 6,000 calls, then x = 3 with y past x's max over every call. Kept (y = 6001), the call puts x and y in
    // two classes and no relation is found; not kept (y = 6002), x and y form one class on the kept calls, whose
    // range (merged over both) covers the call, so only the equality's own check catches it.
    for (const std::int64_t y : {6001, 6002}) {
      stream st({.store_n_calls = hookscope::unlimited, .keep_calls = false});
      st.engine.set_parameters({param("x"), param("y")});
      st.engine.begin_recording();
      for (std::int64_t n = 1; n <= 6000; ++n) st.add({{"x", shape{1, n}}, {"y", shape{1, n}}});
      st.add({{"x", shape{1, 3}}, {"y", shape{1, y}}});
      const auto ds = st.engine.infer_dynamic_shapes();
      INFO("y = " << y);
      CHECK(ds.relations().empty());
      bool dropped = false;
      for (const auto& w : ds.warnings())
        dropped = dropped || w.sentence.find("y_dim_1 = x_dim_1 held in every kept") != std::string::npos;
      CHECK(dropped == (y == 6002));
      // Every call covered, and x, no longer tied to y, keeps its own extremes (the bound on widening).
      REQUIRE(ds.tensorrt_profiles().size() == 1);
      CHECK(range_of(ds.tensorrt_profiles()[0], "x").max.at(1) == 6000);
      CHECK(range_of(ds.tensorrt_profiles()[0], "y").max.at(1) == y);
      check_oracle(ds, st.calls);
    }
  }
  SECTION("over 4096 distinct calls, an equality broken inside both extremes") {
    // y = x in 6,000 calls, then x = 100 with y = 200 + j: inside both dims' extremes, so no profile check can see
    // it; the C3 pair state (every call) says the two dims once differed. Which of these calls is kept depends on
    // its hash: y = 204 is not (the equality is found on the kept calls, then left out with a warning).
    std::size_t warned = 0;
    for (const std::int64_t y : {200, 201, 202, 203, 204}) {
      stream st({.store_n_calls = hookscope::unlimited, .keep_calls = false});
      st.engine.set_parameters({param("x"), param("y")});
      st.engine.begin_recording();
      for (std::int64_t n = 1; n <= 6000; ++n) st.add({{"x", shape{1, n}}, {"y", shape{1, n}}});
      st.add({{"x", shape{1, 100}}, {"y", shape{1, y}}});
      const auto ds = st.engine.infer_dynamic_shapes();
      INFO("y = " << y);
      CHECK(ds.relations().empty());
      for (const auto& w : ds.warnings())
        warned += w.sentence.find("a call not kept gave y dim 1 and x dim 1 different") != std::string::npos;
      check_oracle(ds, st.calls);
      // The same through two summaries merged (the pair state merges by OR).
      stream a({.store_n_calls = hookscope::unlimited, .keep_calls = false});
      stream b({.store_n_calls = hookscope::unlimited, .keep_calls = false});
      for (stream* part : {&a, &b}) {
        part->engine.set_parameters({param("x"), param("y")});
        part->engine.begin_recording();
      }
      for (std::int64_t n = 1; n <= 6000; ++n) (n % 2 ? a : b).add({{"x", shape{1, n}}, {"y", shape{1, n}}});
      a.add({{"x", shape{1, 100}}, {"y", shape{1, y}}});
      shape_engine merged = shape_engine::from_summary_json(b.engine.to_summary_json("f"));
      merged.merge(shape_engine::from_summary_json(a.engine.to_summary_json("f")));
      CHECK(merged.infer_dynamic_shapes().relations().empty());
    }
    CHECK(warned >= 1);
  }
  SECTION("5,000 distinct calls with optional inputs: inference completes (linear placeholders) and is right") {
    std::vector<std::array<std::int64_t, 3>> steps;
    for (std::int64_t i = 0; i < 5000; ++i)
      steps.push_back({1 + i % 3, i % 2 == 0 ? 2 + i / 2 : 1, i % 2 == 0 ? 0 : 2 + i / 2});
    stream st = llm(steps);
    const auto ds = st.engine.infer_dynamic_shapes({.dim_names = true});
    CHECK(ds.inputs()[1].max_shape == shape{3, 2 + 2499 + 1});
    const auto& p = ds.tensorrt_profiles().at(0);
    CHECK(range_of(p, "attention_mask").max.at(1) >= 2 + 2499 + 1);
    check_oracle(ds, st.calls);
    // Phases over more than 4,096 distinct calls: together they cover every call, the ones not kept included.
    const auto phased = st.engine.infer_dynamic_shapes({.dim_names = true, .profile_phases = true});
    CHECK(phased.tensorrt_profiles().size() == 2);
    check_oracle(phased, st.calls);
    // Every stored call in the profile of its phase, those whose distinct call was not kept too (check_oracle).
    for (const auto& p : phased.tensorrt_profiles()) {
      INFO(p.phase);
      CHECK(p.call_indexes.size() == 2500);  // the odd calls decode steps, the even ones prefills
      REQUIRE(!p.call_indexes.empty());
      CHECK(p.call_indexes[0] == (p.split && p.split->equals_one ? 1u : 0u));
    }
    const value args = st.engine.infer_arguments({.candidate = std::size_t{0}}).arguments;  // the cache's placeholder
    CHECK(hookscope::to_json(args) == R"({"dict":[["input_ids",{"shape":[1,2],"dtype":"float32"}],)"
                                      R"(["attention_mask",{"shape":[1,2],"dtype":"float32"}],)"
                                      R"(["past_key_values",{"shape":[1,2,0,4],"dtype":"float32"}]]})");
  }
}

TEST_CASE("tensorrt_profile: placeholders follow the labels") {
  // Two prefills (no cache) and two decode steps of batch 2, then a prefill of batch 3: the last prefill's cache
  // placeholder comes from a decode step (batch 2, past set to 0 by D2), but its batch is named batch_size like
  // input_ids', which the call gives as 3: the placeholder is 3x2x0x4, and every profile point has one batch.
  shape_engine e(engine_options{.store_n_calls = hookscope::unlimited});
  e.set_parameters({param("input_ids"), param("past_key_values", value())});
  e.add_call(named({{"input_ids", ids({2, 5})}}));
  e.add_call(named({{"input_ids", ids({2, 1})}, {"past_key_values", t({2, 2, 5, 4})}}));
  e.add_call(named({{"input_ids", ids({2, 1})}, {"past_key_values", t({2, 2, 6, 4})}}));
  e.add_call(named({{"input_ids", ids({3, 7})}}));
  const auto ds = e.infer_dynamic_shapes({.batch_dimension_for_all = true, .dim_names = true});
  REQUIRE(ds.tensorrt_profiles().size() == 1);
  const auto& p = ds.tensorrt_profiles()[0];
  CHECK(range_of(p, "input_ids").max == std::vector<std::int64_t>{3, 7});
  CHECK(range_of(p, "past_key_values").max == std::vector<std::int64_t>{3, 2, 6, 4});
  CHECK(range_of(p, "past_key_values").min == std::vector<std::int64_t>{2, 2, 0, 4});
  for (const auto point : {&range::min, &range::opt, &range::max}) {
    CHECK((range_of(p, "input_ids").*point)[0] == (range_of(p, "past_key_values").*point)[0]);
  }
}

TEST_CASE("tensorrt_profile: hostile values") {
  SECTION("dims of 0") {
    stream st = llm({{0, 3, 0}, {2, 1, 3}, {2, 1, 4}, {0, 0, 0}});
    check_oracle(st.engine.infer_dynamic_shapes({.dim_names = true, .profile_phases = true}), st.calls);
  }
  SECTION("huge dims (2^40 and beyond) take no part in relations and do not overflow") {
    const std::int64_t big = std::int64_t{1} << 40;
    stream st = llm({{1, big, 0}, {1, 1, big}, {1, 1, big + 1}, {2, big * 4, 0}});
    const auto ds = st.engine.infer_dynamic_shapes({.dim_names = true});
    check_oracle(ds, st.calls);
  }
  SECTION("a single call: no relation, the profile is the call") {
    stream st = llm({{1, 7, 0}});
    const auto ds = st.engine.infer_dynamic_shapes({.batch_dimension_for_all = true, .dim_names = true});
    CHECK(ds.relations().empty());
    check_oracle(ds, st.calls);
    CHECK(range_of(ds.tensorrt_profiles()[0], "input_ids").max == shape{1, 7});
  }
  SECTION("all dims constant") {
    stream st = llm({{2, 3, 0}, {2, 3, 0}, {2, 3, 0}});
    const auto ds = st.engine.infer_dynamic_shapes({.batch_dimension_for_all = true, .dim_names = true});
    CHECK(ds.relations().empty());
    check_oracle(ds, st.calls);
  }
}

TEST_CASE("tensorrt_profile: oracle over random call streams") {
  const std::size_t n_calls = env_or("HOOKSCOPE_ORACLE_CALLS", 40);
  const std::size_t n_streams = env_or("HOOKSCOPE_ORACLE_STREAMS", 60);
  std::mt19937_64 rng(env_or("HOOKSCOPE_ORACLE_SEED", 27));
  const auto pick = [&](std::int64_t lo, std::int64_t hi) {
    return std::uniform_int_distribution<std::int64_t>(lo, hi)(rng);
  };
  for (std::size_t n = 0; n < n_streams; ++n) {
    stream st;
    st.engine.set_parameters({param("input_ids"), param("attention_mask"), param("past_key_values", value()),
                              param("pixels", value()), param("z", value()), param("c")});
    st.engine.begin_recording();
    const bool with_z = pick(0, 1) == 1, with_pixels = pick(0, 1) == 1, zero = pick(0, 5) == 0;
    const std::int64_t k = pick(1, 3), off = pick(0, 4);
    const std::size_t calls = static_cast<std::size_t>(pick(1, static_cast<std::int64_t>(n_calls)));
    // The first call gives every input (alignment needs one such call): a chunked prefill with an image.
    std::int64_t batch = pick(zero ? 0 : 1, 3), past = pick(1, 6);
    bool first = true;
    for (std::size_t i = 0; i < calls; ++i) {
      const bool prefill = first || past == 0 || pick(0, 3) == 0;
      if (prefill && !first) batch = pick(zero ? 0 : 1, 3), past = 0;
      const std::int64_t seq = prefill ? pick(zero ? 0 : 1, 12) : 1;
      st.add({{"input_ids", shape{batch, seq}},
              {"attention_mask", shape{batch, past + seq}},
              {"past_key_values", past == 0 ? std::nullopt : std::optional<shape>(shape{batch, 2, past, 4})},
              {"pixels", with_pixels && prefill ? std::optional<shape>(shape{batch, 3, 8, 8}) : std::nullopt},
              {"z", with_z ? std::optional<shape>(shape{k * (past + seq) + off}) : std::nullopt},
              {"c", shape{5, 5}}});
      past += seq;
      first = false;
    }
    for (const bool phases : {false, true}) {
      INFO("stream " << n << ", " << calls << " calls, phases " << phases);
      const auto ds = st.engine.infer_dynamic_shapes({.dim_names = true, .profile_phases = phases});
      check_oracle(ds, st.calls);
      // A summary written and read back gives the same relations (with their evidence) and profiles.
      const auto back = shape_engine::from_summary_json(st.engine.to_summary_json("f"))
                            .infer_dynamic_shapes({.dim_names = true, .profile_phases = phases});
      REQUIRE(back.relations().size() == ds.relations().size());
      for (std::size_t r = 0; r < ds.relations().size(); ++r) {
        CHECK(back.relations()[r].text == ds.relations()[r].text);
        CHECK(back.relations()[r].supporting_calls == ds.relations()[r].supporting_calls);
        CHECK(back.relations()[r].distinct_points == ds.relations()[r].distinct_points);
      }
      CHECK(back.to_trtexec() == ds.to_trtexec());
    }
  }
}

TEST_CASE("tensorrt_profile: adversarial call streams") {
  // Another generator than the oracle's: batch 0 or 1 in a phase, a position input that alternates, an encoder
  // length L with y = 2*L + 1 (optional), huge dims, and a stricter check: each call fits one profile whole, and
  // each profile's opt is a call of that profile. The streams are also split in two, summarised, merged and
  // compared with one pass.
  const std::size_t n_streams = env_or("HOOKSCOPE_ORACLE_STREAMS", 60);
  std::mt19937_64 rng(env_or("HOOKSCOPE_ORACLE_SEED", 31));
  const auto pick = [&](std::int64_t lo, std::int64_t hi) {
    return std::uniform_int_distribution<std::int64_t>(lo, hi)(rng);
  };
  const std::vector<hookscope::parameter> params = {param("input_ids"),
                                                    param("attention_mask"),
                                                    param("past_key_values", value()),
                                                    param("position_ids", value()),
                                                    param("encoder", value()),
                                                    param("y", value())};
  const auto fits = [](const hookscope::tensorrt_profile& p, const call_shapes& c) {
    return std::all_of(c.begin(), c.end(), [&](const auto& given) {
      const range& r = range_of(p, given.first);
      for (std::size_t d = 0; d < given.second.size(); ++d) {
        if (given.second[d] < r.min[d] || r.max[d] < given.second[d]) return false;
      }
      return true;
    });
  };
  for (std::size_t n = 0; n < n_streams; ++n) {
    const std::int64_t huge = pick(0, 3) == 0 ? (std::int64_t{1} << pick(31, 62)) : 0;
    const std::int64_t batch_lo = pick(0, 1);
    const std::size_t calls = static_cast<std::size_t>(pick(1, 50));
    std::vector<std::vector<std::pair<std::string, std::optional<shape>>>> stream_calls;
    std::int64_t batch = pick(batch_lo, 2), past = pick(1, 6);  // the first call gives every input
    for (std::size_t i = 0; i < calls; ++i) {
      const bool prefill = i == 0 || pick(0, 3) == 0;
      if (prefill && i != 0) batch = pick(batch_lo, 2), past = 0;
      const std::int64_t seq = prefill ? pick(1, 9) : 1;
      const std::int64_t len = huge && i != 0 && pick(0, 1) ? huge + pick(0, 3) : pick(1, 20);
      const bool with_encoder = i == 0 || pick(0, 2) != 0;
      stream_calls.push_back(
          {{"input_ids", shape{batch, seq}},
           {"attention_mask", shape{batch, past + seq}},
           {"past_key_values", past == 0 ? std::nullopt : std::optional<shape>(shape{batch, 2, past, 4})},
           {"position_ids", i % 2 == 0 ? std::optional<shape>(shape{batch, seq}) : std::nullopt},
           {"encoder", with_encoder ? std::optional<shape>(shape{batch, len}) : std::nullopt},
           {"y", with_encoder && len < 1000 ? std::optional<shape>(shape{2 * len + 1}) : std::nullopt}});
      past += seq;
    }
    stream st;
    st.engine.set_parameters(params);
    st.engine.begin_recording();
    for (const auto& c : stream_calls) st.add(c);
    const std::size_t cut = static_cast<std::size_t>(pick(0, static_cast<std::int64_t>(calls)));
    stream first, second;
    for (stream* part : {&first, &second}) {
      part->engine.set_parameters(params);
      part->engine.begin_recording();
    }
    for (std::size_t i = 0; i < calls; ++i) (i < cut ? first : second).add(stream_calls[i]);
    for (const bool phases : {false, true}) {
      INFO("stream " << n << ", " << calls << " calls, cut at " << cut << ", huge " << huge << ", phases " << phases);
      const hookscope::dynamic_shapes_options o{.dim_names = true, .profile_phases = phases};
      const auto ds = st.engine.infer_dynamic_shapes(o);
      check_oracle(ds, st.calls);
      for (const call_shapes& c : st.calls) {
        CHECK(std::any_of(ds.tensorrt_profiles().begin(), ds.tensorrt_profiles().end(),
                          [&](const auto& p) { return fits(p, c); }));
      }
      for (const auto& p : ds.tensorrt_profiles()) {
        INFO("profile " << p.phase);
        CHECK(std::any_of(st.calls.begin(), st.calls.end(), [&](const call_shapes& c) {
          if (!fits(p, c)) return false;
          return std::all_of(c.begin(), c.end(),
                             [&](const auto& given) { return range_of(p, given.first).opt == given.second; });
        }));
      }
      if (cut == 0 || cut == calls) continue;
      shape_engine merged = shape_engine::from_summary_json(first.engine.to_summary_json("f"));
      merged.merge(shape_engine::from_summary_json(second.engine.to_summary_json("f")));
      const auto two = merged.infer_dynamic_shapes(o);
      CHECK(two.report() == ds.report());
      REQUIRE(two.tensorrt_profiles().size() == ds.tensorrt_profiles().size());  // to_trtexec refuses huge dims
      for (std::size_t q = 0; q < ds.tensorrt_profiles().size(); ++q) {
        for (std::size_t r = 0; r < ds.tensorrt_profiles()[q].shapes.size(); ++r) {
          const range& a = ds.tensorrt_profiles()[q].shapes[r];
          const range& b = two.tensorrt_profiles()[q].shapes.at(r);
          CHECK((b.input == a.input && b.min == a.min && b.opt == a.opt && b.max == a.max));
        }
      }
    }
  }
}
