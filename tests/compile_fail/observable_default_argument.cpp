// A call may omit only trailing arguments whose parameters have defaults in the function's declaration; omitting one
// without a default is one hookscope message at the call, not a template error inside the library.
// expect-error: hookscope: HOOKSCOPE_OBSERVABLE: this call omits arguments, and the function cannot be called by name[^\n]*an omitted parameter has no default
#include "hookscope/observable.hpp"

namespace impl {
inline int add(int a, int b, int c = 3) { return a + b + c; }
}  // namespace impl
HOOKSCOPE_OBSERVABLE(add, impl::add, a, b, c = 3);

int call() { return add(1); }
