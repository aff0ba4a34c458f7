// shape_engine's summaries (to_summary_json, from_summary_json, merge): merging the summaries of any split of the
// calls, in any grouping, infers exactly what one pass over all of them infers, streaming or storing the calls.
#include "shapes_scenarios.hpp"

#include <algorithm>
#include <cctype>
#include <iterator>
#include <functional>
#include <random>
#include <string>
#include <vector>

using shapes_test::t;

namespace {

using call = shapes_test::recorded_call;

// Decoder-like calls with what makes summaries hard: positional and keyword arguments, absent and None inputs, a
// cache whose length changes (a leaf-count conflict when `conflicts`), an empty cache keeping 0-d tensors only (left
// out, rule B4), constants, results, several phases.
std::vector<call> random_calls(std::mt19937& rng, std::size_t n, bool conflicts) {
  const auto pick = [&](int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); };
  std::vector<call> calls;
  for (std::size_t i = 0; i < n; ++i) {
    const std::int64_t batch = pick(1, 3), seq = pick(0, 3) == 0 ? pick(2, 9) : 1, past = pick(0, 12);
    call c;
    const value ids = t({batch, seq}, dtype::int64);
    if (pick(0, 1)) {
      c.inputs.args.push_back(ids);
    } else {
      c.inputs.kwargs.emplace_back("input_ids", ids);
    }
    c.inputs.kwargs.emplace_back("attention_mask", t({batch, past + seq}, dtype::int64));
    const std::size_t layers = conflicts && pick(0, 9) == 0 ? 1 : 2;
    std::vector<value> cache;
    for (std::size_t l = 0; l < layers; ++l)
      cache.push_back(value::tuple({t({batch, 2, past, 4}), t({batch, 2, past, 4})}));
    if (past > 0) c.inputs.kwargs.emplace_back("past_key_values", value::list(std::move(cache)));
    if (past == 0 && pick(0, 2) == 0) c.inputs.kwargs.emplace_back("past_key_values", value::list({t({}), t({})}));
    if (seq > 1 && pick(0, 1)) c.inputs.kwargs.emplace_back("pixel_values", t({batch, 3, 8, 8}));
    if (c.inputs.kwargs.back().first != "pixel_values" && pick(0, 4) == 0)
      c.inputs.kwargs.emplace_back("pixel_values", value());
    if (conflicts && pick(0, 19) == 0) c.inputs.kwargs.emplace_back("use_cache", value(false));
    if (pick(0, 3)) c.result = value::tuple({t({batch, seq, 16}), t({batch, 2, past + seq, 4})});
    calls.push_back(std::move(c));
  }
  return calls;
}

shape_engine engine(bool keep_calls) {
  shape_engine e({.store_n_calls = hookscope::unlimited, .keep_calls = keep_calls});
  e.set_parameters({{"input_ids"},
                    {"attention_mask"},
                    {"past_key_values", hookscope::parameter_kind::positional_or_keyword, value()},
                    {"pixel_values", hookscope::parameter_kind::positional_or_keyword, value()},
                    {"use_cache", hookscope::parameter_kind::positional_or_keyword, value(true)}});
  e.value_if_missing("pixel_values", t({0, 3, 8, 8}));
  e.begin_recording();
  return e;
}

void add(shape_engine& e, const std::vector<call>& calls, std::size_t from, std::size_t to) {
  for (std::size_t i = from; i < to; ++i) {
    if (calls[i].result) {
      e.add_call(calls[i].inputs, *calls[i].result);
    } else {
      e.add_call(calls[i].inputs);
    }
  }
}

// Everything an inference gives, as text; an inference that fails gives its message.
std::string inferred(const shape_engine& e) {
  std::string out;
  const auto attempt = [&](const char* what, const std::function<std::string()>& f) {
    shapes_test::append_attempt(out, what, f);
  };
  for (const bool names : {false, true}) {
    for (const bool phases : {false, true}) {
      attempt("shapes", [&] {
        const auto ds = e.infer_dynamic_shapes({.dim_names = names, .profile_phases = phases});
        std::string text =
            ds.to_json() + ds.to_typed_json() + ds.to_onnx() + ds.to_trtexec() + ds.to_ort_options() + ds.report();
        for (const auto& o : ds.outputs()) text += o.name + ";";
        return text;
      });
    }
  }
  attempt("batch", [&] { return e.infer_dynamic_shapes({.batch_dimension_for_all = true}).to_json(); });
  attempt("args", [&] { return hookscope::to_json(e.infer_arguments().arguments); });
  attempt("args as args/kwargs",
          [&] { return hookscope::to_json(e.infer_arguments({.as_args_kwargs = true}).arguments); });
  const auto info = e.info();
  out += "seen " + std::to_string(info.calls_seen) + " ignored " + std::to_string(info.calls_ignored) + "\n";
  return out;
}

