// A value holding no data beside calls holding some is left out (rule B4), as an empty sliding-window cache.
#include "hookscope/shapes.hpp"

#include "shapes_scenarios.hpp"

#include <catch2/catch.hpp>

#include <algorithm>
#include <array>
#include <map>
#include <optional>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

using shapes_test::error_of;
using shapes_test::ids;
using shapes_test::named;
using shapes_test::param;
using shapes_test::t;

namespace {

using shape = std::vector<std::int64_t>;
using range = hookscope::tensorrt_profile::shape_range;

}  // namespace

TEST_CASE("B4: a value holding no data beside calls holding data") {
  SECTION("left out in either order; kept where every call holds none; two counts without data conflict") {
    // An empty sliding-window cache keeps a 0-d tensor per layer (its window) and nothing else.
    const auto full = [](std::int64_t b, std::int64_t past) {
      return value::structure("Cache", {{"k0", t({b, 2, past, 4})},
                                        {"v0", t({b, 2, past, 4})},
                                        {"w0", t({})},
                                        {"k1", t({b, 2, past, 4})},
                                        {"v1", t({b, 2, past, 4})},
                                        {"w1", t({})}});
    };
    const value empty = value::structure("Cache", {{"0", t({})}, {"1", t({})}});
    for (const bool empty_first : {true, false}) {
      INFO("empty first " << empty_first);
      shape_engine e;
      e.set_parameters({param("x"), param("cache", value())});
      e.begin_recording();
      const auto prefill = [&](std::int64_t b, std::int64_t s) {
        e.add_call(named({{"x", ids({b, s})}, {"cache", empty}}));
      };
      const auto step = [&](std::int64_t b, std::int64_t past) {
        e.add_call(named({{"x", ids({b, 1})}, {"cache", full(b, past)}}));
      };
      if (empty_first) prefill(2, 5);
      step(2, 5), step(3, 7);
      if (!empty_first) prefill(2, 5);
      prefill(3, 7);
      const auto ds = e.infer_dynamic_shapes({.dim_names = true});
      CHECK(ds.inputs().size() == 7);  // x and the cache's six leaves
      const std::size_t prefill_index = empty_first ? 0 : 2;
      const value args = e.infer_arguments({.candidate = prefill_index}).arguments;
      // Placeholders of the full cache: length 0, the prefill's batch; the 0-d tensors as they were seen.
      CHECK(hookscope::to_json(args) ==
            R"({"dict":[["x",{"shape":[2,5],"dtype":"int64"}],["cache",{"struct":"Cache","fields":[)"
            R"(["k0",{"shape":[2,2,0,4],"dtype":"float32"}],["v0",{"shape":[2,2,0,4],"dtype":"float32"}],)"
            R"(["w0",{"shape":[],"dtype":"float32"}],["k1",{"shape":[2,2,0,4],"dtype":"float32"}],)"
            R"(["v1",{"shape":[2,2,0,4],"dtype":"float32"}],["w1",{"shape":[],"dtype":"float32"}]]}]]})");
      const auto profiles = e.infer_dynamic_shapes({.profile_phases = true}).tensorrt_profiles();
      REQUIRE(profiles.size() == 2);
      CHECK(profiles[empty_first ? 1 : 0].call_indexes ==
            (empty_first ? std::vector<std::size_t>{1, 2} : std::vector<std::size_t>{0, 1}));
    }
    // Every call holding no data: that value is the input (a struct of 0-d tensors only is not an empty cache).
    shape_engine all;
    all.set_parameters({param("x"), param("state")});
    all.add_call(named({{"x", t({1})}, {"state", empty}}));
    all.add_call(named({{"x", t({2})}, {"state", empty}}));
    CHECK(all.infer_dynamic_shapes().inputs().size() == 3);
    // Two values without data of different counts: still a conflict.
    shape_engine two;
    two.set_parameters({param("x"), param("state")});
    two.add_call(named({{"x", t({1})}, {"state", empty}}));
    two.add_call(named({{"x", t({2})}, {"state", value::list({t({}), t({}), t({})})}}));
    CHECK_THAT(error_of([&] { (void)two.infer_dynamic_shapes(); }),
               Contains("named argument 'state' has 3 flattened leaves in call 1 but previously got 2"));
  }
}
