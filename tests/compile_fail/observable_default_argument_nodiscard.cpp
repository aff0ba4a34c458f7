// A [[nodiscard]] function's result discarded: the plain call by name is diagnosed, so a call through the annotation
// leaving an argument to its default must be too (made an error here so that the case fails to compile).
// expect-error: nodiscard|unused-result|ignoring return value
#include "hookscope/observable.hpp"

#pragma GCC diagnostic error "-Wunused-result"

namespace impl {
[[nodiscard]] inline int checked(int status, bool strict = true) { return strict ? status : 0; }
}  // namespace impl
HOOKSCOPE_OBSERVABLE(checked, impl::checked, status, strict = true);

void call() { checked(1); }
