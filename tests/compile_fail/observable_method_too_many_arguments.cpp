// A member function's call given more arguments than it has parameters: the same message as for a free function.
// expect-error: hookscope: HOOKSCOPE_OBSERVABLE: [^\n]*(too many|more) arguments
#include "hookscope/observable.hpp"

struct model {
  int forward_impl(int ids, int mask = 0) const { return ids + mask; }
  HOOKSCOPE_OBSERVABLE_METHOD(model, forward, forward_impl, ids, mask = 0);
};

int call(const model& m) { return m.forward(1, 2, 3); }
