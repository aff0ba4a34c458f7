// hookscope/output_formats.hpp: the table every front end reads. Each row writes what its dynamic_shapes writer
// writes and names the warnings the command prints beside it; names are unique, found by name, listed in order.
#include "hookscope/output_formats.hpp"

#include <catch2/catch.hpp>

#include "shapes_scenarios.hpp"

#include <set>
#include <string>
#include <vector>

using namespace shapes_test;

namespace {

// Two prefills without a cache (the engine fills an empty one, past 0) and their decode steps, in two phases; images
// that no call gives (only their value_if_missing).
hookscope::shape_engine two_phases() {
  hookscope::shape_engine e({.store_n_calls = hookscope::unlimited});
  e.set_parameters({param("input_ids"), param("attention_mask", value()), param("past_key_values", value()),
                    param("pixel_values", value())});
  e.value_if_missing("pixel_values", t({0, 3, 8, 8}));
  for (std::int64_t s : {5, 7}) {
    e.add_call(named({{"input_ids", ids({1, s})}, {"attention_mask", ids({1, s})}}));
    for (std::int64_t j = 0; j < 2; ++j) {
      const value cache = value::structure("DynamicCache", {{"key_0", t({1, 2, s + j, 4}, dtype::float16)},
                                                            {"value_0", t({1, 2, s + j, 4}, dtype::float16)}});
      e.add_call(
          named({{"input_ids", ids({1, 1})}, {"attention_mask", ids({1, s + j + 1})}, {"past_key_values", cache}}));
    }
  }
  return e;
}

std::vector<hookscope::inference_warning> joined(std::vector<hookscope::inference_warning> a,
                                                 const std::vector<hookscope::inference_warning>& b) {
  a.insert(a.end(), b.begin(), b.end());
  return a;
}

}  // namespace

TEST_CASE("output_formats") {
  // Two phases with an empty prefill cache: torch-tensorrt raises dimensions and says so, and the shapes warn.
  const hookscope::dynamic_shapes ds =
      two_phases().infer_dynamic_shapes({.batch_dimension_for = {"pixel_values"}, .profile_phases = true});
  REQUIRE_FALSE(ds.torch_tensorrt_warnings().empty());
  REQUIRE_FALSE(ds.warnings().empty());

  SECTION("each row writes what its writer writes, with the warnings the command prints") {
    const auto row = [](std::string_view name) {
      const hookscope::output_format* f = hookscope::find_output_format(name);
      REQUIRE(f != nullptr);
      return f;
    };
    CHECK(row("torch")->write(ds) == ds.to_json());
    CHECK(row("torch")->write_typed(ds) == ds.to_typed_json());
    CHECK(row("trtexec")->write(ds) == ds.to_trtexec());
    CHECK(row("ort")->write(ds) == ds.to_ort_options());
    CHECK(row("torch-tensorrt")->write(ds) == ds.to_torch_tensorrt());
    CHECK(row("onnx")->write(ds) == ds.to_onnx());
    CHECK(row("report")->write(ds) == ds.report());
    for (const char* name : {"torch", "trtexec", "ort", "onnx"}) {
      INFO(name);
      CHECK(row(name)->warnings(ds) == ds.warnings());
      if (std::string_view(name) != "torch") CHECK(row(name)->write_typed == nullptr);
    }
    // torch-tensorrt: the dimensions it raised to 1, then the shapes' own; the report lists its warnings itself.
    CHECK(row("torch-tensorrt")->warnings(ds) == joined(ds.torch_tensorrt_warnings(), ds.warnings()));
    CHECK(row("report")->warnings(ds).empty());
  }
  SECTION("names: unique, the default first, found by name only, listed as a sentence") {
    std::set<std::string_view> names;
    for (const hookscope::output_format& f : hookscope::output_formats()) {
      CHECK(names.insert(f.name).second);
      CHECK_FALSE(f.description.empty());
      CHECK(hookscope::find_output_format(f.name) == &f);
    }
    CHECK(names.size() == 6);
    CHECK(hookscope::output_formats().front().name == "torch");
    CHECK(hookscope::find_output_format("xml") == nullptr);
    CHECK(hookscope::find_output_format("") == nullptr);
    CHECK(hookscope::find_output_format("Torch") == nullptr);
    CHECK(hookscope::output_format_names() == "torch, trtexec, ort, torch-tensorrt, onnx or report");
    CHECK(hookscope::output_format_names(" and ") == "torch, trtexec, ort, torch-tensorrt, onnx and report");
    CHECK(hookscope::typed_output_format_names() == "torch");
  }
}
