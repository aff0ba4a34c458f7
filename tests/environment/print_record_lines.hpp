// The lines a call_recorder's calls make through to_record_line (the value tree's path), without latency, the first
// signed: what a test program prints for its test to compare with the lines HOOKSCOPE_RECORD wrote for the same calls.
#pragma once

#include "hookscope/detail/call_pairing.hpp"
#include "hookscope/recorder.hpp"
#include "hookscope/records.hpp"

#include <cstdio>

inline void print_record_lines(const hookscope::call_recorder& recorder) {
  bool first = true;
  for (hookscope::call_record record : recorder.calls()) {
    record.latency_ns.reset();
    if (first) record.parameters = hookscope::detail::parameters_of(recorder.function());
    first = false;
    std::printf("%s\n", hookscope::to_record_line(record).c_str());
  }
}
