// A '&&'-qualified method's annotation called on an lvalue with an argument left to its default (the call by name):
// the same message as a full call.
// expect-error: hookscope: HOOKSCOPE_OBSERVABLE_METHOD: the annotated method is '&&'-qualified and the object given is an lvalue
#include "hookscope/observable.hpp"

struct buffer {
  int release_impl(int keep = 0) && { return keep; }
  HOOKSCOPE_OBSERVABLE_METHOD(buffer, release, release_impl, keep = 0);
};

int call(buffer& b) { return b.release(); }
