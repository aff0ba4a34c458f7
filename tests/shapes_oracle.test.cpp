// The shape engine's oracle: random call streams of a decoder (optional inputs, a KV cache absent or empty at the
// prefill, an image at some calls, phases, a fitted relation, constants, independent dims, many distinct calls), and
// every output checked against what its consumers rely on, from the calls the stream generated rather than from the
// engine's own numbers:
//   - a listed relation holds in every call that gives its dims;
//   - every point (min, opt, max) of every profile satisfies every listed relation, and stays within the bound;
//   - min <= opt <= max; opt is the shapes of one observed call; every observed call fits in one profile;
//   - dims sharing a label are equal in every call giving both, and some call gives both; labels are identifiers;
//   - the trtexec and ONNX Runtime strings parse back, by their own grammar, to the profiles' numbers.
// The streams come from a fixed seed (CI runs 40); HOOKSCOPE_ORACLE_STREAMS=N runs N (docs/architecture.md, tests/).
#include "hookscope/shapes.hpp"

#include "shapes_scenarios.hpp"

#include <catch2/catch.hpp>

#include <algorithm>
#include <array>
#include <cstdint>
#include <cstdlib>
#include <map>
#include <optional>
#include <random>
#include <set>
#include <sstream>
#include <string>
#include <vector>

