// An annotation in a header included by several translation units of one program (header_tu.cpp, compiled three
// times with -DTU=1,2,3, and header_main.cpp).
#pragma once

#include "hookscope/observable.hpp"

namespace hdr {
namespace impl {
[[gnu::noinline]] inline int step(int x) { return x + 1; }
}  // namespace impl
HOOKSCOPE_OBSERVABLE(step, impl::step, x);
}  // namespace hdr
