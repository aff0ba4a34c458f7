// A shared library of its own with annotations (registry_module.test.cpp loads it): a module links its own list
// of namespace-scope sites, whether or not the program that loads it has annotations.
#include "hookscope/observable.hpp"

namespace plugin {
namespace impl {
inline int triple(int x) { return 3 * x; }
inline int negate(int x) { return -x; }
}  // namespace impl
HOOKSCOPE_OBSERVABLE(triple, impl::triple, x);
HOOKSCOPE_OBSERVABLE(negate, impl::negate, x);
}  // namespace plugin

int plugin_triple(int x) { return plugin::triple(x); }
