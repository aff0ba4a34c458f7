// What the shape engine's tests share (shapes.test.cpp, shapes_arguments.test.cpp, shapes_exporters.test.cpp,
// shapes_relations.test.cpp, shapes_summaries.test.cpp):
// value and call builders, and the recorded scenarios (an LLM's generate() calls, a vision-language model, two
// positional tensors) whose expected results those files work out by hand from docs/input_observer_rules.md.
#pragma once

#include "hookscope/shapes.hpp"

#include <catch2/catch.hpp>

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

using Catch::Matchers::Contains;
using hookscope::argument_options;
using hookscope::call_inputs;
using hookscope::dtype;
using hookscope::dynamic_shapes_options;
using hookscope::engine_options;
using hookscope::parameter;
using hookscope::parameter_kind;
using hookscope::shape_engine;
using hookscope::tensor_spec;
using hookscope::value;
using hookscope::value_fields;

namespace shapes_test {

inline value t(std::vector<std::int64_t> shape, dtype type = dtype::float32) {
  return tensor_spec{std::move(shape), type};
}
inline value ids(std::vector<std::int64_t> shape) { return t(std::move(shape), dtype::int64); }
// A parameter: `parameter` itself has no initialiser for its default, which -Wextra reports in `{"x"}`.
inline parameter param(std::string name, parameter_kind kind = parameter_kind::positional_or_keyword,
                       std::optional<value> default_value = std::nullopt) {
  return parameter{std::move(name), kind, std::move(default_value)};
}
inline parameter param(std::string name, value default_value) {
  return param(std::move(name), parameter_kind::positional_or_keyword, std::move(default_value));
}

inline call_inputs named(value_fields kwargs) { return {{}, std::move(kwargs)}; }
inline call_inputs positional(std::vector<value> args) { return {std::move(args), {}}; }

inline std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const hookscope::inference_error& e) {
    return e.what();
  }
  return "no error";
}

inline value cache(std::int64_t past) {
  return value::structure(
      "DynamicCache", {{"key_0", t({1, 2, past, 4}, dtype::float16)}, {"value_0", t({1, 2, past, 4}, dtype::float16)}});
}

// An LLM's forward as C++ records it (every parameter by name): prefill without a cache, then two decode steps.
// use_cache equals its default every time, so it is dropped (A3); past_key_values=None is dropped too.
inline shape_engine llm(engine_options options = {}) {
  shape_engine e(options);
  e.set_parameters({param("input_ids"), param("attention_mask", value()), param("past_key_values", value()),
                    param("use_cache", value(true))});
  e.begin_recording();
  e.add_call(named({{"input_ids", ids({1, 7})},
                    {"attention_mask", ids({1, 7})},
                    {"past_key_values", value()},
                    {"use_cache", true}}));
  e.add_call(named({{"input_ids", ids({1, 1})},
                    {"attention_mask", ids({1, 8})},
                    {"past_key_values", cache(7)},
                    {"use_cache", true}}));
  e.add_call(named({{"attention_mask", ids({1, 9})}, {"input_ids", ids({1, 1})}, {"past_key_values", cache(8)}}));
  return e;
}

// A vision-language model: pixel_values at prefill only, the cache as a list of (key, value) tuples afterwards.
inline shape_engine vision(bool with_missing, engine_options options = {}) {
  shape_engine e(options);
  e.set_parameters({param("input_ids"), param("pixel_values", value()), param("attention_mask", value()),
                    param("past_key_values", value())});
  if (with_missing) e.value_if_missing("pixel_values", t({0, 3, 896, 896}, dtype::float16));
  const auto kv = [](std::int64_t past) {
    return value::list({value::tuple({t({1, 2, past, 4}), t({1, 2, past, 4})})});
  };
  e.add_call(named({{"input_ids", ids({1, 10})},
                    {"pixel_values", t({1, 3, 896, 896}, dtype::float16)},
                    {"attention_mask", ids({1, 10})}}));
  e.add_call(named({{"input_ids", ids({1, 1})}, {"attention_mask", ids({1, 11})}, {"past_key_values", kv(10)}}));
  e.add_call(named({{"input_ids", ids({1, 1})}, {"attention_mask", ids({1, 12})}, {"past_key_values", kv(11)}}));
  return e;
}

// Two positional tensors whose dim 1 takes 6, 7, 8 together.
inline shape_engine two_positional() {
  shape_engine e;
  e.set_parameters({param("x"), param("y")});
  for (std::int64_t n : {6, 7, 8}) e.add_call(positional({t({2, n}), t({3, n})}));
  return e;
}

/// Appends `what: ` and f()'s text, or `what failed: ` and the inference_error's message: an inference as text, so
/// that two engines' answers (or refusals) compare as one string.
inline void append_attempt(std::string& out, const char* what, const std::function<std::string()>& f) {
  try {
    out += std::string(what) + ": " + f() + "\n";
  } catch (const hookscope::inference_error& error) {
    out += std::string(what) + " failed: " + error.what() + "\n";
  }
}

/// One call of a random stream: its inputs and, when the stream records results, its result.
struct recorded_call {
  call_inputs inputs;
  std::optional<value> result;
};

}  // namespace shapes_test
