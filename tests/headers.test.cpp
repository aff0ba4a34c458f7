// Each public header compiles alone: tests/meson.build compiles one translation unit per header (from
// header_alone.cpp.in) into this test, which has nothing else to check at run time.
#include <catch2/catch.hpp>

TEST_CASE("every public header compiles as the only include of a translation unit") { SUCCEED(); }
