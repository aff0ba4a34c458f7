// Tests of the dynamic_shapes exporters (hookscope/shapes.hpp: torch.export JSON, trtexec, ONNX Runtime, the
// report) on the scenarios of shapes_scenarios.hpp; every expected text worked out by hand.
#include "hookscope/shapes.hpp"

#include <catch2/catch.hpp>

#include "shapes_scenarios.hpp"

#include <boost/json.hpp>  // compiled into the library (src/boost_json.cpp)

#include <algorithm>
#include <cstdint>
#include <map>
#include <optional>
#include <random>
#include <set>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

using namespace shapes_test;

TEST_CASE("dynamic_shapes exporters") {
  const auto ds = llm().infer_dynamic_shapes({.batch_dimension_for = {"input_ids"}});
  SECTION("to_trtexec: one consistent profile, static dims as seen") {
    // opt is an observed call: per-dimension modes (1x1, mask 7, cache 7) would be no call at all (7 != 1 + 7).
    // Relations over the calls as the model receives them (call 0's absent cache as the placeholder infer_arguments
    // gives, past 0): attention_mask dim 1 (7,8,9) = input_ids dim 1 (7,1,1) + cache dim 2 (0,7,8), three calls, three
    // distinct points. The profile is solved: the free dims take their extremes over those calls (ids 1..7, cache
    // 0..8, the prefill's placeholder included, so the prefill as the model runs it is inside the profile) and the
    // mask is computed from them: 1 + 0 = 1 and 7 + 8 = 15 (widened from the observed 7..9). opt among the calls
    // giving every input (1 and 2), each once; modes ids 1, mask 7, cache 7: call 1 agrees with three dims (ids, both
    // caches), call 2 with one.
    CHECK(
        ds.to_trtexec() ==
        "--minShapes=input_ids:1x1,attention_mask:1x1,past_key_values.key_0:1x2x0x4,past_key_values.value_0:1x2x0x4"
        " --optShapes=input_ids:1x1,attention_mask:1x8,past_key_values.key_0:1x2x7x4,past_key_values.value_0:1x2x7x4"
        " --maxShapes=input_ids:1x7,attention_mask:1x15,past_key_values.key_0:1x2x8x4,past_key_values.value_0:1x2x8x4");
    REQUIRE(ds.relations().size() == 1);
    CHECK(ds.relations()[0].text == "total_sequence_length = sequence_length + past_sequence_length");
    CHECK(ds.relations()[0].target.input == "attention_mask");
    CHECK(ds.relations()[0].terms.size() == 2);
    CHECK_FALSE(ds.relations()[0].torch_derived);
    REQUIRE(ds.tensorrt_profiles().size() == 1);
    CHECK(ds.tensorrt_profiles()[0].phase == "all calls");
    CHECK(ds.tensorrt_profiles()[0].calls == 3);
    CHECK(ds.tensorrt_profiles()[0].widened.size() == 2);
  }
  SECTION("to_ort_options") {
    shape_engine e;
    e.add_call(positional({t({1, 3}), t({})}));
    e.add_call(positional({t({1, 5}), t({})}));
    e.add_call(positional({t({1, 5}), t({})}));
    // The rank-0 tensor has no spelling in the profile syntax: left out.
    CHECK(e.infer_dynamic_shapes().to_ort_options() ==
          "trt_profile_min_shapes=arg0:1x3\ntrt_profile_opt_shapes=arg0:1x5\ntrt_profile_max_shapes=arg0:1x5\n");
    CHECK(e.infer_dynamic_shapes().to_trtexec() == "--minShapes=arg0:1x3 --optShapes=arg0:1x5 --maxShapes=arg0:1x5");
  }
  SECTION("report") {
    shape_engine e;
    e.set_parameters({param("x")});
    e.add_call(positional({t({1, 3})}));
    e.add_call(positional({t({1, 5})}));
    // Name column: max(5, 1) + 2 = 7 wide; dtype column 10 wide.
    CHECK(e.infer_dynamic_shapes({.batch_dimension_for_all = true}).report() ==
          "input  dtype     shapes seen\n"
          "x      float32   1x3, 1x5\n"
          "       dim 0: DYNAMIC (shared x_dim_0) min 1 opt 1 max 1, forced\n"
          "       dim 1: DYNAMIC (shared x_dim_1) min 3 opt 3 max 5\n"
          "warnings:\n"
          "- hookscope: dimension 0 of 'x' (DYNAMIC) is dynamic but was only seen as 1: torch.export specialises "
          "sizes 0 and 1, so record a call where it is at least 2\n");
  }
  SECTION("no tensor at all") {
    shape_engine e;
    e.add_call(positional({value(3)}));
    const auto none = e.infer_dynamic_shapes();
    CHECK(none.to_json() == "[null]");
    CHECK(none.to_trtexec().empty());
    CHECK(none.report() == "input  dtype     shapes seen\n(no tensor input)\n");
  }
}

