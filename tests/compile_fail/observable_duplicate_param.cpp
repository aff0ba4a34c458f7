// Callbacks find arguments by name: two parameters with one name do not compile (arg<"a"> would be ambiguous).
// expect-error: hookscope: HOOKSCOPE_OBSERVABLE: two parameters have the same name
#include "hookscope/observable.hpp"

namespace impl {
inline int add(int a, int b) { return a + b; }
}  // namespace impl
HOOKSCOPE_OBSERVABLE(add, impl::add, a, a);
