// shape_engine with thousands of inputs per call: every per-call lookup of a name (its signature position, its
// scalar default, its summary) is O(1), and what a call records does not depend on how its keywords were ordered.
// The reference is what the rules give without any lookup: the keywords already in signature order, and the
// constants the test drops itself (A3), recorded without a signature.
#include "hookscope/shapes.hpp"

#include <catch2/catch.hpp>

#include "shapes_scenarios.hpp"

#include <algorithm>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

using namespace shapes_test;

namespace {

constexpr std::size_t inputs = 2000;
constexpr std::size_t calls = 50;

std::string name(std::size_t i) {
  std::string out = "x";
  out += std::to_string(i);
  return out;
}

// Every 100th parameter is a flag with the scalar default true; the others are one-dim tensors, half of them dynamic.
bool is_flag(std::size_t i) { return i % 100 == 7; }

std::vector<parameter> signature() {
  std::vector<parameter> sig;
  for (std::size_t i = 0; i < inputs; ++i) {
    sig.push_back(is_flag(i) ? param(name(i), parameter_kind::positional_or_keyword, value(true)) : param(name(i)));
  }
  return sig;
}

// Call c's keywords in signature order; `with_flags`: the flags given too, equal to their default (dropped by A3).
value_fields keywords(std::size_t c, bool with_flags) {
  value_fields kw;
  for (std::size_t i = 0; i < inputs; ++i) {
    if (is_flag(i)) {
      if (with_flags) kw.emplace_back(name(i), value(true));
      continue;
    }
    const auto size = static_cast<std::int64_t>(i % 2 == 0 ? 4 : 1 + (c + i % 5) % 7);
    kw.emplace_back(name(i), ids({size}));
  }
  return kw;
}

shape_engine record(bool with_signature, bool shuffled) {
  shape_engine e({.store_n_calls = hookscope::unlimited, .keep_calls = false});
  if (with_signature) e.set_parameters(signature());
  e.begin_recording();
  std::mt19937 rng(7);
  for (std::size_t c = 0; c < calls; ++c) {
    value_fields kw = keywords(c, with_signature);
    if (shuffled) std::shuffle(kw.begin(), kw.end(), rng);
    REQUIRE(e.add_call(call_inputs{{}, std::move(kw)}));
  }
  return e;
}

}  // namespace

TEST_CASE("shape_engine::add_call with thousands of keyword inputs") {
  const shape_engine shuffled = record(true, true);
  const shape_engine ordered = record(true, false);
  const shape_engine reference = record(false, false);
  REQUIRE(shuffled.num_obs() == calls);

  SECTION("keywords in any order record the same summaries") {
    CHECK(shuffled.to_summary_json() == ordered.to_summary_json());
  }
  SECTION("the same inference as the calls without any lookup") {
    const auto ds = shuffled.infer_dynamic_shapes();
    CHECK(ds.to_json() == reference.infer_dynamic_shapes().to_json());
    REQUIRE(ds.inputs().size() == inputs - inputs / 100);
    std::size_t j = 0;
    for (std::size_t i = 0; i < inputs; ++i) {
      if (is_flag(i)) continue;
      CHECK(ds.inputs()[j].name == name(i));  // signature order, the flags dropped as constants equal to default
      CHECK(ds.inputs()[j].dynamic_dims.size() == i % 2);
      ++j;
    }
    CHECK(shuffled.infer_arguments().arguments == reference.infer_arguments().arguments);
  }
}
