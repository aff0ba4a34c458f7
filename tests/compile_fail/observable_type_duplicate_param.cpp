// An observable type written without the macros checks its parameter names as well (the macros check them on
// their string literal and pass the verdict; a type written by hand leaves that argument to its default).
// expect-error: hookscope: HOOKSCOPE_OBSERVABLE: two parameters have the same name
#include "hookscope/observable.hpp"

namespace impl {
inline int add(int a, int b) { return a + b; }
}  // namespace impl
inline constexpr hookscope::observable<&impl::add, "add", "a, a"> add{};
