// hookscope/subscription.hpp — the handle that keeps a callback registered, and the id that outlives it.
#pragma once

#include "hookscope/config.hpp"
#include "hookscope/detail/callbacks.hpp"
#include "hookscope/detail/subscription.hpp"
