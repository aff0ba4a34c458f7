// A call with pre and post callbacks: gdb breaks at its probes and at markers in the callbacks and the body, so that
// tests/probes/test_probe_promises.py checks the order docs/probes.md gives (entry, pre, body, post, return).
#include "hookscope/observable.hpp"
#include <cstdio>
volatile int seen = 0;
extern "C" [[gnu::noinline]] void marker_pre() { seen = 1; }
extern "C" [[gnu::noinline]] void marker_post() { seen = 2; }
extern "C" [[gnu::noinline]] void marker_body() { seen = 3; }
namespace impl {
[[gnu::noinline]] int f(int x) {
  marker_body();
  return x + 1;
}
}  // namespace impl
HOOKSCOPE_OBSERVABLE(f, impl::f, x);
int main(int argc, char**) {
  auto pre = f.observers.pre.add([](const auto&) { marker_pre(); });
  auto post = f.observers.post.add([](const auto&) { marker_post(); });
  std::printf("%d\n", f(argc));
}
