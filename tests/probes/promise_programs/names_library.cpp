// A shared library with an annotation of its own (`solo`) and the header's `step`: built with -fPIC -shared.
#include "shared_names.hpp"

namespace library {
namespace impl {
[[gnu::noinline]] int solo(int x) { return x * 10; }
}  // namespace impl
HOOKSCOPE_OBSERVABLE(solo, impl::solo, x);
}  // namespace library

int library_call(int x) { return library::solo(x) + shared_names::step(x); }
