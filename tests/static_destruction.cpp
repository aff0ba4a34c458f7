// Observers used after main() returned: an observer fired from a static object's destructor still runs its
// callbacks, and an annotation's observers (never destroyed) serve subscriptions that static objects hold until
// static destruction, through the annotation and through the registry.
// Exit code 0 when all ran; a message and exit code 1 otherwise (meson counts that as a failure).
#include "hookscope/observer.hpp"

#include "hookscope/observable.hpp"
#include "hookscope/registry.hpp"

#include <cstdio>
#include <cstdlib>
#include <type_traits>

namespace shutdown_test {

[[gnu::noinline]] int twice_impl(int v) { return 2 * v; }
HOOKSCOPE_OBSERVABLE(twice, twice_impl, v);

#if HOOKSCOPE_ENABLED
// What lets an annotation's observers outlive every static destructor: they have none (no guard, no atexit).
static_assert(std::is_trivially_destructible_v<hookscope::erased_observer>);
static_assert(std::is_trivially_destructible_v<hookscope::detail::observable_state>);
#endif

}  // namespace shutdown_test

namespace {

void fail(const char* what, int got, int expected) {
  std::fprintf(stderr, "static destruction: %s %d, expected %d\n", what, got, expected);
  std::_Exit(1);
}

// Declared first: constant-initialised, so it is destroyed after the dynamically initialised objects below.
constinit hookscope::observer<int> on_shutdown{"on_shutdown"};
int calls = 0;
int typed_pre = 0;    // the annotation's typed pre callback: sum of the arguments it saw
int erased_post = 0;  // the registry's erased post callback: how many calls it saw
constexpr int expected_typed_pre = hookscope::hooks_enabled ? 5 : 0;
constexpr int expected_erased_post = hookscope::hooks_enabled ? 1 : 0;

struct registrar {
  registrar() {
    (void)on_shutdown.add_global([](int v) { calls += v; }).release();
  }
};

// Holds subscriptions on an annotation's observers until static destruction, where they end.
struct subscriber {
  hookscope::subscription pre;
  hookscope::subscription post;
  subscriber() {
    pre = shutdown_test::twice.observers.pre.add_global([](const auto& ctx) { typed_pre += ctx.template arg<"v">(); });
    if (const hookscope::function_info* f = hookscope::find_observable("shutdown_test::twice")) {
      post = f->post().add_global([](const hookscope::erased_call&) { ++erased_post; });
    } else if (hookscope::hooks_enabled) {
      fail("registry entries for shutdown_test::twice:", 0, 1);
    }
  }
  ~subscriber() {
    pre.reset();  // on observers that are never destroyed: safe in any order with the annotation's statics
    post.reset();
    if (shutdown_test::twice(4) != 8) fail("twice(4):", shutdown_test::twice(4), 8);
    if (typed_pre != expected_typed_pre) fail("typed pre callback total", typed_pre, expected_typed_pre);
    std::printf("static destruction: subscriptions on an annotation's observers ended after main returned\n");
  }
};

struct late_user {
  ~late_user() {
    on_shutdown.observe(10);  // after main returned, during static destruction
    const int expected = hookscope::hooks_enabled ? 11 : 0;
    if (calls != expected) fail("callback total", calls, expected);
    if (shutdown_test::twice(5) != 10) fail("twice(5):", shutdown_test::twice(5), 10);
    if (typed_pre != expected_typed_pre) fail("typed pre callback total", typed_pre, expected_typed_pre);
    if (erased_post != expected_erased_post) fail("erased post callback calls", erased_post, expected_erased_post);
    std::printf(hookscope::hooks_enabled ? "static destruction: the callback ran from a static destructor\n"
                                         : "static destruction: hooks disabled, nothing ran, as expected\n");
  }
};

registrar registered;
subscriber held;  // destroyed after `late`
late_user late;

}  // namespace

int main() {
  on_shutdown.observe(1);
  return calls == (hookscope::hooks_enabled ? 1 : 0) ? 0 : 1;
}
