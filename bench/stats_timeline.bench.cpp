// bench/stats_timeline.bench.cpp — what HOOKSCOPE_STATS and HOOKSCOPE_TIMELINE cost the calling thread per call, beside
// the plain call: a small call (`int f(int, double)`) and a decoder-like `forward(input_ids, attention_mask, key,
// value, step) -> tensor_spec` with four tensors. Each function is annotated once per variable; the variables must be
// set before the program starts (read once, while the observables register): without them, main() sets them and runs
// the benchmark again (execv).
#include "hookscope/observable.hpp"
#include "hookscope/tensor.hpp"

#include <benchmark/benchmark.h>

#include "bench_context.hpp"

#include <unistd.h>

#include <cstdio>
#include <cstdlib>

namespace impl {
[[gnu::noinline]] int work(int n, double scale);
int work(int n, double scale) { return n + static_cast<int>(scale); }

[[gnu::noinline]] hookscope::tensor_spec forward(const hookscope::tensor_spec& input_ids,
                                                 const hookscope::tensor_spec& attention_mask,
                                                 const hookscope::tensor_spec& key, const hookscope::tensor_spec& value,
                                                 int step);
hookscope::tensor_spec forward(const hookscope::tensor_spec& input_ids, const hookscope::tensor_spec&,
                               const hookscope::tensor_spec&, const hookscope::tensor_spec&, int step) {
  benchmark::DoNotOptimize(step);
  return input_ids;  // one copy, as a decoder returns its logits
}
}  // namespace impl

HOOKSCOPE_OBSERVABLE(stats_small, impl::work, n, scale);
HOOKSCOPE_OBSERVABLE(timeline_small, impl::work, n, scale);
HOOKSCOPE_OBSERVABLE(stats_forward, impl::forward, input_ids, attention_mask, key, value, step);
HOOKSCOPE_OBSERVABLE(timeline_forward, impl::forward, input_ids, attention_mask, key, value, step);

namespace {

template <auto& F>
void run_small(benchmark::State& state) {
  int n = 0;
  for (auto _ : state) benchmark::DoNotOptimize(F(++n, 2.0));
}

void small_plain_call(benchmark::State& state) {
  int n = 0;
  for (auto _ : state) benchmark::DoNotOptimize(impl::work(++n, 2.0));
}

struct decoder_inputs {
  hookscope::tensor_spec ids{{1, 1}, hookscope::dtype::int64};
  hookscope::tensor_spec mask{{1, 128}, hookscope::dtype::int64};
  hookscope::tensor_spec key{{1, 32, 127, 128}, hookscope::dtype::float16};
  hookscope::tensor_spec value{{1, 32, 127, 128}, hookscope::dtype::float16};
};

template <auto& F>
void run_forward(benchmark::State& state) {
  const decoder_inputs in;
  int step = 0;
  for (auto _ : state) benchmark::DoNotOptimize(F(in.ids, in.mask, in.key, in.value, ++step));
}

void forward_plain_call(benchmark::State& state) {
  const decoder_inputs in;
  int step = 0;
  for (auto _ : state) benchmark::DoNotOptimize(impl::forward(in.ids, in.mask, in.key, in.value, ++step));
}

}  // namespace

// At 1 and 2 threads: two threads counting or tracing the same function must not slow each other down.
BENCHMARK(small_plain_call)->Threads(1)->Threads(2);
BENCHMARK(run_small<stats_small>)->Name("stats_small")->Threads(1)->Threads(2);
BENCHMARK(run_small<timeline_small>)->Name("timeline_small")->Threads(1)->Threads(2);
BENCHMARK(forward_plain_call);
BENCHMARK(run_forward<stats_forward>)->Name("stats_forward");
BENCHMARK(run_forward<timeline_forward>)->Name("timeline_forward");

int main(int argc, char** argv) {
  if (std::getenv("HOOKSCOPE_STATS") == nullptr) {
    // The table and the file go nowhere: the cost of keeping them is what is measured.
    setenv("HOOKSCOPE_STATS", "*stats_small,*stats_forward=/dev/null", 1);
    setenv("HOOKSCOPE_TIMELINE", "*timeline_small,*timeline_forward=/dev/null", 1);
    execv("/proc/self/exe", argv);
    std::perror("stats_timeline_bench: cannot run itself again");
    return 1;
  }
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
