// A call leaving an argument to its default converts the arguments given as a full call does: a parameter whose type
// has only an explicit constructor from the argument stays refused, as the plain call impl::wrap(1) is.
// expect-error: no match|no matching|no known conversion|no viable
#include "hookscope/observable.hpp"

namespace impl {
struct tokens {
  explicit tokens(int n) : count(n) {}
  int count;
};
inline int wrap(tokens t, int extra = 1) { return t.count + extra; }
}  // namespace impl
HOOKSCOPE_OBSERVABLE(wrap, impl::wrap, t, extra = 1);

int call() { return wrap(1); }
