// A call given more arguments than the function has parameters: one hookscope message at the call naming the
// annotation's parameter count, not the compiler's list of every call operator (one per count of arguments given).
// expect-error: hookscope: HOOKSCOPE_OBSERVABLE: [^\n]*(too many|more) arguments
#include "hookscope/observable.hpp"

namespace impl {
inline int scale(int x, int factor = 2) { return x * factor; }
}  // namespace impl
HOOKSCOPE_OBSERVABLE(scale, impl::scale, x, factor = 2);

int call() { return scale(1, 2, 3); }
