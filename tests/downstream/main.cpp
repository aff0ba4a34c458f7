// Consumer of hookscope built by tests/install/test_downstream.sh; the same source compiles in every mode.
//
// Usage: downstream <expected hooks mode: 1 or 0> <expected probes: 1 or 0>. Prints one line,
//   hooks_enabled=<0|1> probes_enabled=<0|1> callbacks=<runs> via=<pkgconfig|internal>
// and exits non-zero unless hooks_enabled and probes_enabled equal the expected ones, the callback ran once when
// enabled, never when disabled, and the annotation returned the plain call's result. The annotation
// `downstream_scale` is a USDT probe site (downstream_scale__entry, downstream_scale__return) in a build with probes:
// the script reads them with readelf -n.
#include <hookscope/observable.hpp>
#include <hookscope/observer.hpp>

#include <cstdio>
#include <cstring>

#ifndef DOWNSTREAM_FOUND_VIA
#define DOWNSTREAM_FOUND_VIA "unknown"
#endif

namespace {
hookscope::observer<int> on_value{"downstream.on_value"};
}  // namespace

namespace impl {
int scale(int x) { return x * 3; }
}  // namespace impl
HOOKSCOPE_OBSERVABLE(downstream_scale, impl::scale, x);

namespace {
bool is_flag(const char* arg) { return std::strcmp(arg, "0") == 0 || std::strcmp(arg, "1") == 0; }
}  // namespace

int main(int argc, char** argv) {
  if (argc != 3 || !is_flag(argv[1]) || !is_flag(argv[2])) {
    std::fprintf(stderr, "usage: %s <expected hooks mode: 1 or 0> <expected probes: 1 or 0>\n",
                 argc > 0 ? argv[0] : "downstream");
    return 2;
  }
  const bool expect_enabled = argv[1][0] == '1';
  const bool expect_probes = argv[2][0] == '1';

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
  const int scaled = downstream_scale(argc + 11);

  std::printf("hooks_enabled=%d probes_enabled=%d callbacks=%d via=%s\n", hookscope::hooks_enabled ? 1 : 0,
              hookscope::probes_enabled ? 1 : 0, runs, DOWNSTREAM_FOUND_VIA);

  const int expected_runs = expect_enabled ? 1 : 0;
  const int expected_seen = expect_enabled ? 42 : 0;
  if (hookscope::hooks_enabled != expect_enabled || hookscope::probes_enabled != expect_probes ||
      runs != expected_runs || seen != expected_seen || scaled != 42) {
    std::fprintf(stderr,
                 "downstream: expected hooks_enabled=%d probes_enabled=%d callbacks=%d (value %d) downstream_scale=42, "
                 "got %d %d %d (value %d) %d\n",
                 expect_enabled ? 1 : 0, expect_probes ? 1 : 0, expected_runs, expected_seen,
                 hookscope::hooks_enabled ? 1 : 0, hookscope::probes_enabled ? 1 : 0, runs, seen, scaled);
    return 1;
  }
  return 0;
}