//=== the consumers' grammars, as their sources read them (not ours) ===//

namespace {

using dims = std::vector<std::int64_t>;
struct range3 {
  dims min, opt, max;
  friend bool operator==(const range3&, const range3&) = default;
};
using parsed_profile = std::map<std::string, range3>;

// TensorRT's samples/common/sampleUtils.cpp splitToStringVec: pieces between separators, none after a trailing one,
// none at all for "".
std::vector<std::string> trt_split(const std::string& s, char separator) {
  std::vector<std::string> out;
  for (std::size_t start = 0; start < s.length();) {
    std::size_t at = s.find(separator, start);
    if (at == std::string::npos) at = s.length();
    out.push_back(s.substr(start, at - start));
    start = at + 1;
  }
  return out;
}

// trtexec's dims (sampleOptions.cpp stringToValue<std::vector<int64_t>>): "scalar" is the empty shape, else pieces
// split at 'x', each read by std::stoi (a 32-bit int: std::out_of_range above 2^31 - 1).
dims trtexec_dims(const std::string& v) {
  if (v == "scalar") return {};
  dims out;
  for (const std::string& d : trt_split(v, 'x')) out.push_back(std::stoi(d));
  return out;
}

// One entry of a shape list (sampleOptions.cpp splitNameAndValue + removeSingleQuotationMarks): with `'`s, exactly
// two, the name is the text before the second one without the quotes, and the value follows the ':' after it;
// without, the name is everything before the last ':'.
std::pair<std::string, dims> trtexec_entry(const std::string& s) {
  const auto quoted = trt_split(s, '\'');
  if (quoted.size() != 1) {
    if (quoted.size() != 3) throw std::invalid_argument("Found invalid number of 's when parsing " + s);
    return {quoted[0] + quoted[1], trtexec_dims(quoted[2].substr(1))};
  }
  const auto parts = trt_split(s, ':');
  std::string name = parts[0];
  for (std::size_t i = 1; i + 1 < parts.size(); ++i) name += ":" + parts[i];
  return {name, trtexec_dims(parts.back())};
}

void trtexec_shapes(parsed_profile& p, const std::string& list, dims range3::*which) {
  for (const std::string& entry : trt_split(list, ',')) {
    auto [name, d] = trtexec_entry(entry);
    p[name].*which = std::move(d);
  }
}

// trtexec's profiles (sampleOptions.cpp BuildOptions::parse and getOptimizationProfiles, TensorRT 10): each
// `--profile=N` takes the --minShapes/--optShapes/--maxShapes right behind it (one of each, in any order); without
// any `--profile` one triple is read; a triple left over is "Multiple --minShapes/--optShapes/--maxShapes without
// --profile are not allowed"; the indices must be 0..n-1, each once. Options are `--name=value`, split at the
// first '=', one per shell word. Our writer always writes all three of a triple; a missing one is refused here
// (trtexec would copy another one in its place).
std::vector<parsed_profile> parse_trtexec(const std::string& line) {
  struct option {
    std::string name, value;
    bool used = false;
  };
  std::vector<option> args;
  for (const std::string& word : trt_split(line, ' ')) {
    const auto eq = word.find('=');
    args.push_back({word.substr(0, eq), eq == std::string::npos ? "" : word.substr(eq + 1)});
  }
  const std::map<std::string, dims range3::*> triple = {
      {"--minShapes", &range3::min}, {"--optShapes", &range3::opt}, {"--maxShapes", &range3::max}};
  std::vector<std::optional<parsed_profile>> numbered;
  for (std::size_t pos = 0; pos < args.size(); ++pos) {
    if (args[pos].name != "--profile") continue;
    args[pos].used = true;
    const auto index = static_cast<std::size_t>(std::stoi(args[pos].value));
    parsed_profile p;
    std::set<std::string> seen;
    for (std::size_t k = pos + 1; k < args.size() && k <= pos + 3; ++k) {
      const auto it = triple.find(args[k].name);
      if (it == triple.end() || !seen.insert(args[k].name).second) break;
      args[k].used = true;
      trtexec_shapes(p, args[k].value, it->second);
    }
    if (seen.size() != 3) throw std::invalid_argument("a --profile without its three shape options");
    if (numbered.size() <= index) numbered.resize(index + 1);
    if (numbered[index]) throw std::invalid_argument("Optimization profile index cannot be the same.");
    numbered[index] = std::move(p);
  }
  std::vector<parsed_profile> out;
  for (std::size_t i = 0; i < numbered.size(); ++i) {
    if (!numbered[i])
      throw std::invalid_argument("Found invalid or missing shape spec at profile index " + std::to_string(i));
    out.push_back(*numbered[i]);
  }
  if (out.empty()) {
    parsed_profile p;
    std::set<std::string> seen;
    for (option& a : args) {
      const auto it = triple.find(a.name);
      if (it == triple.end() || a.used || !seen.insert(a.name).second) continue;
      a.used = true;
      trtexec_shapes(p, a.value, it->second);
    }
    if (seen.size() != 3 && !seen.empty()) throw std::invalid_argument("a triple without all three shape options");
    if (!seen.empty()) out.push_back(std::move(p));
  }
  for (const option& a : args) {
    if (!a.used && triple.count(a.name)) {
      throw std::invalid_argument("Multiple --minShapes/--optShapes/--maxShapes without --profile are not allowed. ");
    }
  }
  return out;
}

// ONNX Runtime's TensorRT provider (onnxruntime/core/providers/tensorrt/tensorrt_execution_provider_utils.h,
// ParseProfileShapes and MakeInputNameShapePair): the value split at ','; in each entry the name runs to the first
// ':', the shape to the next ':', its dims split at 'x' and read by std::stoi; an empty name or shape is a wrong
// format. An input named again is its shape in the next profile; min, opt and max must name the same inputs the same
// number of times. Lines are `key=value`, split at the first '=' (how docs/export_formats.md tells to read them).
std::vector<parsed_profile> parse_ort(const std::string& text) {
  std::map<std::string, std::map<std::string, std::vector<dims>>> by_key;
  for (const std::string& line : trt_split(text, '\n')) {
    const auto eq = line.find('=');
    auto& shapes = by_key[line.substr(0, eq)];
    for (const std::string& entry : trt_split(line.substr(eq + 1), ',')) {
      std::istringstream in(entry);
      std::string name, shape, d;
      std::getline(in, name, ':');
      std::getline(in, shape, ':');
      std::istringstream shape_in(shape);
      dims v;
      while (std::getline(shape_in, d, 'x')) v.push_back(std::stoi(d));
      if (name.empty() || v.empty()) throw std::invalid_argument("wrong format: " + entry);
      shapes[name].push_back(v);
    }
  }
  const auto& min = by_key.at("trt_profile_min_shapes");
  const auto& opt = by_key.at("trt_profile_opt_shapes");
  const auto& max = by_key.at("trt_profile_max_shapes");
  std::vector<parsed_profile> out;
  for (const auto& [name, shapes] : min) {
    if (!opt.count(name) || !max.count(name) || opt.at(name).size() != shapes.size() ||
        max.at(name).size() != shapes.size()) {
      throw std::invalid_argument("min/opt/max disagree on " + name);
    }
    if (out.size() < shapes.size()) out.resize(shapes.size());
    for (std::size_t p = 0; p < shapes.size(); ++p) out[p][name] = {shapes[p], opt.at(name)[p], max.at(name)[p]};
  }
  if (opt.size() != min.size() || max.size() != min.size()) throw std::invalid_argument("min/opt/max name others");
  return out;
}

std::vector<parsed_profile> profiles_of(const hookscope::dynamic_shapes& ds) {
  std::vector<parsed_profile> out;
  for (const auto& p : ds.tensorrt_profiles()) {
    parsed_profile one;
    for (const auto& r : p.shapes) one[r.input] = {r.min, r.opt, r.max};
    if (!one.empty()) out.push_back(std::move(one));
  }
  return out;
}

//--- Torch-TensorRT ---//

// torch_tensorrt.Input's checks, as read in py/torch_tensorrt/_Input.py (pytorch/TensorRT main at d7f2062, the same
// _init_from_profiles as the torch_tensorrt 2.14.0 wheel's): either all three of min_shape/opt_shape/max_shape, or
// `profiles` alone, a non-empty list of dicts with all three; each a list of ints; in a profile the three of one
// length and every profile of one rank; every min >= 1 (`profiles` raises, the single range warns: we hold both to
// it); min <= opt <= max element-wise. dtype: a name torch has (torch_tensorrt's dtype._from takes torch.dtype);
// name: a non-empty str (its default "" means unnamed). Returns the input's ranges, one per profile.
std::vector<range3> torch_trt_input(const boost::json::object& o) {
  const auto shape = [](const boost::json::value& v) {
    dims out;
    for (const auto& d : v.as_array()) out.push_back(d.as_int64());
    return out;
  };
  REQUIRE(o.at("name").as_string().size() > 0);
  const std::set<std::string> torch_dtypes = {"float64", "float32", "float16", "bfloat16", "int64",
                                              "int32",   "int16",   "int8",    "uint8",    "bool"};
  REQUIRE(torch_dtypes.count(std::string(o.at("dtype").as_string())) == 1);
  std::vector<range3> ranges;
  if (o.contains("profiles")) {
    REQUIRE_FALSE((o.contains("min_shape") || o.contains("opt_shape") || o.contains("max_shape")));
    REQUIRE(o.at("profiles").as_array().size() > 0);
    for (const auto& p : o.at("profiles").as_array()) {
      const auto& po = p.as_object();
      ranges.push_back({shape(po.at("min_shape")), shape(po.at("opt_shape")), shape(po.at("max_shape"))});
    }
  } else {
    ranges.push_back({shape(o.at("min_shape")), shape(o.at("opt_shape")), shape(o.at("max_shape"))});
  }
  const std::size_t rank = ranges[0].min.size();
  for (const range3& r : ranges) {
    REQUIRE(r.min.size() == rank);
    REQUIRE(r.opt.size() == rank);
    REQUIRE(r.max.size() == rank);
    for (std::size_t d = 0; d < rank; ++d) {
      INFO(o.at("name").as_string().c_str() << " dim " << d);
      CHECK(r.min[d] >= 1);
      CHECK(r.min[d] <= r.opt[d]);
      CHECK(r.opt[d] <= r.max[d]);
    }
  }
  return ranges;
}

// Checks the JSON by Torch-TensorRT's rules and against the profiles: one object per tensor input in inputs()
// order, the profiles' numbers with every 0 raised to 1, one warning per raised min.
void check_torch_tensorrt(const hookscope::dynamic_shapes& ds) {
  const std::string text = ds.to_torch_tensorrt();
  const auto inputs = boost::json::parse(text).as_array();
  REQUIRE(inputs.size() == ds.inputs().size());
  std::size_t raised = 0;
  for (std::size_t i = 0; i < inputs.size(); ++i) {
    const auto ranges = torch_trt_input(inputs[i].as_object());
    const auto& t = ds.inputs()[i];
    CHECK(inputs[i].as_object().at("name").as_string() == t.name.c_str());
    CHECK(inputs[i].as_object().at("dtype").as_string() == std::string(hookscope::to_string(t.dtype)).c_str());
    REQUIRE(ranges.size() == std::max<std::size_t>(1, ds.tensorrt_profiles().size()));
    for (std::size_t p = 0; p < ds.tensorrt_profiles().size(); ++p) {
      range3 expected{dims(t.rank), dims(t.rank), dims(t.rank)};
      for (const auto& r : ds.tensorrt_profiles()[p].shapes) {
        if (r.input == t.name) expected = {r.min, r.opt, r.max};
      }
      for (std::size_t d = 0; d < expected.min.size(); ++d) {
        raised += expected.min[d] < 1;
        for (dims* v : {&expected.min, &expected.opt, &expected.max}) (*v)[d] = std::max<std::int64_t>((*v)[d], 1);
      }
      CHECK(ranges[p] == expected);
    }
  }
  CHECK(ds.torch_tensorrt_warnings().size() == raised);
}

}  // namespace

