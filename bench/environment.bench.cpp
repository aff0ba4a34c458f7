// bench/environment.bench.cpp — what the environment features cost per traced call, beside the plain call: the
// same function annotated four times, each name matched by one variable (HOOKSCOPE_STATS, HOOKSCOPE_TIMELINE,
// HOOKSCOPE_RECORD), one by none. The variables must be set before the program starts (they are read once, while
// the observables register): without them, main() sets them and runs the benchmark again (execv).
#include "hookscope/observable.hpp"

#include <benchmark/benchmark.h>

#include "bench_context.hpp"

#include <unistd.h>

#include <cstdlib>
#include <cstring>

namespace impl {
[[gnu::noinline]] int work(int n, double scale);
int work(int n, double scale) { return n + static_cast<int>(scale); }
}  // namespace impl

HOOKSCOPE_OBSERVABLE(environment_untraced, impl::work, n, scale);
HOOKSCOPE_OBSERVABLE(environment_stats, impl::work, n, scale);
HOOKSCOPE_OBSERVABLE(environment_timeline, impl::work, n, scale);
HOOKSCOPE_OBSERVABLE(environment_record, impl::work, n, scale);

namespace {

template <auto& F>
void run(benchmark::State& state) {
  int n = 0;
  for (auto _ : state) benchmark::DoNotOptimize(F(++n, 2.0));
}

void environment_plain_call(benchmark::State& state) {
  int n = 0;
  for (auto _ : state) benchmark::DoNotOptimize(impl::work(++n, 2.0));
}

}  // namespace

BENCHMARK(environment_plain_call);
BENCHMARK(run<environment_untraced>)->Name("environment_no_variable");
BENCHMARK(run<environment_stats>)->Name("environment_stats");
BENCHMARK(run<environment_timeline>)->Name("environment_timeline");
BENCHMARK(run<environment_record>)->Name("environment_record");

int main(int argc, char** argv) {
  if (std::getenv("HOOKSCOPE_STATS") == nullptr) {
    // The table and the files go nowhere: the cost of keeping them is what is measured.
    setenv("HOOKSCOPE_STATS", "*environment_stats=/dev/null", 1);
    setenv("HOOKSCOPE_TIMELINE", "*environment_timeline=/dev/null", 1);
    setenv("HOOKSCOPE_RECORD", "*environment_record=/dev/null", 1);
    execv("/proc/self/exe", argv);
    std::perror("environment_bench: cannot run itself again");
    return 1;
  }
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
