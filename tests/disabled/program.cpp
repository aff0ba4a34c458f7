// Linked with HOOKSCOPE_ENABLED=0 by tests/disabled/test_disabled_build.py: no hookscope symbol and no observable
// name may remain in the executable.
#include "hookscope/hookscope.hpp"
#include "hookscope/observable.hpp"

namespace impl {
[[gnu::noinline]] int scale_marker_impl(int x) { return x * 3; }
}  // namespace impl

HOOKSCOPE_OBSERVABLE(zero_overhead_scale_marker, impl::scale_marker_impl, x_marker_param);

constinit hookscope::observer<int> on_event{"zero_overhead_event_marker"};

int main(int argc, char**) {
  int seen = 0;
  auto sub = on_event.add([&](int v) { seen += v; });
  auto pre = zero_overhead_scale_marker.observers.pre.add([&](const auto& ctx) { seen += ctx.template arg<0>(); });
  on_event.observe(argc);
  auto ctx = hookscope::context::current();
  auto scope = ctx.attach();
  const bool found = hookscope::find_observable("zero_overhead_scale_marker") != nullptr;
  return zero_overhead_scale_marker(argc) == 3 * argc && seen == 0 && !found ? 0 : 1;
}
