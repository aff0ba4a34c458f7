// hookscope/inference_error.hpp — the exception of the shape engine (shapes layer): recorded calls that allow no
// inference.
#pragma once

#include "hookscope/config.hpp"

#include <stdexcept>

HOOKSCOPE_DETAIL_BEGIN_NAMESPACE

/// Thrown when the recorded calls do not allow an inference (nothing recorded, ranks that differ, ...); the
/// message is a sentence naming the argument path and the shapes seen.
class inference_error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

HOOKSCOPE_DETAIL_END_NAMESPACE
