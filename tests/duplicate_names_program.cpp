// Run by tests/environment/test_duplicate_names.py: two observables registered under one name are reported at
// start-up, once.
#include "hookscope/observable.hpp"
#include "hookscope/registry.hpp"

#include <cstdio>

namespace impl {
inline int first(int x) { return x; }
inline int second(int x) { return -x; }
}  // namespace impl

// The annotation macros qualify names by their scope; spelling the type out can still give two the same name.
inline constexpr hookscope::observable<&impl::first, "twin", "x"> twin_a{};
inline constexpr hookscope::observable<&impl::second, "twin", "x"> twin_b{};
HOOKSCOPE_OBSERVABLE(unique_name, impl::first, x);

int main() {
  std::size_t twins = 0;
  for (const hookscope::function_info& f : hookscope::registry()) twins += f.name == "twin" ? 1 : 0;
  std::printf("%zu %d %d %d\n", twins, twin_a(1), twin_b(1), unique_name(2));
  return 0;
}
