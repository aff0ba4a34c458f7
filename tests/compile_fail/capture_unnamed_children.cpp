// flatten_traits children must be named: (name, child) pairs or a map from strings.
// expect-error: hookscope: this parameter type cannot be captured
// expect-error: cannot_capture<layer>
#include "hookscope/capture.hpp"

#include <vector>

struct layer {
  int width;
};

template <>
struct hookscope::flatten_traits<layer> {
  static std::vector<int> flatten(const layer& l) { return {l.width}; }  // no names
};

void record(const std::vector<layer>& layers) { (void)hookscope::capture(layers); }
