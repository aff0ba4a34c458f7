// Hooks disabled, a full call of an annotated constexpr function is the plain call, a constant expression; a call
// leaving an argument to its default is the plain call by name, so it must be one too. (With hooks enabled neither is:
// the call reads whether anyone listens.) Built by tests/disabled/test_disabled_build.py, hooks disabled.
#include "hookscope/observable.hpp"

namespace impl {
constexpr int scaled(int x, int by = 3) { return x * by; }
}  // namespace impl

HOOKSCOPE_OBSERVABLE(scaled, impl::scaled, x, by = 3);

static_assert(impl::scaled(2) == 6);
static_assert(scaled(2, 3) == 6);
static_assert(scaled(2) == 6);

int main() { return 0; }