namespace {

using shape = std::vector<std::int64_t>;
using call_shapes = std::map<std::string, shape>;  // flattened tensor name -> shape, only the tensors a call gave

// The widening bound the oracle holds profiles to: no profile value beyond twice the largest value observed in the
// stream (of any dim), plus the largest constant a relation may carry. A profile fitted to coincidences (a max of
// 5.7 M from calls of at most 15 tokens) breaks it by orders of magnitude.
std::int64_t widening_bound(std::int64_t largest_observed) { return 2 * largest_observed + 64; }

struct stream {
  std::vector<call_shapes> calls;
  shape_engine engine{{.store_n_calls = hookscope::unlimited, .keep_calls = false}};
};

std::size_t budget() {
  const char* text = std::getenv("HOOKSCOPE_ORACLE_STREAMS");
  return text ? static_cast<std::size_t>(std::strtoul(text, nullptr, 10)) : 40;
}

// One generate()-like stream. Every choice is the generator's: the oracle knows the true shapes of every call.
stream generate(std::mt19937_64& rng, std::size_t many_calls) {
  using shapes_test::ids;
  using shapes_test::param;
  using shapes_test::t;
  const auto pick = [&](std::int64_t lo, std::int64_t hi) {
    return std::uniform_int_distribution<std::int64_t>(lo, hi)(rng);
  };
  const auto chance = [&](double p) { return std::bernoulli_distribution(p)(rng); };
  stream s;
  s.engine.set_parameters({param("input_ids"), param("attention_mask"), param("past_key_values", value()),
                           param("pixel-values", value()), param("position_ids", value()), param("extra", value()),
                           param("scaled", value())});
  s.engine.begin_recording();
  const bool empty_cache = chance(0.5);  // the prefill gets an empty cache (past 0) rather than none
  const bool image_at_prefill = chance(0.6);
  const bool with_scaled = chance(0.4);
  const std::int64_t heads = pick(1, 4);
  const std::int64_t generations = many_calls ? 1 : pick(1, 4);
  // Every parameter some call names must be named by one call (rule B1): the first call gives every optional input;
  // without an empty cache at the prefill, the cache's value_if_missing is what the prefill passes.
  const shape missing_cache{1, heads, 0, 8};
  if (!empty_cache) {
    s.engine.value_if_missing(std::string("past_key_values"), value::tuple({t(missing_cache), t(missing_cache)}));
  }
  const auto add = [&](std::int64_t batch, std::int64_t seq, std::int64_t past, bool prefill) {
    const bool first = s.calls.empty();
    call_shapes c;
    value_fields kw;
    const auto give = [&](const std::string& name, shape sh, dtype type = dtype::float32) {
      c[name] = sh;
      return t(std::move(sh), type);
    };
    kw.emplace_back("input_ids", give("input_ids", {batch, seq}, dtype::int64));
    kw.emplace_back("attention_mask", give("attention_mask", {batch, past + seq}, dtype::int64));
    if (!prefill || empty_cache) {
      kw.emplace_back("past_key_values", value::tuple({give("past_key_values.0", {batch, heads, past, 8}),
                                                       give("past_key_values.1", {batch, heads, past, 8})}));
    } else {  // what the model receives: the value_if_missing
      c["past_key_values.0"] = c["past_key_values.1"] = missing_cache;
    }
    if (image_at_prefill ? prefill : first || chance(0.3)) {
      kw.emplace_back("pixel-values", give("pixel-values", {batch, 3, 16, 16}));
    }
    if (first || chance(0.5)) kw.emplace_back("position_ids", give("position_ids", {batch, seq}, dtype::int64));
    // Independent of everything: whatever its values, it shares no label and takes part in no relation.
    if (first || chance(0.5)) kw.emplace_back("extra", give("extra", {pick(1, 6), pick(1, 40)}));
    if (with_scaled) kw.emplace_back("scaled", give("scaled", {batch, 2 * seq + 1}));
    s.calls.push_back(c);
    s.engine.add_call(shapes_test::named(std::move(kw)));
  };
  if (many_calls) {  // distinct calls beyond what the engine keeps for relations
    for (std::size_t i = 0; i < many_calls; ++i) add(pick(1, 8), pick(1, 512), pick(1, 512), i == 0);
    return s;
  }
  for (std::int64_t g = 0; g < generations; ++g) {
    const std::int64_t batch = pick(1, 4);
    const std::int64_t prompt = pick(1, 40);
    add(batch, prompt, 0, true);
    std::int64_t past = prompt;
    for (std::int64_t step = pick(0, 5); step > 0; --step) {
      add(batch, 1, past, false);
      past += 1;
    }
  }
  return s;
}

std::optional<std::int64_t> value_in(const call_shapes& c, const std::string& input, std::size_t dim) {
  const auto it = c.find(input);
  if (it == c.end() || it->second.size() <= dim) return std::nullopt;
  return it->second[dim];
}

std::int64_t largest_observed(const stream& s) {
  std::int64_t out = 0;
  for (const call_shapes& c : s.calls) {
    for (const auto& [name, sh] : c) {
      for (const std::int64_t v : sh) out = std::max(out, v);
    }
  }
  return out;
}

void check_relations_hold_in_every_call(const stream& s, const hookscope::dynamic_shapes& ds) {
  for (const hookscope::dim_relation& r : ds.relations()) {
    for (std::size_t i = 0; i < s.calls.size(); ++i) {
      const auto target = value_in(s.calls[i], r.target.input, r.target.dim);
      std::optional<std::int64_t> rhs = r.c;
      for (std::size_t k = 0; k < r.terms.size(); ++k) {
        const auto v = value_in(s.calls[i], r.terms[k].input, r.terms[k].dim);
        rhs = v && rhs ? std::optional<std::int64_t>(*rhs + (k == 0 ? r.k : 1) * *v) : std::nullopt;
      }
      if (!target || !rhs) continue;
      INFO("relation " << r.text << ", call " << i);
      CHECK(*target == *rhs);
    }
  }
}

using range = hookscope::tensorrt_profile::shape_range;

const range* find_range(const hookscope::tensorrt_profile& p, const std::string& input) {
  for (const range& r : p.shapes) {
    if (r.input == input) return &r;
  }
  return nullptr;
}

void check_profiles(const stream& s, const hookscope::dynamic_shapes& ds) {
  const std::int64_t bound = widening_bound(largest_observed(s));
  REQUIRE_FALSE(ds.tensorrt_profiles().empty());
  for (const hookscope::tensorrt_profile& p : ds.tensorrt_profiles()) {
    INFO("profile " << p.phase);
    for (const range& r : p.shapes) {
      INFO(r.input);
      REQUIRE(r.min.size() == r.opt.size());
      REQUIRE(r.max.size() == r.opt.size());
      for (std::size_t d = 0; d < r.opt.size(); ++d) {
        CHECK(0 <= r.min[d]);
        CHECK(r.min[d] <= r.opt[d]);
        CHECK(r.opt[d] <= r.max[d]);
        CHECK(r.max[d] <= bound);
      }
    }
    for (auto point : {&range::min, &range::opt, &range::max}) {
      for (const hookscope::dim_relation& rel : ds.relations()) {
        const auto v = [&](const hookscope::dim_relation::dim_ref& d) {
          const range* r = find_range(p, d.input);
          REQUIRE(r);
          return (r->*point).at(d.dim);
        };
        std::int64_t rhs = rel.k * v(rel.terms[0]) + rel.c;
        if (rel.terms.size() > 1) rhs += v(rel.terms[1]);
        INFO("relation " << rel.text);
        CHECK(v(rel.target) == rhs);
      }
    }
    // opt: the shapes of one observed call (the inputs it lacks hold placeholders).
    const bool opt_observed = std::any_of(s.calls.begin(), s.calls.end(), [&](const call_shapes& c) {
      return std::all_of(c.begin(), c.end(), [&](const auto& entry) {
        const range* r = find_range(p, entry.first);
        return !r || r->opt == entry.second;
      });
    });
    CHECK(opt_observed);
  }
  // Every observed call runs in some profile: an engine built from them accepts every shape the program used.
  for (std::size_t i = 0; i < s.calls.size(); ++i) {
    const bool fits = std::any_of(ds.tensorrt_profiles().begin(), ds.tensorrt_profiles().end(), [&](const auto& p) {
      return std::all_of(s.calls[i].begin(), s.calls[i].end(), [&](const auto& entry) {
        const range* r = find_range(p, entry.first);
        if (!r) return true;
        for (std::size_t d = 0; d < entry.second.size(); ++d) {
          if (entry.second[d] < r->min[d] || entry.second[d] > r->max[d]) return false;
        }
        return true;
      });
    });
    INFO("call " << i);
    CHECK(fits);
  }
}

void check_labels(const stream& s, const hookscope::dynamic_shapes& ds) {
  struct named_dim {
    std::string input;
    std::size_t dim;
  };
  std::map<std::string, std::vector<named_dim>> by_label;
  for (const hookscope::tensor_input& t : ds.inputs()) {
    for (const hookscope::dynamic_dim& d : t.dynamic_dims) {
      INFO(t.name << " dim " << d.dim << ": " << d.label);
      CHECK(hookscope::is_dim_label(d.label));
      CHECK(hookscope::is_dim_label(d.shared_name));
      by_label[d.label].push_back({t.name, d.dim});
    }
  }
  // Equal in every call giving two of them; each given with another of its label in some call (absent is not
  // different: two of them may never be given together).
  for (const auto& [label, dims] : by_label) {
    for (std::size_t a = 0; a < dims.size() && dims.size() > 1; ++a) {
      bool together = false;
      for (std::size_t b = 0; b < dims.size(); ++b) {
        if (b == a) continue;
        for (std::size_t i = 0; i < s.calls.size(); ++i) {
          const auto x = value_in(s.calls[i], dims[a].input, dims[a].dim);
          const auto y = value_in(s.calls[i], dims[b].input, dims[b].dim);
          if (!x || !y) continue;
          together = true;
          INFO(label << ": " << dims[a].input << " dim " << dims[a].dim << " and " << dims[b].input << " dim "
                     << dims[b].dim << " in call " << i);
          CHECK(*x == *y);
        }
      }
      INFO(label << " is shared by " << dims[a].input << ", never given with another of its dims");
      CHECK(together);
    }
  }
}

// trtexec's grammar: `--profile=N` starts profile N; `--minShapes=` / `--optShapes=` / `--maxShapes=` take
// `name:AxBxC` entries joined by `,` (the name ends at the last `:`). Without `--profile`, a repeated option starts
// the next profile.
using parsed_profile = std::map<std::string, std::array<shape, 3>>;

shape parse_dims(const std::string& text) {
  shape out;
  std::stringstream in(text);
  std::string item;
  while (std::getline(in, item, 'x')) out.push_back(std::stoll(item));
  return out;
}

void parse_entries(const std::string& list, std::size_t which, std::vector<parsed_profile>& profiles,
                   bool repeated_names_start_profiles) {
  std::stringstream in(list);
  std::string entry;
  std::map<std::string, std::size_t> seen;
  while (std::getline(in, entry, ',')) {
    const std::size_t colon = entry.rfind(':');
    REQUIRE(colon != std::string::npos);
    const std::string name = entry.substr(0, colon);
    const std::size_t index = repeated_names_start_profiles ? seen[name]++ : profiles.size() - 1;
    if (profiles.size() <= index) profiles.resize(index + 1);
    profiles[index][name][which] = parse_dims(entry.substr(colon + 1));
  }
}

std::vector<parsed_profile> parse_trtexec(const std::string& line) {
  std::vector<parsed_profile> out;
  std::stringstream in(line);
  std::string token;
  std::array<bool, 3> given{};
  const char* options[] = {"--minShapes=", "--optShapes=", "--maxShapes="};
  while (in >> token) {
    if (token.rfind("--profile=", 0) == 0) {
      REQUIRE(std::stoul(token.substr(10)) == out.size());
      out.emplace_back();
      given = {};
      continue;
    }
    bool known = false;
    for (std::size_t w = 0; w < 3; ++w) {
      if (token.rfind(options[w], 0) != 0) continue;
      known = true;
      if (out.empty() || given[w]) out.emplace_back(), given = {};
      given[w] = true;
      parse_entries(token.substr(std::string(options[w]).size()), w, out, false);
    }
    INFO(token);
    CHECK(known);
  }
  return out;
}

// ONNX Runtime's TensorRT options: `trt_profile_{min,opt,max}_shapes=` lines; several profiles repeat each name, the
// k-th occurrence of a name belonging to profile k.
std::vector<parsed_profile> parse_ort(const std::string& text) {
  std::vector<parsed_profile> out;
  std::stringstream in(text);
  std::string line;
  const char* options[] = {"trt_profile_min_shapes=", "trt_profile_opt_shapes=", "trt_profile_max_shapes="};
  while (std::getline(in, line)) {
    for (std::size_t w = 0; w < 3; ++w) {
      if (line.rfind(options[w], 0) == 0) parse_entries(line.substr(std::string(options[w]).size()), w, out, true);
    }
  }
  return out;
}

void check_parsed(const std::vector<parsed_profile>& parsed, const hookscope::dynamic_shapes& ds) {
  REQUIRE(parsed.size() == ds.tensorrt_profiles().size());
  for (std::size_t p = 0; p < parsed.size(); ++p) {
    const hookscope::tensorrt_profile& profile = ds.tensorrt_profiles()[p];
    CHECK(parsed[p].size() == profile.shapes.size());
    for (const range& r : profile.shapes) {
      INFO("profile " << p << ", " << r.input);
      REQUIRE(parsed[p].count(r.input) == 1);
      CHECK(parsed[p].at(r.input)[0] == r.min);
      CHECK(parsed[p].at(r.input)[1] == r.opt);
      CHECK(parsed[p].at(r.input)[2] == r.max);
    }
  }
}

void check_all(const stream& s, bool phases) {
  const auto ds = s.engine.infer_dynamic_shapes({.dim_names = true, .profile_phases = phases});
  check_relations_hold_in_every_call(s, ds);
  check_profiles(s, ds);
  check_labels(s, ds);
  check_parsed(parse_trtexec(ds.to_trtexec()), ds);
  check_parsed(parse_ort(ds.to_ort_options()), ds);
}

}  // namespace

TEST_CASE("shape_engine oracle: random decoder streams") {
  std::mt19937_64 rng(20261203);
  const std::size_t n = budget();
  for (std::size_t i = 0; i < n; ++i) {
    const std::uint64_t state = rng();
    std::mt19937_64 one(state);
    const stream s = generate(one, 0);
    INFO("stream " << i << " (seed " << state << "), " << s.calls.size() << " calls");
    check_all(s, false);
    check_all(s, true);
  }
}

TEST_CASE("shape_engine oracle: more distinct calls than the engine keeps for relations") {
  std::mt19937_64 rng(4097);
  const stream s = generate(rng, 5000);
  check_all(s, true);
}
