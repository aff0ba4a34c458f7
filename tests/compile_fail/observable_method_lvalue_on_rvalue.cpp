// A '&'-qualified method's annotation called on an rvalue: refused as the method itself refuses it.
// expect-error: hookscope: HOOKSCOPE_OBSERVABLE_METHOD: the annotated method is '&'-qualified and the object given is an rvalue
#include "hookscope/observable.hpp"

#include <utility>

struct buffer {
  int peek_impl(int at) & { return at; }
  HOOKSCOPE_OBSERVABLE_METHOD(buffer, peek, peek_impl, at);
};

int call(buffer& b) { return std::move(b).peek(1); }
