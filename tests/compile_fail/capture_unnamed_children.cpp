// flatten_traits children must be named: (name, child) pairs or a map from strings. Every other type captures (an
// opaque leaf at worst); this misuse of the user's explicit word does not compile.
// expect-error: hookscope: flatten_traits<T>::flatten\(t\) must return named children
// expect-error: rule<layer
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
