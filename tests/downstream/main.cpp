// Consumer of hookscope built by tools/test_downstream.sh; the same source compiles in both modes.
//
// Usage: downstream <expected mode: 1 or 0>. Prints one line,
//   hooks_enabled=<0|1> callbacks=<runs> via=<pkgconfig|internal>
// and exits non-zero unless hooks_enabled equals the expected mode and the callback ran once when enabled,
// never when disabled.
#include <hookscope/observer.hpp>

#include <cstdio>
#include <cstring>

#ifndef DOWNSTREAM_FOUND_VIA
#define DOWNSTREAM_FOUND_VIA "unknown"
#endif

namespace {
hookscope::observer<int> on_value{"downstream.on_value"};
}  // namespace

int main(int argc, char** argv) {
  if (argc != 2 || (std::strcmp(argv[1], "0") != 0 && std::strcmp(argv[1], "1") != 0)) {
    std::fprintf(stderr, "usage: %s <expected mode: 1 or 0>\n", argc > 0 ? argv[0] : "downstream");
    return 2;
  }
  const bool expect_enabled = argv[1][0] == '1';

  int runs = 0;
  int seen = 0;
  {
    auto sub = on_value.add([&](const int& v) {
      ++runs;
      seen = v;
    });
    on_value.observe(42);
  }
  on_value.observe(7);  // the subscription has ended: nothing runs

  std::printf("hooks_enabled=%d callbacks=%d via=%s\n", hookscope::hooks_enabled ? 1 : 0, runs, DOWNSTREAM_FOUND_VIA);

  const int expected_runs = expect_enabled ? 1 : 0;
  const int expected_seen = expect_enabled ? 42 : 0;
  if (hookscope::hooks_enabled != expect_enabled || runs != expected_runs || seen != expected_seen) {
    std::fprintf(stderr, "downstream: expected hooks_enabled=%d callbacks=%d (value %d), got %d %d (value %d)\n",
                 expect_enabled ? 1 : 0, expected_runs, expected_seen, hookscope::hooks_enabled ? 1 : 0, runs, seen);
    return 1;
  }
  return 0;
}
