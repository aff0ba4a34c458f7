// hookscope/detail/records.hpp — call_record, one recorded call, below the call pairing that makes one from a call's
// pre and post callbacks; hookscope/records.hpp is the documented front door (the record format, read and written).
#pragma once

#include "hookscope/detail/call_inputs.hpp"
#include "hookscope/detail/config.hpp"
#include "hookscope/detail/value.hpp"

#include <cstdint>
#include <optional>
#include <string>

HOOKSCOPE_DETAIL_BEGIN_NAMESPACE

/// One line of a record file.
struct call_record {
  std::string function{};                      ///< the observable's name, e.g. "Model::forward"
  std::optional<parameter_list> parameters{};  ///< given on (at least) the first record of a function
  call_inputs inputs{};
  std::optional<value> result{};  ///< absent for void results and calls that threw
  bool threw = false;
  std::optional<std::int64_t> latency_ns{};  ///< absent when the producer did not measure it
};

HOOKSCOPE_DETAIL_END_NAMESPACE
