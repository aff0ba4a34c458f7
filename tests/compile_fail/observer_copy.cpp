// An observer is an identity (callbacks registered on it), so it cannot be copied.
// expect-error: (use of deleted function|call to deleted constructor).*observer
#include "hookscope/observer.hpp"

hookscope::observer<int> on_step{"on_step"};
hookscope::observer<int> copy = on_step;
