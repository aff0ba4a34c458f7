// Two free functions and a method, one annotation never called, for the build-flag matrix of
// tests/probes/test_probe_promises.py (gdb reads the operands of each build).
#include "hookscope/observable.hpp"
#include <cstdio>
#include <string>
namespace fl {
namespace impl {
[[gnu::noinline]] long add(int a, long b) { return a + b; }
[[gnu::noinline]] double half(double x) { return x / 2; }
[[gnu::noinline]] int unused_fn(int a) { return a * 3; }
}  // namespace impl
HOOKSCOPE_OBSERVABLE(add, impl::add, a, b);
HOOKSCOPE_OBSERVABLE(half, impl::half, x);
HOOKSCOPE_OBSERVABLE(unused_fn, impl::unused_fn, a);
struct widget {
  int base = 100;
  [[gnu::noinline]] int bump_impl(int by) { return base += by; }
  HOOKSCOPE_OBSERVABLE_METHOD(widget, bump, bump_impl, by);
};
}  // namespace fl
int never_called(int a) { return fl::unused_fn(a); }
int main(int argc, char**) {
  fl::widget w;
  long r = fl::add(argc + 6, -3000000000L) + static_cast<long>(fl::half(5.0)) + w.bump(argc);
  std::printf("%ld\n", r);
}
