// The annotation names every parameter, no more, no fewer.
// expect-error: hookscope: HOOKSCOPE_OBSERVABLE: give exactly one name per parameter of the function
#include "hookscope/observable.hpp"

namespace impl {
inline int add(int a, int b) { return a + b; }
}  // namespace impl
HOOKSCOPE_OBSERVABLE(add, impl::add, a);
