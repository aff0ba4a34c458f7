// Member functions of 10 and 11 parameters, defaults left out of a method, a class in an anonymous namespace, a class
// template, overloads, names with double underscores, a post callback that throws, and two methods named alike of
// different arities, for gdb and bpftrace in tests/probes/test_probe_promises.py.
#include "hookscope/observable.hpp"
#include <cstdio>
#include <stdexcept>
#include <string>
#include <vector>
namespace meth {
struct ten {
  long base = 1000;
  [[gnu::noinline]] long ten_impl(int a1, int a2, int a3, int a4, int a5, int a6, int a7, int a8, int a9,
                                  int a10) const {
    return base + a1 + a2 + a3 + a4 + a5 + a6 + a7 + a8 + a9 + a10;
  }
  [[gnu::noinline]] long eleven_impl(int a1, int a2, int a3, int a4, int a5, int a6, int a7, int a8, int a9, int a10,
                                     int a11) {
    return base + a1 + a2 + a3 + a4 + a5 + a6 + a7 + a8 + a9 + a10 + a11;
  }
  [[gnu::noinline]] int defaults_impl(int a, int b = 7, int c = 9) { return a + b + c; }
  HOOKSCOPE_OBSERVABLE_METHOD(ten, ten_args, ten_impl, a1, a2, a3, a4, a5, a6, a7, a8, a9, a10);
  HOOKSCOPE_OBSERVABLE_METHOD(ten, eleven_args, eleven_impl, a1, a2, a3, a4, a5, a6, a7, a8, a9, a10, a11);
  HOOKSCOPE_OBSERVABLE_METHOD(ten, defaults, defaults_impl, a, b = 7, c = 9);
};
namespace {
struct hidden {
  int v = 5;
  [[gnu::noinline]] int get_impl(int x) const { return v + x; }
  HOOKSCOPE_OBSERVABLE_METHOD(hidden, get, get_impl, x);
};
}  // namespace
template <class T>
struct holder {
  T t{};
  [[gnu::noinline]] std::size_t size_impl(const T& x) { return x.size(); }
  HOOKSCOPE_OBSERVABLE_METHOD(holder, size_of, size_impl, x);
};
namespace impl {
[[gnu::noinline]] double over(double x) { return x * 2; }
[[gnu::noinline]] int over(int x) { return x * 3; }
[[gnu::noinline]] int under(int x) { return x; }
[[gnu::noinline]] int thrower(int x) { return x; }
}  // namespace impl
HOOKSCOPE_OBSERVABLE_OVERLOAD(over_d, double(double), impl::over, x);
HOOKSCOPE_OBSERVABLE_OVERLOAD(over_i, int(int), impl::over, x);
HOOKSCOPE_OBSERVABLE(__x, impl::under, x);
HOOKSCOPE_OBSERVABLE(a__entry, impl::under, x);
HOOKSCOPE_OBSERVABLE(thrower, impl::thrower, x);
// One probe name, two arities: `forward__entry` fires with the encoder's one argument and the decoder's three.
struct encoder {
  [[gnu::noinline]] int forward_impl(int tokens) { return tokens + 1; }
  HOOKSCOPE_OBSERVABLE_METHOD(encoder, forward, forward_impl, tokens);
};
struct decoder {
  [[gnu::noinline]] int forward_impl(int tokens, int mask, int cache) { return tokens + mask + cache; }
  HOOKSCOPE_OBSERVABLE_METHOD(decoder, forward, forward_impl, tokens, mask, cache);
};
}  // namespace meth
int main() {
  meth::ten t;
  long r = t.ten_args(1, 2, 3, 4, 5, 6, 7, 8, 9, 10) + t.eleven_args(1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11) + t.defaults(1);
  meth::hidden h;
  r += h.get(1);
  meth::holder<std::vector<int>> hv;
  r += static_cast<long>(hv.size_of(std::vector<int>{1, 2, 3}));
  r += static_cast<long>(meth::over_d(1.5)) + meth::over_i(2) + meth::__x(3) + meth::a__entry(4);
  auto sub = meth::thrower.observers.post.add([](const auto&) { throw std::runtime_error("callback"); });
  try {
    (void)meth::thrower(5);
  } catch (const std::runtime_error&) {
    r += 100;
  }
  meth::encoder e;
  meth::decoder d;
  r += e.forward(2) + d.forward(3, 10, 20);
  std::printf("%ld\n", r);
}