namespace {

value kv_cache(std::int64_t batch, std::int64_t past) {
  return value::structure("DynamicCache", {{"key_0", t({batch, 2, past, 4}, dtype::float16)},
                                           {"value_0", t({batch, 2, past, 4}, dtype::float16)}});
}

// A decoder's generate() calls, recorded by name: per generation a prefill (sequence s > 1, no cache: the engine
// fills an empty one, past 0), then decode steps (sequence 1, the cache of the tokens so far); in half the streams
// pixel_values, an optional input, at some prefills only (value_if_missing gives the others a batch of 0 images,
// as for a vision-language model: the engine wants one call naming every input).
shape_engine generations(std::mt19937& rng, std::size_t store_n_calls) {
  shape_engine e({.store_n_calls = store_n_calls});
  e.set_parameters({param("input_ids"), param("attention_mask", value()), param("past_key_values", value()),
                    param("pixel_values", value())});
  const auto pick = [&](int lo, int hi) { return std::uniform_int_distribution<std::int64_t>(lo, hi)(rng); };
  const bool vision = pick(0, 1) == 1;
  if (vision) e.value_if_missing("pixel_values", t({0, 3, 8, 8}));
  const auto n = pick(1, 4);
  for (std::int64_t g = 0; g < n; ++g) {
    const std::int64_t b = pick(1, 3), s = pick(2, 12);
    value_fields prefill = {{"input_ids", ids({b, s})}, {"attention_mask", ids({b, s})}};
    if (vision && pick(0, 1)) prefill.emplace_back("pixel_values", t({b, 3, 8, 8}));
    e.add_call(named(std::move(prefill)));
    for (std::int64_t j = 0, steps = pick(0, 5); j < steps; ++j) {
      e.add_call(named({{"input_ids", ids({b, 1})},
                        {"attention_mask", ids({b, s + j + 1})},
                        {"past_key_values", kv_cache(b, s + j)}}));
    }
  }
  return e;
}

// Two prefills (5 and 7 tokens) and their decode steps: `--profiles auto` splits them in two phases.
shape_engine two_phases() {
  shape_engine e({.store_n_calls = hookscope::unlimited});
  e.set_parameters({param("input_ids"), param("attention_mask", value()), param("past_key_values", value())});
  for (std::int64_t s : {5, 7}) {
    e.add_call(named({{"input_ids", ids({1, s})}, {"attention_mask", ids({1, s})}}));
    for (std::int64_t j = 0; j < 2; ++j) {
      e.add_call(named({{"input_ids", ids({1, 1})},
                        {"attention_mask", ids({1, s + j + 1})},
                        {"past_key_values", kv_cache(1, s + j)}}));
    }
  }
  return e;
}

std::string without_profile_options(const std::string& line) {
  std::string out;
  for (const std::string& word : trt_split(line, ' ')) {
    if (word.rfind("--profile=", 0) == 0) continue;
    out += (out.empty() ? "" : " ") + word;
  }
  return out;
}

}  // namespace

