// An annotation in a header, so in every module that includes it (the program and the library of
// names_library.cpp): the probe `step__entry` exists in both.
#pragma once

#include "hookscope/observable.hpp"

namespace shared_names {
namespace impl {
[[gnu::noinline]] inline int step(int x) { return x + 1; }
}  // namespace impl
HOOKSCOPE_OBSERVABLE(step, impl::step, x);
}  // namespace shared_names
