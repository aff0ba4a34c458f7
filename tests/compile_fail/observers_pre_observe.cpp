// Only an observable fires its own events: its observers are subscribe-only views.
// expect-error: hookscope: observers\.pre/post: only the observable fires its events; call the function itself
#include "hookscope/observable.hpp"

namespace impl {
inline int lower(int gm, int settings) { return gm + settings; }
}  // namespace impl
HOOKSCOPE_OBSERVABLE(lower, impl::lower, gm, settings);

void fire_by_hand() { lower.observers.pre.observe(1, 2); }
