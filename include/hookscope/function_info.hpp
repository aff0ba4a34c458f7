// hookscope/function_info.hpp — what the registry knows of one observable function: its name, parameter names,
// signature, place, and the type-erased observers around its calls.
#pragma once

#include "hookscope/config.hpp"
#include "hookscope/detail/function_info.hpp"
#include "hookscope/observer.hpp"
