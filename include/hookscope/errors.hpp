// hookscope/errors.hpp — what happens when a callback throws, where hookscope's messages go, and the exceptions
// hookscope throws: one include for all of them (callback_errors.hpp and exceptions.hpp).
#pragma once

#include "hookscope/callback_errors.hpp"
#include "hookscope/exceptions.hpp"
