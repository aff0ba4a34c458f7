// bench/environment.bench.cpp — what the environment features cost per traced call, beside the plain call, for two
// functions: a decoder-like `forward(input_ids, attention_mask, key, value, step)` (four tensors and an int) and a
// call of one int. Each is annotated four times, each name matched by one variable (HOOKSCOPE_STATS,
// HOOKSCOPE_TIMELINE, HOOKSCOPE_RECORD), one by none.
//
// Two kinds of rows:
//   - environment_<feature>_<function>/threads:T: the CPU time of the calling threads per call (the writer thread's
//     work is not theirs), records written to /dev/null;
//   - environment_record_process_<function>/T: the whole process's CPU time per record (user + system, the writer
//     thread and the writing at exit included), measured on a child process that makes `process_calls` calls on T
//     threads, records them into a file in $TMPDIR and exits. The row fails unless the file holds every call.
// The variables must be set before the program starts (they are read once, while the observables register): without
// them, main() sets them and runs the benchmark again (execv).
#include "hookscope/observable.hpp"
#include "hookscope/tensor.hpp"

#include <benchmark/benchmark.h>

#include "bench_context.hpp"

#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

using hookscope::dtype;
using hookscope::tensor_spec;

namespace impl {
[[gnu::noinline]] const tensor_spec& forward(const tensor_spec& input_ids, const tensor_spec& attention_mask,
                                             const tensor_spec& key, const tensor_spec& value, int step);
const tensor_spec& forward(const tensor_spec& input_ids, const tensor_spec&, const tensor_spec&, const tensor_spec&,
                           int step) {
  static const tensor_spec logits{{2, 1, 32000}, dtype::float32};
  benchmark::DoNotOptimize(input_ids.shape.data());
  benchmark::DoNotOptimize(step);
  return logits;
}
[[gnu::noinline]] int one(int n);
int one(int n) { return n + 1; }
}  // namespace impl

HOOKSCOPE_OBSERVABLE(env_untraced_forward, impl::forward, input_ids, attention_mask, key, value, step);
HOOKSCOPE_OBSERVABLE(env_stats_forward, impl::forward, input_ids, attention_mask, key, value, step);
HOOKSCOPE_OBSERVABLE(env_timeline_forward, impl::forward, input_ids, attention_mask, key, value, step);
HOOKSCOPE_OBSERVABLE(env_record_forward, impl::forward, input_ids, attention_mask, key, value, step);
HOOKSCOPE_OBSERVABLE(env_untraced_one, impl::one, n);
HOOKSCOPE_OBSERVABLE(env_stats_one, impl::one, n);
HOOKSCOPE_OBSERVABLE(env_timeline_one, impl::one, n);
HOOKSCOPE_OBSERVABLE(env_record_one, impl::one, n);

