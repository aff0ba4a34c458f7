// A non-const method's annotation called on a const object: the message says so.
// expect-error: hookscope: HOOKSCOPE_OBSERVABLE_METHOD: the annotated method is not const and the object given is const
#include "hookscope/observable.hpp"

struct buffer {
  int fill_impl(int with) & { return with; }
  HOOKSCOPE_OBSERVABLE_METHOD(buffer, fill, fill_impl, with);
};

int call(const buffer& b) { return b.fill(1); }
