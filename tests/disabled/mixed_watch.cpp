// Half of a program that mixes modes (tests/disabled/test_disabled_build.py): this half defines `watch`, built in one
// mode (hooks enabled or disabled, HOOKSCOPE_USDT 0 or 1) while mixed_main.cpp is built in another. It uses only
// inline parts of hookscope, so the link needs no library and fails only over the mix.
#include "hookscope/observer.hpp"

#include <cstddef>

void watch(const hookscope::observer<int>* on_event, std::size_t& name_size) {
  name_size = on_event != nullptr ? on_event->name().size() : 0;
}
