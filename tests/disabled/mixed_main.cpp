// The other half, which calls `watch`: built in another mode than mixed_watch.cpp, its hookscope types live in another
// inline namespace (v0_hooks_off, v0_hooks_on, v0_hooks_on_usdt), so the call below cannot link against the other
// half instead of silently mixing two layouts of observer. Built in a mode of the same namespace, it links.
#include "hookscope/observer.hpp"

#include <cstddef>

void watch(const hookscope::observer<int>* on_event, std::size_t& name_size);

int main() {
  std::size_t name_size = 1;
  watch(nullptr, name_size);
  return static_cast<int>(name_size);
}
