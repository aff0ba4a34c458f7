// A second translation unit for registry.test.cpp: its observable registers whatever the link order.
#include "hookscope/observable.hpp"

namespace {
int twice(int x) { return 2 * x; }
}  // namespace

HOOKSCOPE_OBSERVABLE(other_unit_twice, twice, x);

int call_registry_other(int x) { return other_unit_twice(x); }
