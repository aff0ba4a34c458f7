// Parameter names are identifiers: the annotation takes names, not declarations.
// expect-error: hookscope: HOOKSCOPE_OBSERVABLE: a parameter name is not an identifier
#include "hookscope/observable.hpp"

namespace impl {
inline int add(int a, int b) { return a + b; }
}  // namespace impl
HOOKSCOPE_OBSERVABLE(add, impl::add, int a, b);