TEST_CASE("dynamic_shapes::to_trtexec") {
  SECTION("one profile: the bare triple, which every trtexec reads") {
    const auto ds = llm().infer_dynamic_shapes();
    REQUIRE(ds.tensorrt_profiles().size() == 1);
    CHECK(ds.to_trtexec().find("--profile") == std::string::npos);
    CHECK(parse_trtexec(ds.to_trtexec()) == profiles_of(ds));
  }
  SECTION("several profiles: --profile=N before each triple, parsed back by trtexec's rules") {
    const auto ds = two_phases().infer_dynamic_shapes({.profile_phases = true});
    REQUIRE(ds.tensorrt_profiles().size() == 2);
    const std::string line = ds.to_trtexec();
    CHECK(line.rfind("--profile=0 --minShapes=", 0) == 0);
    CHECK_THAT(line, Contains(" --profile=1 --minShapes="));
    CHECK(parse_trtexec(line) == profiles_of(ds));
    // The repeated bare triples TensorRT 10 refuses: the parser follows trtexec there too.
    CHECK_THROWS_WITH(parse_trtexec(without_profile_options(line)), Contains("without --profile are not allowed"));
  }
  SECTION("the phases' profiles, worked out by hand") {
    // Prefill (sequence_length > 1): ids and mask 5 or 7, the cache absent (filled with past 0). Decode: ids 1,
    // mask 6, 7 | 8, 9, past 5, 6 | 7, 8 (mask = ids + past).
    const auto ds = two_phases().infer_dynamic_shapes({.profile_phases = true});
    const auto parsed = parse_trtexec(ds.to_trtexec());
    REQUIRE(parsed.size() == 2);
    CHECK(parsed[0].at("input_ids").min == dims{1, 5});
    CHECK(parsed[0].at("input_ids").max == dims{1, 7});
    CHECK(parsed[0].at("past_key_values.key_0").max == dims{1, 2, 0, 4});
    CHECK(parsed[1].at("input_ids").max == dims{1, 1});
    CHECK(parsed[1].at("past_key_values.key_0").min == dims{1, 2, 5, 4});
    CHECK(parsed[1].at("past_key_values.key_0").max == dims{1, 2, 8, 4});
    CHECK(parsed[1].at("attention_mask").max == dims{1, 9});
  }
}