// Merges the parts in a random grouping that keeps their order: ((a b) c), (a (b c)), ...
shape_engine merge_randomly(std::vector<shape_engine>& parts, std::size_t from, std::size_t to, std::mt19937& rng) {
  if (to - from == 1) return std::move(parts[from]);
  const std::size_t middle = std::uniform_int_distribution<std::size_t>(from + 1, to - 1)(rng);
  shape_engine left = merge_randomly(parts, from, middle, rng);
  const shape_engine right = merge_randomly(parts, middle, to, rng);
  left.merge(right);
  return left;
}

}  // namespace

TEST_CASE("shape_engine::merge") {
  SECTION("any split, any grouping, through summary documents: what one pass infers") {
    for (const bool conflicts : {false, true}) {
      for (std::uint32_t seed = 1; seed <= 25; ++seed) {
        std::mt19937 rng(seed + (conflicts ? 1000 : 0));
        const std::size_t n = std::uniform_int_distribution<std::size_t>(1, 40)(rng);
        const std::vector<call> calls = random_calls(rng, n, conflicts);
        shape_engine streaming = engine(false), stored = engine(true);
        add(streaming, calls, 0, n);
        add(stored, calls, 0, n);
        const std::size_t k = std::uniform_int_distribution<std::size_t>(1, 6)(rng);
        std::vector<std::size_t> cuts{0, n};
        for (std::size_t i = 1; i < k; ++i) cuts.push_back(std::uniform_int_distribution<std::size_t>(0, n)(rng));
        std::sort(cuts.begin(), cuts.end());
        std::vector<shape_engine> parts;
        for (std::size_t i = 0; i + 1 < cuts.size(); ++i) {
          shape_engine part = engine(false);
          add(part, calls, cuts[i], cuts[i + 1]);
          parts.push_back(shape_engine::from_summary_json(part.to_summary_json("forward")));
        }
        const shape_engine merged = merge_randomly(parts, 0, parts.size(), rng);
        INFO("seed " << seed << ", " << n << " calls in " << cuts.size() - 1 << " parts, conflicts " << conflicts);
        const std::string expected = inferred(streaming);
        CHECK(inferred(merged) == expected);
        CHECK(inferred(stored) == expected);
        // With a conflict (an error for every inference), the summaries of the leaves after it may differ.
        if (!conflicts) CHECK(merged.to_summary_json("forward") == streaming.to_summary_json("forward"));
      }
    }
  }
  SECTION("what a merge writes reads back: rank, leaf-count and dtype changes across parts pass the checks") {
    std::mt19937 rng(41);
    const auto pick = [&](int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); };
    const auto tensor = [&](std::vector<std::int64_t> s) {
      return t(std::move(s), pick(0, 3) ? dtype::float32 : dtype::float16);
    };
    for (int round = 0; round < 300; ++round) {
      std::vector<shape_engine> parts;
      for (int p = pick(1, 4); p > 0; --p) {
        shape_engine e = engine(false);
        for (int i = pick(0, 7); i > 0; --i) {
          // A rank of 1 to 3 (a conflict when parts start with different ones), b a tensor, a tuple (a leaf-count
          // conflict), None or an int, pixel_values sometimes.
          call_inputs in{{tensor(std::vector<std::int64_t>(static_cast<std::size_t>(pick(1, 3)), pick(1, 3)))}, {}};
          const int b = pick(0, 5);
          if (b == 0) in.kwargs.emplace_back("attention_mask", value::tuple({tensor({1}), tensor({2})}));
          if (b == 1) in.kwargs.emplace_back("attention_mask", value());
          if (b == 2) in.kwargs.emplace_back("attention_mask", value(std::int64_t{3}));
          if (b >= 3) in.kwargs.emplace_back("attention_mask", tensor({2, pick(0, 3)}));
          if (pick(0, 2) == 0) in.kwargs.emplace_back("pixel_values", tensor({pick(0, 2), 3, 8, 8}));
          if (pick(0, 1)) {
            e.add_call(in, tensor({pick(0, 3)}));
          } else {
            e.add_call(in);
          }
        }
        parts.push_back(shape_engine::from_summary_json(e.to_summary_json("forward")));
      }
      for (std::size_t p = 1; p < parts.size(); ++p) parts[0].merge(parts[p]);
      INFO("round " << round);
      const std::string text = parts[0].to_summary_json("forward");
      CHECK_NOTHROW(shape_engine::from_summary_json(text));
      shape_engine twice = shape_engine::from_summary_json(text);
      twice.merge(parts[0]);
      CHECK_NOTHROW(shape_engine::from_summary_json(twice.to_summary_json("forward")));
    }
  }
  SECTION("beyond every bound (distinct shapes, sizes and calls): the same smallest ones are kept") {
    std::vector<call> calls;
    for (std::int64_t i = 0; i < 5000; ++i) {
      const std::int64_t x = (i * 7919) % 4999 + 1;
      calls.push_back({call_inputs{{}, {{"input_ids", t({x % 3 + 1, x}, dtype::int64)}}}, std::nullopt});
    }
    const auto one = [&](std::vector<std::size_t> cuts) {
      std::vector<shape_engine> parts;
      for (std::size_t i = 0; i + 1 < cuts.size(); ++i) {
        shape_engine part({.store_n_calls = hookscope::unlimited, .keep_calls = false});
        part.begin_recording();
        add(part, calls, cuts[i], cuts[i + 1]);
        parts.push_back(shape_engine::from_summary_json(part.to_summary_json()));
      }
      std::mt19937 rng(7);
      return merge_randomly(parts, 0, parts.size(), rng);
    };
    const shape_engine whole = one({0, 5000});
    const std::string expected = inferred(whole);
    CHECK(expected.find("more than 4096 distinct values") != std::string::npos);
    CHECK(expected.find("more than 16 distinct shapes") != std::string::npos);
    CHECK(expected.find("more than 4096 distinct combinations") != std::string::npos);
    CHECK(inferred(one({0, 2500, 5000})) == expected);
    CHECK(inferred(one({0, 1, 100, 4000, 4999, 5000})) == expected);
    CHECK(one({0, 700, 5000}).to_summary_json() == whole.to_summary_json());
  }
  SECTION("parts recorded differently do not merge, and say why") {
    shape_engine a = engine(false), b({.store_n_calls = hookscope::unlimited, .keep_calls = false});
    b.begin_recording();
    std::mt19937 rng(3);
    const auto calls = random_calls(rng, 4, false);
    add(a, calls, 0, 2);
    add(b, calls, 2, 4);
    CHECK_THROWS_WITH(a.merge(b), Catch::Contains("the signatures differ: (input_ids, attention_mask, past_key_values, "
                                                  "pixel_values, use_cache) and none"));
    shape_engine c = engine(false);
    c.value_if_missing("pixel_values", value());
    add(c, calls, 2, 4);
    CHECK_THROWS_WITH(a.merge(c), Catch::Contains("value_if_missing differs"));
    shape_engine limited({.store_n_calls = 3});
    limited.begin_recording();
    add(limited, calls, 0, 1);
    CHECK_THROWS_WITH(a.merge(limited), Catch::Contains("only states recording every call merge"));
    shape_engine empty_limited({.store_n_calls = 3});  // even empty: it would silently start keeping every call
    CHECK_THROWS_WITH(empty_limited.merge(a), Catch::Contains("only states recording every call merge"));
    CHECK_THROWS_WITH(limited.to_summary_json(), Catch::Contains("only an engine recording every call"));
  }
  SECTION("an empty part changes nothing, whatever it was recorded with") {
    std::mt19937 rng(5);
    const auto calls = random_calls(rng, 6, false);
    shape_engine a = engine(false), all = engine(false);
    add(a, calls, 0, 6);
    add(all, calls, 0, 6);
    a.merge(shape_engine({.store_n_calls = hookscope::unlimited}));
    shape_engine other_signature({.store_n_calls = hookscope::unlimited});
    other_signature.set_parameters({{"x"}});
    a.merge(other_signature);  // no call: nothing to disagree about
    CHECK(inferred(a) == inferred(all));
    shape_engine empty({.store_n_calls = hookscope::unlimited, .keep_calls = false});
    empty.merge(a);
    CHECK(inferred(empty) == inferred(all));
  }
  SECTION("an engine merged into an empty one shares none of its kept calls: remove_inputs there leaves it as it was") {
    const hookscope::parameter_list parameters{{"x", hookscope::parameter_kind::positional_or_keyword, value(2)},
                                               {"y", hookscope::parameter_kind::positional_or_keyword, value(0)}};
    const hookscope::engine_options o{.store_n_calls = hookscope::unlimited};
    shape_engine later(o);
    later.set_parameters(parameters);
    later.begin_recording();
    later.add_call({{value::dict({{"k0", value(1)}}), value()}, {}});
    const std::string before = later.to_summary_json();
    std::string merged[2];
    for (std::string& out : merged) {
      shape_engine e(o);
      e.set_parameters(parameters);
      e.begin_recording();
      e.merge(later);
      e.remove_inputs({"x"});
      out = e.to_summary_json();
    }
    CHECK(later.to_summary_json() == before);
    CHECK(merged[0] == merged[1]);
  }
}

