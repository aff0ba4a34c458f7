// A default argument is not part of the function's type: the annotation says what to do instead.
// expect-error: hookscope: HOOKSCOPE_OBSERVABLE: default arguments \('b = 3'\) are not supported
#include "hookscope/observable.hpp"

namespace impl {
inline int add(int a, int b = 3) { return a + b; }
}  // namespace impl
HOOKSCOPE_OBSERVABLE(add, impl::add, a, b = 3);
