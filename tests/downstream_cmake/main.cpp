// Consumer of an installed hookscope, built with CMake by tests/install/test_downstream_cmake.sh; the same source
// compiles in every mode (the mode comes from the hookscope::hookscope target's compile definitions).
//
// Usage: downstream <expected hooks mode: 1 or 0> <expected probes: 1 or 0>. Prints one line,
//   hooks_enabled=<0|1> probes_enabled=<0|1> pre_callbacks=<runs> result=<forward's result> via=cmake
// and exits non-zero unless hooks_enabled and probes_enabled equal the expected ones and the pre callback ran once
// when enabled, never when disabled. The annotation `forward` is a USDT probe site (forward__entry,
// forward__return) in a build with probes: the script reads them with readelf -n.
#include <hookscope/observable.hpp>

#include <cstdio>
#include <cstring>

namespace impl {
int forward(int input_ids, int attention_mask) { return input_ids * 2 + attention_mask; }
}  // namespace impl
HOOKSCOPE_OBSERVABLE(forward, impl::forward, input_ids, attention_mask);

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
  int result = 0;
  {
    auto sub = forward.observers.pre.add([&](const auto& ctx) {
      ++runs;
      seen = ctx.template arg<"input_ids">();
    });
    result = forward(20, 1);
  }
  result += forward(0, 1) - 1;  // the subscription has ended: nothing runs

  std::printf("hooks_enabled=%d probes_enabled=%d pre_callbacks=%d result=%d via=cmake\n",
              hookscope::hooks_enabled ? 1 : 0, hookscope::probes_enabled ? 1 : 0, runs, result);

  const int expected_runs = expect_enabled ? 1 : 0;
  const int expected_seen = expect_enabled ? 20 : 0;
  if (hookscope::hooks_enabled != expect_enabled || hookscope::probes_enabled != expect_probes ||
      runs != expected_runs || seen != expected_seen || result != 41) {
    std::fprintf(stderr,
                 "downstream: expected hooks_enabled=%d probes_enabled=%d pre_callbacks=%d (input_ids %d) result=41, "
                 "got %d %d %d (%d) %d\n",
                 expect_enabled ? 1 : 0, expect_probes ? 1 : 0, expected_runs, expected_seen,
                 hookscope::hooks_enabled ? 1 : 0, hookscope::probes_enabled ? 1 : 0, runs, seen, result);
    return 1;
  }
  return 0;
}
