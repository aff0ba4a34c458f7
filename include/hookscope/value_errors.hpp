// hookscope/value_errors.hpp — the exceptions of the value tree (capture layer): a value used as a kind it is not
// (value_error), text that is not a valid value encoding (format_error).
#pragma once

#include "hookscope/config.hpp"

#include <stdexcept>

HOOKSCOPE_DETAIL_BEGIN_NAMESPACE

/// Thrown when a value is used as a kind it is not; the message names both kinds.
class value_error : public std::logic_error {
 public:
  using std::logic_error::logic_error;
};

/// Thrown when text is not a valid value encoding; the message names the JSON path and what was wrong.
class format_error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

HOOKSCOPE_DETAIL_END_NAMESPACE
