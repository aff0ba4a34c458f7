// One header reached by two spellings: registry.test.cpp includes "registry_shared.hpp", registry_other.cpp
// "../tests/registry_shared.hpp", so __FILE__ differs between them. The observable must still be one object.
#pragma once

#include "hookscope/observable.hpp"

namespace shared_header {
namespace impl {
inline int halve(int x) { return x / 2; }
}  // namespace impl
HOOKSCOPE_OBSERVABLE(halve, impl::halve, x);
}  // namespace shared_header

// Internal linkage: each translation unit reports the spelling it included this header by.
[[maybe_unused]] static const char* shared_header_spelling() { return __FILE__; }
