// An observer fired from a static object's destructor, after main() returned, still runs its callbacks.
// Exit code 0 when it did; a message and exit code 1 otherwise (meson counts that as a failure).
#include "hookscope/observer.hpp"

#include <cstdio>
#include <cstdlib>

namespace {

// Declared first: constant-initialised, so it is destroyed after the dynamically initialised objects below.
constinit hookscope::observer<int> on_shutdown{"on_shutdown"};
int calls = 0;

struct registrar {
  registrar() {
    (void)on_shutdown.add_global([](int v) { calls += v; }).release();
  }
};

struct late_user {
  ~late_user() {
    on_shutdown.observe(10);  // after main returned, during static destruction
    const int expected = hookscope::hooks_enabled ? 11 : 0;
    if (calls != expected) {
      std::fprintf(stderr, "static destruction: callback total %d, expected %d\n", calls, expected);
      std::_Exit(1);
    }
    std::printf(hookscope::hooks_enabled ? "static destruction: the callback ran from a static destructor\n"
                                          : "static destruction: hooks disabled, nothing ran, as expected\n");
  }
};

registrar registered;
late_user late;

}  // namespace

int main() {
  on_shutdown.observe(1);
  return calls == (hookscope::hooks_enabled ? 1 : 0) ? 0 : 1;
}
