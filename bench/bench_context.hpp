// Shared by the benchmark files: records in the output's "context" what a saved JSON file measured.
#pragma once

#include "hookscope/config.hpp"

#include <benchmark/benchmark.h>

namespace bench_support {

[[maybe_unused]] inline const bool context_recorded = [] {
  benchmark::AddCustomContext("hookscope_hooks", hookscope::hooks_enabled ? "enabled" : "disabled");
  benchmark::AddCustomContext("hookscope_compiler",
#if defined(__clang__)
                              "clang " __clang_version__
#else
                              "gcc " __VERSION__
#endif
  );
  return true;
}();

}  // namespace bench_support
