// An observable written by hand has no call by name, so it cannot leave arguments to their defaults.
// expect-error: hookscope: HOOKSCOPE_OBSERVABLE: this call omits arguments.* An observable written by hand
#include "hookscope/observable.hpp"

namespace impl {
inline int add(int a, int b = 3) { return a + b; }
}  // namespace impl
inline constexpr hookscope::observable<&impl::add, "add", "a, b"> add{};

int call() { return add(1); }
