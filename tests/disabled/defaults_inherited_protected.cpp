// A method annotated in the class that inherits it from a base where it is protected (a base class holding the
// implementation, each model annotating it): the full call works, so a call leaving `mask` to its default must too,
// as the plain call forward_impl(1) inside the class does. Built by tests/disabled/test_disabled_build.py in both
// modes, with each compiler. Exit status 0 when the shorter call returned what the plain call returns.
#include "hookscope/observable.hpp"

class base {
 protected:
  int forward_impl(int ids, int mask = 7) const { return ids * 100 + mask; }
};

class model : public base {
 public:
  HOOKSCOPE_OBSERVABLE_METHOD(model, forward, forward_impl, ids, mask = 7);
  int plain(int ids) const { return forward_impl(ids); }
};

int main() {
  const model m;
  return m.forward(1, 7) == 107 && m.plain(1) == 107 && m.forward(1) == 107 ? 0 : 1;
}
