// make_observable calls the callable it stores, an lvalue, on every call: a '&&'-qualified operator() is refused with
// a message that says so.
// expect-error: hookscope: make_observable: the callable's operator\(\) cannot be called on an lvalue
#include "hookscope/observable.hpp"

struct once {
  int operator()(int x) && { return x; }
};

int call() {
  auto observed = hookscope::make_observable("once", once{});
  return observed(1);
}
