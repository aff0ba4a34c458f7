// Every parameter needs a name: an empty one (a stray comma) does not compile.
// expect-error: hookscope: HOOKSCOPE_OBSERVABLE: a parameter name is empty
#include "hookscope/observable.hpp"

namespace impl {
inline int add(int a, int b) { return a + b; }
}  // namespace impl
HOOKSCOPE_OBSERVABLE(add, impl::add, a, );
