// hookscope/record_error.hpp — record_error, which hookscope/exceptions.hpp declares with every other exception of the library;
// this header stays so that code including it by name compiles.
#pragma once

#include "hookscope/exceptions.hpp"
