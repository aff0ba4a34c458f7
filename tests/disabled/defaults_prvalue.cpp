// Compiled with HOOKSCOPE_ENABLED=0 by tests/disabled/test_disabled_build.py: a call leaving an argument to its
// default is the plain call by name, so it compiles wherever the plain call does. Here the parameter's type can be
// neither copied nor moved: the plain call initialises it from the int directly (C++17's guaranteed elision).
// Exit status 0 when the shorter call returned what the plain call returns.
#include "hookscope/observable.hpp"

#include <atomic>

namespace impl {
inline int counter(std::atomic<int> start, int step = 1) { return start.load() + step; }
}  // namespace impl

HOOKSCOPE_OBSERVABLE(counter, impl::counter, start, step = 1);

int main() { return impl::counter(41) == 42 && counter(41) == 42 ? 0 : 1; }
