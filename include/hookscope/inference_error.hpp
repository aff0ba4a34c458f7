// hookscope/inference_error.hpp — inference_error, which hookscope/exceptions.hpp declares with every other exception of the library;
// this header stays so that code including it by name compiles.
#pragma once

#include "hookscope/exceptions.hpp"
