// A volatile-qualified method cannot be annotated: the message says so and what to annotate instead.
// expect-error: hookscope: HOOKSCOPE_OBSERVABLE_METHOD: a volatile-qualified member function cannot be observed
#include "hookscope/observable.hpp"

struct device {
  int read_impl(int reg) volatile { return reg; }
  HOOKSCOPE_OBSERVABLE_METHOD(device, read, read_impl, reg);
};