TEST_CASE("dynamic_shapes::to_ort_options") {
  SECTION("one profile, parsed back by ONNX Runtime's rules") {
    const auto ds = llm().infer_dynamic_shapes();
    CHECK(parse_ort(ds.to_ort_options()) == profiles_of(ds));
  }
  SECTION("several profiles: every input once per profile, parsed back") {
    const auto ds = two_phases().infer_dynamic_shapes({.profile_phases = true});
    REQUIRE(ds.tensorrt_profiles().size() == 2);
    CHECK(parse_ort(ds.to_ort_options()) == profiles_of(ds));
  }
}

TEST_CASE("dynamic_shapes::to_torch_tensorrt") {
  SECTION("one profile: min_shape/opt_shape/max_shape, worked out by hand") {
    shape_engine e;
    e.set_parameters({param("x"), param("n")});
    e.add_call(named({{"x", t({2, 3})}, {"n", t({}, dtype::int64)}}));
    e.add_call(named({{"x", t({2, 5})}, {"n", t({}, dtype::int64)}}));
    e.add_call(named({{"x", t({2, 5})}, {"n", t({}, dtype::int64)}}));
    const auto ds = e.infer_dynamic_shapes();
    // x: dim 1 3..5, opt the most frequent call (5); the rank-0 n has empty shapes (in no profile).
    CHECK(ds.to_torch_tensorrt() ==
          R"([{"name":"x","dtype":"float32","min_shape":[2,3],"opt_shape":[2,5],"max_shape":[2,5]},)"
          R"({"name":"n","dtype":"int64","min_shape":[],"opt_shape":[],"max_shape":[]}])");
    CHECK(ds.torch_tensorrt_warnings().empty());
    check_torch_tensorrt(ds);
  }
  SECTION("several profiles: profiles=[...] on every input, in the profiles' order") {
    const auto ds = two_phases().infer_dynamic_shapes({.profile_phases = true});
    const auto json = boost::json::parse(ds.to_torch_tensorrt()).as_array();
    REQUIRE(json.size() == 4);
    for (const auto& input : json) CHECK(input.as_object().at("profiles").as_array().size() == 2);
    check_torch_tensorrt(ds);
  }
  SECTION("an empty cache: min raised to 1, with a sentence per dimension") {
    // The prefill's cache is absent (past 0) in the prefill phase: Torch-TensorRT refuses min 0, so that profile
    // takes past 1 for the cache, and the warning says the prefill's empty cache is outside the engine's range.
    const auto ds = two_phases().infer_dynamic_shapes({.profile_phases = true});
    const auto json = boost::json::parse(ds.to_torch_tensorrt()).as_array();
    const auto& key = json[2].as_object();
    CHECK(key.at("name").as_string() == "past_key_values.key_0");
    CHECK(boost::json::serialize(key.at("profiles").as_array()[0]) ==
          R"({"min_shape":[1,2,1,4],"opt_shape":[1,2,1,4],"max_shape":[1,2,1,4]})");
    const auto warnings = ds.torch_tensorrt_warnings();
    REQUIRE(warnings.size() == 2);  // dim 2 of key_0 and of value_0, in the prefill's profile
    CHECK(warnings[0] ==
          "hookscope: torch-tensorrt: dimension 2 of 'past_key_values.key_0' has min 0 in profile 0 "
          "(sequence_length > 1); Torch-TensorRT wants every min >= 1, so it is raised to 1 and the calls with an "
          "empty 'past_key_values.key_0' are outside the engine's range: give them one masked position, or an engine "
          "of their own");
    check_torch_tensorrt(ds);
  }
  SECTION("no tensor at all: an empty list") {
    shape_engine e;
    e.add_call(positional({value(3)}));
    CHECK(e.infer_dynamic_shapes().to_torch_tensorrt() == "[]");
  }
}

