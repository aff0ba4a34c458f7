// A subscription owns one registration: it moves, it does not copy.
// expect-error: (use of deleted function|call to deleted constructor).*subscription
#include "hookscope/observer.hpp"

hookscope::observer<int> on_step{"on_step"};

void attach() {
  auto sub = on_step.add([](int) {});
  hookscope::subscription copy = sub;
}
