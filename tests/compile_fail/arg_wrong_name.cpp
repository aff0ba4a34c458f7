// Arguments are found by the names given to the annotation; a misspelt name does not compile.
// expect-error: hookscope: call_context::arg<Name>\(\): no parameter has that name in this observable
#include "hookscope/observable.hpp"

namespace impl {
inline int lower(int gm, int settings) { return gm + settings; }
}  // namespace impl
HOOKSCOPE_OBSERVABLE(lower, impl::lower, gm, settings);

void attach() {
  auto sub = lower.observers.pre.add([](const auto& ctx) { (void)ctx.template arg<"setings">(); });
}