TEST_CASE("TensorRT exporters on random call streams") {
  // Property: for random generate() streams (prefills without a cache, decode steps, an optional input, 1 to 4
  // generations, batch 1 to 3), one profile or one per phase, every exporter's text read back by its consumer's
  // rules gives the profiles' numbers, and the Torch-TensorRT inputs pass torch_tensorrt.Input's checks.
  // HOOKSCOPE_TEST_CASES raises the budget (default 200, seed fixed per case).
  std::size_t cases = 200;
  if (const char* n = std::getenv("HOOKSCOPE_TEST_CASES")) cases = std::stoul(n);
  std::size_t several = 0;
  for (std::uint32_t seed = 1; seed <= cases; ++seed) {
    std::mt19937 rng(seed);
    const bool phases = seed % 2 == 0;
    shape_engine e = generations(rng, seed % 3 == 0 ? 3 : hookscope::unlimited);
    INFO("seed " << seed << ", phases " << phases);
    const auto ds = e.infer_dynamic_shapes({.profile_phases = phases});
    several += ds.tensorrt_profiles().size() > 1;
    CHECK(parse_trtexec(ds.to_trtexec()) == profiles_of(ds));
    CHECK(parse_ort(ds.to_ort_options()) == profiles_of(ds));
    check_torch_tensorrt(ds);
  }
  CHECK(several > cases / 10);  // the streams do reach the several-profile form
}

