// hookscope/call_inputs.hpp — what one call of an observed function is made of, as value trees: its parameters
// (names, Python's parameter kinds, defaults) and the arguments of one call. The record format stores these, the
// shape engine infers from them; neither owns them.
#pragma once

#include "hookscope/config.hpp"
#include "hookscope/detail/call_inputs.hpp"
#include "hookscope/value.hpp"
