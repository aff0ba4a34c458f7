// bench/recorder.bench.cpp — what recording a call costs, and what capturing costs beside a hand-written copy.
//
// `recorder_plain_call` calls the [[gnu::noinline]] implementation with three tensors; `recorder_record_3_tensors`
// calls it through its annotation while a call_recorder keeps every call (cleared every 4096 calls, outside the
// timing). `recorder_capture_3_tensors` captures the three arguments into the value tree the recorder stores,
// `recorder_hand_copy_3_tensors` copies their shapes and dtypes by hand: the ratio is what generality costs.
#include "hookscope/recorder.hpp"

#include <benchmark/benchmark.h>

#include "bench_context.hpp"

#include <cstdint>
#include <vector>

using hookscope::dtype;
using hookscope::tensor_spec;

namespace impl {
[[gnu::noinline]] std::int64_t attend(const tensor_spec& query, const tensor_spec& key, const tensor_spec& value);

std::int64_t attend(const tensor_spec& query, const tensor_spec& key, const tensor_spec& value) {
  return query.shape[2] + key.shape[2] + value.shape[2];
}
}  // namespace impl

HOOKSCOPE_OBSERVABLE(attend, impl::attend, query, key, value);

namespace {

const tensor_spec query{{1, 8, 7, 64}, dtype::float16};
const tensor_spec key{{1, 8, 7, 64}, dtype::float16};
const tensor_spec value{{1, 8, 7, 64}, dtype::float16};

void recorder_plain_call(benchmark::State& state) {
  for (auto _ : state) benchmark::DoNotOptimize(impl::attend(query, key, value));
}

void recorder_record_3_tensors(benchmark::State& state) {
  hookscope::call_recorder rec(attend, {.store_n_calls = hookscope::unlimited});
  benchmark::DoNotOptimize(attend(query, key, value));
  if (rec.num_calls() != (hookscope::hooks_enabled ? 1U : 0U)) {
    state.SkipWithError("one call was not recorded once");
    return;
  }
  int since_clear = 0;
  for (auto _ : state) {
    benchmark::DoNotOptimize(attend(query, key, value));
    if (++since_clear == 4096) {
      state.PauseTiming();
      rec.clear();
      since_clear = 0;
      state.ResumeTiming();
    }
  }
}

void recorder_capture_3_tensors(benchmark::State& state) {
  for (auto _ : state) {
    hookscope::value_fields kwargs;
    kwargs.reserve(3);
    kwargs.emplace_back("query", hookscope::capture_value(query));
    kwargs.emplace_back("key", hookscope::capture_value(key));
    kwargs.emplace_back("value", hookscope::capture_value(value));
    benchmark::DoNotOptimize(kwargs.data());
  }
}

void recorder_hand_copy_3_tensors(benchmark::State& state) {
  for (auto _ : state) {
    std::vector<tensor_spec> copies;
    copies.reserve(3);
    copies.push_back(tensor_spec{query.shape, query.dtype});
    copies.push_back(tensor_spec{key.shape, key.dtype});
    copies.push_back(tensor_spec{value.shape, value.dtype});
    benchmark::DoNotOptimize(copies.data());
  }
}

}  // namespace

BENCHMARK(recorder_plain_call);
BENCHMARK(recorder_record_3_tensors);
BENCHMARK(recorder_hand_copy_3_tensors);
BENCHMARK(recorder_capture_3_tensors);

BENCHMARK_MAIN();
