// A '&&'-qualified method's annotation called on an lvalue: refused as the method itself refuses it, with a message
// naming the ref-qualifier (not every candidate of the call).
// expect-error: hookscope: HOOKSCOPE_OBSERVABLE_METHOD: the annotated method is '&&'-qualified and the object given is an lvalue
#include "hookscope/observable.hpp"

struct buffer {
  int release_impl(int keep) && { return keep; }
  HOOKSCOPE_OBSERVABLE_METHOD(buffer, release, release_impl, keep);
};

int call(buffer& b) { return b.release(1); }
