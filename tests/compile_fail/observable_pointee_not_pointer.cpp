// A '*' before a parameter's name captures what the parameter points to: only a raw pointer to an object has that.
// expect-error: hookscope: HOOKSCOPE_OBSERVABLE: a '\*' before a parameter's name captures what the parameter points to
#include "hookscope/observable.hpp"

namespace impl {
inline int open_file(const char* path, int flags) { return path != nullptr ? flags : -1; }
}  // namespace impl
HOOKSCOPE_OBSERVABLE(open_file, impl::open_file, path, *flags);
