// A member function's call omitting an argument that has no default: the same message as for a free function.
// expect-error: hookscope: HOOKSCOPE_OBSERVABLE: this call omits arguments, and the function cannot be called by name[^\n]*an omitted parameter has no default
#include "hookscope/observable.hpp"

struct model {
  int forward_impl(int ids, int mask = 0) const { return ids + mask; }
  HOOKSCOPE_OBSERVABLE_METHOD(model, forward, forward_impl, ids, mask = 0);
};

int call(const model& m) { return m.forward(); }
