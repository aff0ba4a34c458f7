// arg<I>() is checked against the function's arity.
// expect-error: hookscope: call_context::arg<I>\(\): I is not less than the function's arity
#include "hookscope/observable.hpp"

namespace impl {
inline int twice(int x) { return 2 * x; }
}  // namespace impl
HOOKSCOPE_OBSERVABLE(twice, impl::twice, x);

void attach() {
  auto sub = twice.observers.pre.add([](const auto& ctx) { (void)ctx.template arg<1>(); });
}
