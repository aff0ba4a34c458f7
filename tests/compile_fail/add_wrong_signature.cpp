// A callback must accept the observer's arguments.
// expect-error: hookscope: observer::add: the callback cannot be called with the observer's arguments
#include "hookscope/observer.hpp"

#include <string>

hookscope::observer<int, double> on_step{"on_step"};

void attach() {
  auto sub = on_step.add([](const std::string&) {});
}
