// A plugin with annotations of its own, linked with the static library (a copy of hookscope, environment features
// included) and loaded with dlopen() by plugin_program.cpp. Built twice, as two plugins whose names differ
// (HOOKSCOPE_TEST_PLUGIN: plugin_a, plugin_b).
#include "hookscope/observable.hpp"

#ifndef HOOKSCOPE_TEST_PLUGIN
#error "define HOOKSCOPE_TEST_PLUGIN, the plugin's namespace"
#endif

namespace HOOKSCOPE_TEST_PLUGIN {
namespace impl {
int work(int n) { return 2 * n + 1; }
}  // namespace impl
HOOKSCOPE_OBSERVABLE(work, impl::work, n);
}  // namespace HOOKSCOPE_TEST_PLUGIN

/// The plugin's annotated function, for the program to call.
extern "C" int plugin_work(int n) { return HOOKSCOPE_TEST_PLUGIN::work(n); }

/// A call from inside the plugin: its own annotated function, then the program's (`host_work`).
extern "C" int plugin_run(int n, int (*host_work)(int)) { return HOOKSCOPE_TEST_PLUGIN::work(n) + host_work(n); }
