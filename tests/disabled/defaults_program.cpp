// Calls leaving trailing arguments to their defaults, run in both modes: built by Meson in the build's mode (and
// linked with the library), and by tests/disabled/test_disabled_build.py with hooks disabled (no library needed).
// Exit status 0 when every call returned what the plain call returns and the callbacks saw what they must.
#include "hookscope/observable.hpp"

#include <memory>
#include <string>
#include <utility>

namespace impl {
inline double scale(double x, double factor = 2.0, int times = 1) { return x * factor * times; }
inline double pick(double x, double s = 10.0) { return x * s; }
inline double pick(int x) { return -x; }
inline int consume(std::unique_ptr<int> p, std::unique_ptr<int> q = nullptr) { return *p + (q ? *q : 100); }
inline void bump(int& counter, const int& by = 1) { counter += by; }
inline int quiet(int x, int y = 5) noexcept { return x * y; }
}  // namespace impl

HOOKSCOPE_OBSERVABLE(scale, impl::scale, x, factor = 2.0, times = 1);
HOOKSCOPE_OBSERVABLE_OVERLOAD(pick, double(double, double), impl::pick, x, s = 10.0);
HOOKSCOPE_OBSERVABLE(consume, impl::consume, p, q = nullptr);
HOOKSCOPE_OBSERVABLE(bump, impl::bump, counter, by = 1);
HOOKSCOPE_OBSERVABLE(quiet, impl::quiet, x, y = 5);

struct model {
  int offset = 0;
  int forward_impl(int ids, int mask = 7) const { return ids * 100 + mask + offset; }
  int step_impl(int a = 1, int b = 2) {
    offset += a;
    return a * 10 + b;
  }
  int finish_impl(int a, int b = 3) && { return a * 10 + b + offset; }
  HOOKSCOPE_OBSERVABLE_METHOD(model, forward, forward_impl, ids, mask = 7);
  HOOKSCOPE_OBSERVABLE_METHOD(model, step, step_impl, a = 1, b = 2);
  HOOKSCOPE_OBSERVABLE_METHOD(model, finish, finish_impl, a, b = 3);
};

int main() {
  int given = 0;    // the arguments the callbacks saw given
  int omitted = 0;  // and omitted
  auto sub = scale.observers.pre.add([&](const auto& ctx) {
    for (std::size_t i = 0; i < 3; ++i) ++(ctx.has_arg(i) ? given : omitted);
  });
  auto steps = model::step_observers().pre.add([&](const auto& ctx) {
    if (ctx.template find_arg<"b">() == nullptr) ++omitted;
  });
  bool right = scale(3.0) == 6.0 && scale(3, 3.0) == 9.0 && scale(3.0, 3.0, 2) == 18.0;
  right = right && pick(3) == 30.0 && pick(3, 2) == 6.0;
  right = right && consume(std::make_unique<int>(1)) == 101;
  int counter = 0;
  bump(counter);
  bump(counter, 4);
  right = right && counter == 5 && quiet(2) == 10;
  model m;
  right = right && m.step() == 12 && m.step(3) == 32 && std::as_const(m).forward(1) == 111;
  right = right && std::move(m).finish(1) == 17 && std::move(m).finish(1, 1) == 15;
  const bool seen = hookscope::hooks_enabled ? given == 6 && omitted == 5 : given == 0 && omitted == 0;
  return right && seen ? 0 : 1;
}
