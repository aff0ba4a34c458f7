// The other half, built with hooks disabled: its hookscope types live in another inline namespace, so the
// call below cannot link against the enabled half instead of silently mixing two layouts of observer.
#include "hookscope/observer.hpp"

#include <cstddef>

void watch(const hookscope::observer<int>* on_event, std::size_t& name_size);

int main() {
  std::size_t name_size = 1;
  watch(nullptr, name_size);
  return static_cast<int>(name_size);
}
