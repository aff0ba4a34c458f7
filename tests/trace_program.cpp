// Run by tests/environment/test_trace.py with and without HOOKSCOPE_TRACE: the trace comes from the environment
// alone.
#include "hookscope/observable.hpp"

#include <cstdio>
#include <stdexcept>
#include <string>

namespace impl {
int lower_graph(int nodes, const std::string& name) { return nodes - 1 + static_cast<int>(name.size()) * 0; }
int lower_fail(int) { throw std::runtime_error("cannot lower"); }
void untraced(int) {}
int pad_to(int width, int fill = 0) { return width + fill; }
}  // namespace impl

HOOKSCOPE_OBSERVABLE(lower_graph, impl::lower_graph, nodes, name);
HOOKSCOPE_OBSERVABLE(lower_fail, impl::lower_fail, code);
HOOKSCOPE_OBSERVABLE(untraced, impl::untraced, x);
HOOKSCOPE_OBSERVABLE(pad_to, impl::pad_to, width, fill = 0);

namespace passes {  // registered as "passes::fold"
HOOKSCOPE_OBSERVABLE(fold, impl::untraced, x);
}  // namespace passes

int main() {
  std::printf("result %d\n", lower_graph(5, "main"));
  try {
    lower_fail(7);
  } catch (const std::exception& e) {
    std::printf("caught %s\n", e.what());
  }
  untraced(1);
  passes::fold(3);
  return pad_to(8) == 8 ? 0 : 1;  // `fill` left to its default
}
