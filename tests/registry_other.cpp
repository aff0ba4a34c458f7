// A second translation unit for registry.test.cpp: its observable registers whatever the link order.
#include "hookscope/observable.hpp"

#include "../tests/registry_shared.hpp"  // the other spelling is in registry.test.cpp

namespace {
int twice(int x) { return 2 * x; }
}  // namespace

HOOKSCOPE_OBSERVABLE(other_unit_twice, twice, x);

int call_registry_other(int x) { return other_unit_twice(x); }

const hookscope::function_info* shared_info_in_other_unit() { return &shared_header::halve.info; }
const char* shared_spelling_in_other_unit() { return shared_header_spelling(); }

// The same name in two namespaces, and methods of two instantiations of a class template: all distinct.
namespace vision {
namespace impl {
inline int forward(int pixels) { return pixels + 1; }
}  // namespace impl
HOOKSCOPE_OBSERVABLE(forward, impl::forward, pixels);
}  // namespace vision

int call_vision_forward(int x) { return vision::forward(x); }
