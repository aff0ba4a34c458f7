// hookscope/erased_call.hpp — one call of any observable as type-erased callbacks see it: arguments and result as
// text or captured into value trees, the exception, without the function's types; and the per-type tables that
// format and capture them.
#pragma once

#include "hookscope/config.hpp"
#include "hookscope/detail/erased_call.hpp"
#include "hookscope/function_info.hpp"
#include "hookscope/observer.hpp"
#include "hookscope/value.hpp"
