// hookscope/hookscope.hpp — every public header of hookscope; include the one you need to compile faster.
#pragma once

#include "hookscope/config.hpp"
#include "hookscope/context.hpp"
#include "hookscope/errors.hpp"
#include "hookscope/observer.hpp"
#include "hookscope/subscription.hpp"
