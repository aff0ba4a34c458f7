// Compiled with HOOKSCOPE_ENABLED=0 by tests/disabled/test_disabled_build.py: each observed_* function must compile to
// exactly the instructions of its plain_* twin.
#include "hookscope/observable.hpp"

#include <string>

namespace impl {
int scale(int x, const double& factor);  // defined in another translation unit: a real call is made
void notify(const std::string& what) noexcept;
struct engine {
  int step(int tokens);
};
}  // namespace impl

HOOKSCOPE_OBSERVABLE(scale, impl::scale, x, factor);
HOOKSCOPE_OBSERVABLE(notify, impl::notify, what);

struct model {
  int run_impl(int tokens);
  HOOKSCOPE_OBSERVABLE_METHOD(model, run, run_impl, tokens);
};

constinit hookscope::observer<int, int> on_step{"on_step"};

int plain_scale(int x) {
  const double f = 2.5;
  return impl::scale(x + 1, f) * 3;
}
int observed_scale(int x) {
  const double f = 2.5;
  return scale(x + 1, f) * 3;
}

void plain_notify(const std::string& s) { impl::notify(s); }
void observed_notify(const std::string& s) { notify(s); }

int plain_run(model& m, int t) { return m.run_impl(t + 1); }
int observed_run(model& m, int t) { return m.run(t + 1); }

int plain_step(int a, int b) { return a + b; }
int observed_step(int a, int b) {
  on_step.observe(a, b);
  return a + b;
}
