// Tests of the dynamic_shapes exporters (hookscope/shapes.hpp: torch.export JSON, trtexec, ONNX Runtime, the
// report) on the scenarios of shapes_scenarios.hpp; every expected text worked out by hand.
#include "hookscope/shapes.hpp"

#include <catch2/catch.hpp>

#include "shapes_scenarios.hpp"

#include <cstdint>
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
