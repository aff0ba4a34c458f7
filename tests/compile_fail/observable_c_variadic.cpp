// A C variadic function cannot forward its variable arguments: the message says what to annotate instead.
// expect-error: hookscope: HOOKSCOPE_OBSERVABLE: a C variadic function \(with '\.\.\.', like printf\) cannot be observed
#include "hookscope/observable.hpp"

namespace impl {
inline int log(const char* format, ...) { return format != nullptr ? 1 : 0; }
}  // namespace impl
HOOKSCOPE_OBSERVABLE(log, impl::log, format);