TEST_CASE("shape_engine::from_summary_json") {
  std::mt19937 rng(11);
  const auto calls = random_calls(rng, 5, false);
  shape_engine e = engine(false);
  add(e, calls, 0, 5);
  const std::string good = e.to_summary_json("Model::forward");

  SECTION("round trip: the same document, the same inference, the function name") {
    std::string function;
    const shape_engine back = shape_engine::from_summary_json(good, &function);
    CHECK(function == "Model::forward");
    CHECK(back.to_summary_json("Model::forward") == good);
    CHECK(inferred(back) == inferred(e));
    CHECK(good.rfind(R"({"format":"hookscope-shapes-summary","version":1,"function":"Model::forward",)", 0) == 0);
  }
  SECTION("a damaged document: format_error naming the JSON path") {
    const auto damaged = [&](const std::string& from, const std::string& to) {
      std::string text = good;
      const std::size_t at = text.find(from);
      REQUIRE(at != std::string::npos);
      return text.replace(at, from.size(), to);
    };
    using hookscope::format_error;
    CHECK_THROWS_AS(shape_engine::from_summary_json("{"), format_error);
    CHECK_THROWS_WITH(shape_engine::from_summary_json(R"({"function":"f","args":[],"kwargs":[]})"),
                      Catch::Contains("$.format: not a summary"));
    CHECK_THROWS_WITH(shape_engine::from_summary_json(damaged("\"version\":1", "\"version\":2")),
                      Catch::Contains("$.version: summary version 2, this hookscope reads version 1"));
    CHECK_THROWS_WITH(shape_engine::from_summary_json(damaged("\"best\":0", "\"best\":99")),
                      Catch::Contains("$.best: call 99 is not among the"));
    CHECK_THROWS_WITH(shape_engine::from_summary_json(damaged("\"rank\":2", "\"rank\":3")),
                      Catch::Contains("dims: 2 dims for a leaf of rank 3"));
    CHECK_THROWS_WITH(shape_engine::from_summary_json(damaged("\"sequence\":\"", "\"sequence\":\"x")),
                      Catch::Contains("sequence: expected 16 hexadecimal digits"));
    CHECK_THROWS_WITH(shape_engine::from_summary_json(damaged("\"present\":", "\"present\":-")),
                      Catch::Contains("present: expected a count"));
    CHECK_THROWS_WITH(shape_engine::from_summary_json(damaged("\"dtype\":\"int64\"", "\"dtype\":\"int65\"")),
                      Catch::Contains("unknown dtype \"int65\""));
  }
  SECTION("a leaf whose last tensor is not of its rank, without a rank conflict: format_error naming it") {
    // The placeholders index the last tensor's dims by the leaf's rank: a shorter one would be read past its end.
    const std::size_t at = good.find(R"("last_tensor":{"shape":[)");
    REQUIRE(at != std::string::npos);
    const std::size_t comma = good.find(',', at + 24);
    std::string text = good;
    text.erase(at + 24, comma + 1 - (at + 24));  // drops the first dim
    CHECK_THROWS_WITH(
        shape_engine::from_summary_json(text),
        Catch::Matches(
            R"(hookscope: \$\.arguments\[\d+\]\.leaves\[\d+\]\.last_tensor: \[[0-9,]*\] is not of rank \d+ and )"
            R"(no rank_conflict is given)"));
  }
  SECTION("property: random damage gives a format_error or an engine that infers, never a crash") {
    // Integers set to a neighbour, 0, a huge value or a negative one, one to four at a time (ranks, counts, sizes,
    // indices, call numbers): under the sanitizers, a read past an end fails the test.
    std::vector<std::pair<std::size_t, std::size_t>> numbers;  // (offset, length) of each integer in the text
    for (std::size_t i = 0; i < good.size();) {
      if (std::isdigit(static_cast<unsigned char>(good[i])) && good[i - 1] != '"' && !std::isalnum(good[i - 1])) {
        std::size_t j = i;
        while (j < good.size() && std::isdigit(static_cast<unsigned char>(good[j]))) ++j;
        numbers.emplace_back(i, j - i);
        i = j;
      } else {
        ++i;
      }
    }
    REQUIRE(numbers.size() > 50);
    std::mt19937 damage(27);
    std::size_t refused = 0, read = 0;
    for (int round = 0; round < 400; ++round) {
      std::string text = good;
      std::vector<std::pair<std::size_t, std::size_t>> picked;
      for (int k = std::uniform_int_distribution<int>(1, 4)(damage); k > 0; --k)
        picked.push_back(numbers[damage() % numbers.size()]);
      std::sort(picked.begin(), picked.end(), std::greater<>());  // from the end: earlier offsets stay valid
      picked.erase(std::unique(picked.begin(), picked.end()), picked.end());
      for (const auto& [offset, length] : picked) {
        const std::int64_t old = std::stoll(text.substr(offset, length));
        const std::int64_t choices[] = {old + 1, old - 1, 0, 1, -1, 9223372036854775807, old * 3 + 2};
        text.replace(offset, length, std::to_string(choices[damage() % std::size(choices)]));
      }
      INFO("round " << round);
      try {
        const shape_engine back = shape_engine::from_summary_json(text);
        (void)inferred(back);  // inference_error is an answer; a crash is not
        ++read;
      } catch (const hookscope::format_error&) {
        ++refused;
      }
    }
    CHECK(refused > 100);  // most damage contradicts another field
    CHECK(read > 0);       // some changes nothing the checks see (an opt count, a hash-free number)
  }
  SECTION("values as deep as records allow read back, 16 levels and at the limit") {
    for (const std::size_t lists : {std::size_t{8}, std::size_t{61}}) {  // 2 JSON levels per list, 2 per tensor
      shape_engine deep({.store_n_calls = hookscope::unlimited, .keep_calls = false});
      deep.begin_recording();
      for (const std::int64_t n : {3, 4, 5}) {
        value v = t({2, n});
        for (std::size_t i = 0; i < lists; ++i) v = value::list({v});
        deep.add_call(call_inputs{{v}, {{"k", v}}});
      }
      const std::string text = deep.to_summary_json("f");
      const shape_engine back = shape_engine::from_summary_json(text);
      CHECK(back.to_summary_json("f") == text);
      CHECK(back.infer_dynamic_shapes().to_json() == deep.infer_dynamic_shapes().to_json());
      CHECK(back.infer_arguments().arguments == deep.infer_arguments().arguments);
    }
  }
  SECTION("text that is not JSON: where the parser stopped, by line and column") {
    // A summary may span lines (jq .): the line counts, and the column is counted within it.
    CHECK_THROWS_WITH(shape_engine::from_summary_json("{"), "hookscope: not JSON: incomplete JSON at line 1, column 2");
    CHECK_THROWS_WITH(shape_engine::from_summary_json(good + "\n" + good),
                      "hookscope: not JSON: extra data at line 2, column 1");
    std::string pretty = good;
    const std::size_t version = pretty.find("\"version\":1,");
    REQUIRE(version != std::string::npos);
    pretty.insert(version, "\n\n  ");
    pretty.replace(pretty.find("\"version\":1,") + 11, 0, ",");  // "version":1,, on line 3
    CHECK_THROWS_WITH(shape_engine::from_summary_json(pretty),
                      "hookscope: not JSON: syntax error at line 3, column 15");
    CHECK_THROWS_WITH(shape_engine::from_summary_json(R"({"calls":NaN})"),
                      "hookscope: not JSON: syntax error at line 1, column 10");
  }
  SECTION("a byte-order mark before the document is skipped") {
    CHECK(shape_engine::from_summary_json("\xEF\xBB\xBF" + good).to_summary_json("Model::forward") == good);
  }
}
