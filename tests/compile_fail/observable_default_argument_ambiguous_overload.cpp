// A call leaving `b` to its default, whose by-name call C++ finds ambiguous: impl::pick(int&&) is as good a match for
// the converted argument (an int prvalue) as the annotated pick(int, int = 1). The parameter has a default, so the
// message must say what is wrong (another overload matches as well), not that a parameter has no default.
// expect-error: hookscope: HOOKSCOPE_OBSERVABLE: [^\n]*(ambiguous|another overload)
#include "hookscope/observable.hpp"

namespace impl {
inline int pick(int a, int b = 1) { return a + b; }
inline int pick(int&& a) { return -a; }
}  // namespace impl
HOOKSCOPE_OBSERVABLE_OVERLOAD(pick, int(int, int), impl::pick, a, b = 1);

int call(int x) {
  (void)impl::pick(x);  // the lvalue cannot bind to int&&: the plain call by name picks pick(int, int = 1)
  return pick(x);
}