namespace {

// One input named `key` (a keyword argument the engine is given without a signature), seen as {1, 3} and `last`.
hookscope::dynamic_shapes named_input(const std::string& key, std::vector<std::int64_t> last = {1, 5}) {
  shape_engine e;
  e.add_call(named({{key, t({1, 3})}}));
  e.add_call(named({{key, t(std::move(last))}}));
  return e.infer_dynamic_shapes();
}

}  // namespace

TEST_CASE("TensorRT exporters: hostile names and values") {
  SECTION("names the spec syntaxes split on, or cannot carry") {
    struct row {
      std::string name;
      const char* trtexec;  // nullptr: written and parsed back; else part of the error
      const char* ort;
    };
    const std::vector<row> rows = {
        {"a,b", "contains ','", "contains ','"},
        {"a:b", nullptr, "ONNX Runtime ends the name at the first ':'"},  // trtexec splits at the last ':'
        {"a b", "a space or a control character", "a space or a control character"},
        {"a\tb", "a space or a control character", "a space or a control character"},
        {"a\nb", "a space or a control character", "a space or a control character"},
        {"a'b", "contains a quote", "contains a quote"},
        {"a\"b", "contains a quote", "contains a quote"},
        {"axb", nullptr, nullptr},  // 'x' separates dims only after the name's ':'
        {"x2x3", nullptr, nullptr},
        {"Straße", nullptr, nullptr},
        {std::string("a\xff") + "b", "not UTF-8", "not UTF-8"},
        {"", "it is empty", "it is empty"},
        // Pasted unquoted into a shell, these expand, redirect or end the command; ONNX Runtime reads them as text.
        {"a$b", "contains '$', which a shell reads", nullptr},
        {"a;b", "contains ';', which a shell reads", nullptr},
        {"a|b", "contains '|', which a shell reads", "reads as key|value"},
        {"a&b", "contains '&', which a shell reads", nullptr},
        {"a`b", "contains '`', which a shell reads", nullptr},
        {"a\\b", "contains '\\', which a shell reads", nullptr},
        {"a*", "contains '*', which a shell reads", nullptr},
        {"a[0]", "contains '[', which a shell reads", nullptr},
        {"f(x)", "contains '(', which a shell reads", nullptr},
        {"a>b", "contains '>', which a shell reads", nullptr},
        {"a!b", "contains '!', which a shell reads", nullptr},
    };
    for (const row& r : rows) {
      INFO("name " << hookscope::to_json(value(r.name)));
      const auto ds = named_input(r.name);
      REQUIRE(ds.inputs().size() == 1);
      REQUIRE(ds.inputs()[0].name == r.name);
      if (r.trtexec) {
        CHECK_THROWS_WITH(ds.to_trtexec(), Contains(r.trtexec) && Contains("hookscope: the input name"));
      } else {
        CHECK(parse_trtexec(ds.to_trtexec()) == profiles_of(ds));
        CHECK(parse_trtexec(ds.to_trtexec()).at(0).count(r.name) == 1);
      }
      if (r.ort) {
        CHECK_THROWS_WITH(ds.to_ort_options(), Contains(r.ort) && Contains("hookscope: the input name"));
      } else {
        CHECK(parse_ort(ds.to_ort_options()) == profiles_of(ds));
      }
      if (r.name.empty()) {
        CHECK_THROWS_WITH(ds.to_torch_tensorrt(), Contains("an input with an empty name"));
      } else if (r.name.find('\xff') == std::string::npos) {
        check_torch_tensorrt(ds);  // JSON carries any text
      } else {
        CHECK_THROWS_WITH(ds.to_torch_tensorrt(), Contains("is not UTF-8"));
      }
    }
  }
  SECTION("two inputs whose paths flatten to one name: refused by every TensorRT syntax") {
    // {"a.0": t} beside {"a": [t]}: trtexec would keep one entry, ONNX Runtime read the second as another profile,
    // and each Torch-TensorRT Input took the last one's numbers.
    struct row {
      std::string key;    // a keyword argument holding a tensor directly
      std::string outer;  // a keyword argument whose nested tensor flattens to `key` too
      hookscope::value nested;
    };
    const std::vector<row> rows = {
        {"a.0", "a", value::list({t({3, 4})})},
        {"a.b.c", "a.b", value::dict({{"c", t({3, 4})}})},
    };
    for (const row& r : rows) {
      INFO("key " << r.key);
      shape_engine e;
      e.add_call(named({{r.key, t({1, 2})}, {r.outer, r.nested}}));
      e.add_call(named({{r.key, t({2, 2})}, {r.outer, r.nested}}));
      const auto ds = e.infer_dynamic_shapes();
      REQUIRE(ds.inputs().size() == 2);
      REQUIRE(ds.inputs()[1].name == r.key);
      const std::string named_twice = "are both named '" + r.key + "'";
      CHECK_THROWS_WITH(ds.to_trtexec(), Contains("hookscope: tensor inputs 0 and 1") && Contains(named_twice) &&
                                             Contains("trtexec cannot tell apart"));
      CHECK_THROWS_WITH(ds.to_ort_options(), Contains("hookscope: tensor inputs 0 and 1") && Contains(named_twice) &&
                                                 Contains("ONNX Runtime cannot tell apart"));
      CHECK_THROWS_WITH(ds.to_torch_tensorrt(), Contains("hookscope: tensor inputs 0 and 1") && Contains(named_twice) &&
                                                    Contains("Torch-TensorRT cannot tell apart"));
    }
  }
  SECTION("values: 0, the largest int trtexec reads, and beyond") {
    const auto zero = named_input("x", {0, 5});
    CHECK(zero.to_trtexec() == "--minShapes=x:0x3 --optShapes=x:1x3 --maxShapes=x:1x5");
    CHECK(parse_trtexec(zero.to_trtexec()) == profiles_of(zero));
    check_torch_tensorrt(zero);  // min 0 raised to 1, with its warning
    CHECK(zero.torch_tensorrt_warnings().size() == 1);

    const auto largest = named_input("x", {1, 2147483647});
    CHECK(parse_trtexec(largest.to_trtexec()) == profiles_of(largest));
    CHECK(parse_ort(largest.to_ort_options()) == profiles_of(largest));

    const auto huge = named_input("x", {1, 3000000000});
    CHECK_THROWS_WITH(huge.to_trtexec(),
                      "hookscope: dimension 1 of 'x' is 3000000000 in the max shape of profile 0: "
                      "trtexec reads dimensions as 32-bit ints (std::stoi), so it cannot be written");
    CHECK_THROWS_WITH(huge.to_ort_options(), Contains("ONNX Runtime reads dimensions as 32-bit ints"));
    check_torch_tensorrt(huge);  // Torch-TensorRT takes Python ints: written exactly
    CHECK_THAT(huge.to_torch_tensorrt(), Contains("[1,3000000000]"));
  }
}
