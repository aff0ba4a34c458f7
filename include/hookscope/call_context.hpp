// hookscope/call_context.hpp — one call of an observable as its typed callbacks see it: the arguments by index (and,
// through the annotation, by name: named_call_context), the result and the exception. Only observables make them.
#pragma once

#include "hookscope/config.hpp"
#include "hookscope/detail/call_context.hpp"
#include "hookscope/detail/fixed_string.hpp"
#include "hookscope/erased_call.hpp"
#include "hookscope/function_info.hpp"
#include "hookscope/value.hpp"