namespace {

// A decode step's inputs: batch 2, one new token, a cache of 128 positions.
struct decoder_inputs {
  tensor_spec input_ids{{2, 1}, dtype::int64};
  tensor_spec attention_mask{{2, 129}, dtype::int64};
  tensor_spec key{{2, 8, 128, 64}, dtype::float32};
  tensor_spec value{{2, 8, 128, 64}, dtype::float32};
};

template <auto& F>
void run_forward(benchmark::State& state) {
  const decoder_inputs in;
  int step = 0;
  for (auto _ : state) benchmark::DoNotOptimize(&F(in.input_ids, in.attention_mask, in.key, in.value, ++step));
}

template <auto& F>
void run_one(benchmark::State& state) {
  int n = 0;
  for (auto _ : state) benchmark::DoNotOptimize(F(++n));
}

void environment_plain_forward(benchmark::State& state) {
  const decoder_inputs in;
  int step = 0;
  for (auto _ : state) {
    benchmark::DoNotOptimize(&impl::forward(in.input_ids, in.attention_mask, in.key, in.value, ++step));
  }
}
void environment_plain_one(benchmark::State& state) {
  int n = 0;
  for (auto _ : state) benchmark::DoNotOptimize(impl::one(++n));
}

//--- the whole process's CPU per record ---//

constexpr int process_calls = 200'000;

std::string temporary_directory() {
  const char* dir = std::getenv("TMPDIR");
  return dir != nullptr && *dir != '\0' ? dir : "/tmp";
}

// In the child: `calls` calls of `function` shared by `threads` threads, then a normal exit.
int run_child(const std::string& function, int threads, int calls) {
  const decoder_inputs in;
  std::vector<std::thread> workers;
  for (int t = 0; t < threads; ++t) {
    workers.emplace_back([&, t] {
      for (int i = t; i < calls; i += threads) {
        if (function == "forward") {
          benchmark::DoNotOptimize(&env_record_forward(in.input_ids, in.attention_mask, in.key, in.value, i));
        } else {
          benchmark::DoNotOptimize(env_record_one(i));
        }
      }
    });
  }
  for (std::thread& w : workers) w.join();
  return 0;
}

long count_lines(const std::string& path) {
  std::ifstream in(path);
  long lines = 0;
  for (std::string line; std::getline(in, line);) ++lines;
  return lines;
}

char** self_argv = nullptr;

template <const char* Function>
void environment_record_process(benchmark::State& state) {
  const int threads = static_cast<int>(state.range(0));
  const std::string path = temporary_directory() + "/hookscope_bench_" + std::to_string(getpid()) + ".jsonl";
  for (auto _ : state) {
    std::remove(path.c_str());
    const pid_t child = fork();
    if (child == 0) {
      const std::string record = std::string("HOOKSCOPE_RECORD=env_record_") + Function + "=" + path;
      const std::string threads_text = std::to_string(threads), calls_text = std::to_string(process_calls);
      char* argv[] = {self_argv[0],
                      const_cast<char*>("--child"),
                      const_cast<char*>(Function),
                      const_cast<char*>(threads_text.c_str()),
                      const_cast<char*>(calls_text.c_str()),
                      nullptr};
      char* envp[] = {const_cast<char*>(record.c_str()), nullptr};
      execve("/proc/self/exe", argv, envp);
      _exit(127);
    }
    int status = 0;
    rusage usage{};
    wait4(child, &status, 0, &usage);
    const double cpu = static_cast<double>(usage.ru_utime.tv_sec + usage.ru_stime.tv_sec) +
                       static_cast<double>(usage.ru_utime.tv_usec + usage.ru_stime.tv_usec) * 1e-6;
    const long lines = count_lines(path);
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0 || lines != process_calls) {
      state.SkipWithError(
          ("the child wrote " + std::to_string(lines) + " lines for " + std::to_string(process_calls) + " calls")
              .c_str());
    }
    state.SetIterationTime(cpu / process_calls);
  }
  std::remove(path.c_str());
}

constexpr char forward_name[] = "forward";
constexpr char one_name[] = "one";

}  // namespace

BENCHMARK(environment_plain_forward)->Threads(1)->Threads(2);
BENCHMARK(run_forward<env_untraced_forward>)->Name("environment_no_variable_forward")->Threads(1)->Threads(2);
BENCHMARK(run_forward<env_stats_forward>)->Name("environment_stats_forward")->Threads(1)->Threads(2);
BENCHMARK(run_forward<env_timeline_forward>)->Name("environment_timeline_forward")->Threads(1)->Threads(2);
BENCHMARK(run_forward<env_record_forward>)->Name("environment_record_forward")->Threads(1)->Threads(2);
BENCHMARK(environment_plain_one)->Threads(1)->Threads(2);
BENCHMARK(run_one<env_untraced_one>)->Name("environment_no_variable_one")->Threads(1)->Threads(2);
BENCHMARK(run_one<env_stats_one>)->Name("environment_stats_one")->Threads(1)->Threads(2);
BENCHMARK(run_one<env_timeline_one>)->Name("environment_timeline_one")->Threads(1)->Threads(2);
BENCHMARK(run_one<env_record_one>)->Name("environment_record_one")->Threads(1)->Threads(2);
BENCHMARK(environment_record_process<forward_name>)
    ->Name("environment_record_process_forward")
    ->Arg(1)
    ->Arg(2)
    ->Iterations(1)
    ->UseManualTime();
BENCHMARK(environment_record_process<one_name>)
    ->Name("environment_record_process_one")
    ->Arg(1)
    ->Arg(2)
    ->Iterations(1)
    ->UseManualTime();

int main(int argc, char** argv) {
  if (argc == 5 && std::strcmp(argv[1], "--child") == 0)
    return run_child(argv[2], std::atoi(argv[3]), std::atoi(argv[4]));
  if (std::getenv("HOOKSCOPE_STATS") == nullptr) {
    // The table and the caller rows' records go nowhere: the cost of keeping them is what is measured.
    setenv("HOOKSCOPE_STATS", "env_stats_*=/dev/null", 1);
    setenv("HOOKSCOPE_TIMELINE", "env_timeline_*=/dev/null", 1);
    setenv("HOOKSCOPE_RECORD", "env_record_*=/dev/null", 1);
    execv("/proc/self/exe", argv);
    std::perror("environment_bench: cannot run itself again");
    return 1;
  }
  self_argv = argv;
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
}
