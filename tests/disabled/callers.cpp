// Compiled with HOOKSCOPE_ENABLED=0 by tests/disabled/test_disabled_build.py: each observed_* function must compile to
// exactly the instructions of its plain_* twin.
#include "hookscope/observable.hpp"

#include <string>
#include <utility>

namespace impl {
int scale(int x, const double& factor);  // defined in another translation unit: a real call is made
void notify(const std::string& what) noexcept;
int blend(int a, double b = 4.5, int c = 5);
int label(std::string text, int width = 8);  // a by-value parameter of class type
struct engine {
  int step(int tokens);
};
}  // namespace impl

HOOKSCOPE_OBSERVABLE(scale, impl::scale, x, factor);
HOOKSCOPE_OBSERVABLE(notify, impl::notify, what);
HOOKSCOPE_OBSERVABLE(blend, impl::blend, a, b = 4.5, c = 5);
HOOKSCOPE_OBSERVABLE(label, impl::label, text, width = 8);

struct model {
  int run_impl(int tokens);
  int generate_impl(int tokens, int max_length = 20, bool sample = false) const;
  HOOKSCOPE_OBSERVABLE_METHOD(model, run, run_impl, tokens);
  HOOKSCOPE_OBSERVABLE_METHOD(model, generate, generate_impl, tokens, max_length = 20, sample = false);
};

// A smart pointer's shape: its unary operator& gives another object's address (never called by the annotations);
// ref-qualified methods, one given its default.
struct handle {
  handle* operator&();
  int query_impl(int iid) const&;
  int release_impl(int bias = 0) &&;
  HOOKSCOPE_OBSERVABLE_METHOD(handle, query, query_impl, iid);
  HOOKSCOPE_OBSERVABLE_METHOD(handle, release, release_impl, bias = 0);
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

int plain_query(const handle& h, int i) { return h.query_impl(i + 1); }
int observed_query(const handle& h, int i) { return h.query(i + 1); }
int plain_release(handle& h, int b) { return std::move(h).release_impl(b); }
int observed_release(handle& h, int b) { return std::move(h).release(b); }

// Calls leaving trailing arguments to their defaults: the by-name call, forwarded inline.
int plain_blend(int x) { return impl::blend(x + 1); }
int observed_blend(int x) { return blend(x + 1); }
int plain_blend_two(int x) { return impl::blend(x, 1.5); }
int observed_blend_two(int x) { return blend(x, 1.5); }
int plain_blend_full(int x) { return impl::blend(x, 1.5, 2); }
int observed_blend_full(int x) { return blend(x, 1.5, 2); }
int plain_generate(const model& m, int t) { return m.generate_impl(t); }
int observed_generate(const model& m, int t) { return m.generate(t); }
int plain_release_default(handle& h) { return std::move(h).release_impl(); }
int observed_release_default(handle& h) { return std::move(h).release(); }
// (A by-value parameter of class type given before a default is moved once more by a shorter call than by the
// plain call, which builds the argument in the parameter itself: docs/observable.md. No pair here.)

int plain_step(int a, int b) { return a + b; }
int observed_step(int a, int b) {
  on_step.observe(a, b);
  return a + b;
}
