// Users receive call contexts in callbacks; they cannot make one (and so cannot fire an observable's events).
// expect-error: hookscope: call_context: only an observable makes call contexts; receive them in callbacks
#include "hookscope/observable.hpp"

namespace impl {
inline int lower(int gm, int settings) { return gm + settings; }
}  // namespace impl
HOOKSCOPE_OBSERVABLE(lower, impl::lower, gm, settings);

void forge() {
  const int gm = 1;
  const int settings = 2;
  hookscope::call_context<int(int, int)> ctx(lower.info, gm, settings);
}
