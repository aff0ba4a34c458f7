// A default given in a later declaration of the function, after its annotation (C++ lets a later declaration add
// defaults): the plain call by name below both declarations uses it, so a call through the annotation leaving that
// argument out must too. Built by tests/disabled/test_disabled_build.py in both modes, with each compiler.
// Exit status 0 when the shorter call returned what the plain call returns.
#include "hookscope/observable.hpp"

namespace impl {
int later(int a, int b);
}  // namespace impl

HOOKSCOPE_OBSERVABLE(later, impl::later, a, b);

namespace impl {
int later(int a, int b = 40) { return a + b; }
}  // namespace impl

int main() { return impl::later(2) == 42 && later(2) == 42 && later(2, 1) == 3 ? 0 : 1; }
