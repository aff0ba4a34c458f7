#include "hookscope/config.hpp"

#include <catch2/catch.hpp>

#include <string_view>

// The build passes HOOKSCOPE_EXPECT_ENABLED and HOOKSCOPE_EXPECT_USDT from the `hooks` and `usdt` options directly
// to this file only, so this checks that the dependency object carried the mode to a consumer.
TEST_CASE("hooks_enabled follows the build's hooks option") {
  STATIC_REQUIRE(hookscope::hooks_enabled == (HOOKSCOPE_EXPECT_ENABLED != 0));
}

TEST_CASE("probes_enabled follows the build's hooks and usdt options") {
  STATIC_REQUIRE(hookscope::probes_enabled == (HOOKSCOPE_EXPECT_ENABLED != 0 && HOOKSCOPE_EXPECT_USDT != 0));
}

TEST_CASE("HOOKSCOPE_DETAIL_ABI_NAMESPACE names the mode") {
  constexpr std::string_view name = HOOKSCOPE_DETAIL_STRINGIZE(HOOKSCOPE_DETAIL_ABI_NAMESPACE);
  SECTION("hooks enabled or not, probes or none") {
    STATIC_REQUIRE(name == (!HOOKSCOPE_EXPECT_ENABLED ? "v0_hooks_off"
                            : HOOKSCOPE_EXPECT_USDT   ? "v0_hooks_on_usdt"
                                                      : "v0_hooks_on"));
  }
}
