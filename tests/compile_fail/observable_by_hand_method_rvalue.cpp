// An observable written by hand for a non-const method without ref-qualifier takes its object as an lvalue: given an
// rvalue, the message says what to pass (HOOKSCOPE_OBSERVABLE_METHOD's name(...) passes an lvalue itself).
// expect-error: hookscope: observable<&C::method, \.\.\.>: the observable of a non-const method without ref-qualifier takes its object as an lvalue
#include "hookscope/observable.hpp"

struct counter {
  int add_impl(int n) { return n; }
};
using add = hookscope::observable<&counter::add_impl, "counter_add", "n">;

int call() { return add{}(counter{}, 1); }
