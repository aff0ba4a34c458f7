// bench/read.bench.cpp — reading a file of records against the parsing floor, in one run (`tools/bench.sh --read`).
//
// The input is a decoder's recorded `forward` calls (tools/generate_records.py: 200,000 records, ~100 MB), named by
// the first argument or HOOKSCOPE_READ_BENCH_FILE; the same records cut into shards (`--shards 1000`) by the second
// argument or HOOKSCOPE_READ_BENCH_SHARDS. Rows, each reporting records/s and bytes/s:
//
// - `read_hookscope`: what `hookscope-shapes infer --store-n-calls all FILE` does, load_engine + infer_dynamic_shapes;
// - `read_floor_simdjson`: simdjson's on-demand parser over every line, in place (padded), summing every number of
//   every "shape" array as int64: the parsing floor (only with simdjson found at configure time, Debian
//   libsimdjson-dev; otherwise the row says it is missing);
// - `read_boost_basic_parser`: Boost.JSON's SAX `basic_parser` with a minimal handler summing the same numbers;
// - `read_merge_summaries`: the summaries of the shards (made beforehand, as `hookscope-shapes summarize` makes
//   them, outside the timing) merged by load_summaries, then inferred.
//
// The floor and Boost's parser read the file as the record reader does, in blocks from the file; both sums are
// reported (`shape_sum`), so that each is seen to touch the same numbers.
//
// `read_bench --rss FILE [--repetitions N]`: hookscope alone on FILE (a 1 GB file) in a child process per
// repetition, printing the child's peak RSS (getrusage) and its time: memory must not grow with the file.
#include "hookscope/load.hpp"
#include "hookscope/shapes.hpp"

#include <benchmark/benchmark.h>
#include <boost/json/basic_parser_impl.hpp>

#include "bench_context.hpp"
#include "read_lines.hpp"

#include <sys/resource.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <stdexcept>
#include <string>
#include <string_view>
#include <system_error>
#include <utility>
#include <vector>

namespace {

using read_floor::for_each_line;

std::string records_file;  // NOLINT: set once by main
std::string shards_dir;    // NOLINT

std::size_t file_bytes(const std::string& path) {
  std::error_code ec;
  const auto size = std::filesystem::file_size(path, ec);
  return ec ? 0 : static_cast<std::size_t>(size);
}

// Records and bytes per second of CPU time (less hurt by other processes on a busy machine than wall time).
void report(benchmark::State& state, std::size_t records, std::size_t bytes) {
  state.counters["records"] = static_cast<double>(records);
  state.counters["records_per_s"] =
      benchmark::Counter(static_cast<double>(records), benchmark::Counter::kIsIterationInvariantRate);
  state.counters["bytes_per_s"] =
      benchmark::Counter(static_cast<double>(bytes), benchmark::Counter::kIsIterationInvariantRate);
}

bool have_file(benchmark::State& state) {
  if (!records_file.empty() && file_bytes(records_file) != 0) return true;
  state.SkipWithError(("no records file" + (records_file.empty() ? std::string() : " " + records_file) +
                       ": give it as the first argument or HOOKSCOPE_READ_BENCH_FILE (tools/bench.sh --read "
                       "generates one with tools/generate_records.py)")
                          .c_str());
  return false;
}

//=== hookscope ===//

hookscope::load_options every_call() {
  hookscope::load_options options;
  options.store_n_calls = hookscope::unlimited;
  return options;
}

// `hookscope-shapes infer --store-n-calls all FILE`, without printing.
std::size_t infer_file(const std::string& path) {
  const hookscope::loaded_engine loaded = hookscope::load_engine({path}, every_call());
  const std::string ds = loaded.engine.infer_dynamic_shapes({}).to_json();
  benchmark::DoNotOptimize(ds.data());
  return loaded.calls_read;
}

void read_hookscope(benchmark::State& state) {
  if (!have_file(state)) return;
  std::size_t records = 0;
  for (auto _ : state) records = infer_file(records_file);
  report(state, records, file_bytes(records_file));
}

//=== the floor: simdjson on demand (bench/read_floor.cpp) ===//

void floor_row(benchmark::State& state, read_floor::result (*read)(const std::string&), const char* missing) {
  if (missing != nullptr) {
    for (auto _ : state) {
    }
    state.SkipWithError(missing);
    return;
  }
  if (!have_file(state)) return;
  read_floor::result r;
  for (auto _ : state) {
    r = read(records_file);
    benchmark::DoNotOptimize(r.shape_sum);
  }
  report(state, r.records, file_bytes(records_file));
  state.counters["shape_sum"] = static_cast<double>(r.shape_sum);
}

void read_floor_simdjson(benchmark::State& state) {
#if HOOKSCOPE_BENCH_HAVE_SIMDJSON
  floor_row(state, read_floor::simdjson_read, nullptr);
#else
  floor_row(state, nullptr,
            "simdjson missing: not found at configure time (Debian libsimdjson-dev, pkg-config simdjson)");
#endif
}

//=== Boost.JSON's basic_parser ===//

// The least a SAX handler can do: sum the numbers of the "shape" arrays. A key's parts come one at a time only when
// a key spans two writes; each line is written whole.
struct shape_handler {
  using string_view = boost::json::string_view;
  using error_code = boost::json::error_code;
  static constexpr std::size_t max_object_size = static_cast<std::size_t>(-1);
  static constexpr std::size_t max_array_size = static_cast<std::size_t>(-1);
  static constexpr std::size_t max_key_size = static_cast<std::size_t>(-1);
  static constexpr std::size_t max_string_size = static_cast<std::size_t>(-1);

  std::int64_t sum = 0;
  bool after_shape_key = false;
  bool in_shape = false;

  bool on_document_begin(error_code&) { return true; }
  bool on_document_end(error_code&) { return true; }
  bool on_object_begin(error_code&) { return true; }
  bool on_object_end(std::size_t, error_code&) { return true; }
  bool on_array_begin(error_code&) {
    in_shape = after_shape_key;
    after_shape_key = false;
    return true;
  }
  bool on_array_end(std::size_t, error_code&) {
    in_shape = false;
    return true;
  }
  bool on_key_part(string_view, std::size_t, error_code&) { return true; }
  bool on_key(string_view key, std::size_t, error_code&) {
    after_shape_key = key == "shape";
    return true;
  }
  bool on_string_part(string_view, std::size_t, error_code&) { return true; }
  bool on_string(string_view, std::size_t, error_code&) { return true; }
  bool on_number_part(string_view, error_code&) { return true; }
  bool on_int64(std::int64_t i, string_view, error_code&) {
    if (in_shape) sum += i;
    return true;
  }
  bool on_uint64(std::uint64_t u, string_view, error_code&) {
    if (in_shape) sum += static_cast<std::int64_t>(u);
    return true;
  }
  bool on_double(double, string_view, error_code&) { return true; }
  bool on_bool(bool, error_code&) { return true; }
  bool on_null(error_code&) { return true; }
  bool on_comment_part(string_view, error_code&) { return true; }
  bool on_comment(string_view, error_code&) { return true; }
};

void read_boost_basic_parser(benchmark::State& state) {
  if (!have_file(state)) return;
  boost::json::basic_parser<shape_handler> parser{boost::json::parse_options{}};
  std::size_t records = 0;
  for (auto _ : state) {
    parser.handler().sum = 0;
    records = for_each_line(records_file, [&](const char* line, std::size_t length, std::size_t) {
      boost::json::error_code ec;
      parser.reset();
      parser.write_some(false, line, length, ec);
      if (ec) throw std::runtime_error("basic_parser: " + ec.message());
    });
    benchmark::DoNotOptimize(parser.handler().sum);
  }
  report(state, records, file_bytes(records_file));
  state.counters["shape_sum"] = static_cast<double>(parser.handler().sum);
}

//=== merging the shards' summaries ===//

struct shard_summaries {
  std::vector<std::pair<std::string, std::string>> named;
  std::size_t records = 0;
  std::size_t bytes = 0;  // the shards' record bytes, for bytes/s against the one pass
};

// Each shard's summary, as `hookscope-shapes summarize SHARD` writes it; made once per process.
const shard_summaries& summaries() {
  static const shard_summaries made = [] {
    shard_summaries s;
    std::vector<std::string> shards;
    for (const auto& entry : std::filesystem::directory_iterator(shards_dir)) {
      if (entry.path().extension() == ".jsonl") shards.push_back(entry.path().string());
    }
    std::sort(shards.begin(), shards.end());
    hookscope::load_options options = every_call();
    options.for_summary = true;
    for (const std::string& shard : shards) {
      const hookscope::loaded_engine loaded = hookscope::load_engine({shard}, options);
      s.named.emplace_back(shard, loaded.engine.to_summary_json(loaded.function));
      s.records += loaded.calls_read;
      s.bytes += file_bytes(shard);
    }
    return s;
  }();
  return made;
}

void read_merge_summaries(benchmark::State& state) {
  if (shards_dir.empty() || !std::filesystem::is_directory(shards_dir)) {
    for (auto _ : state) {
    }
    state.SkipWithError(
        "no shards: give their directory as the second argument or HOOKSCOPE_READ_BENCH_SHARDS "
        "(tools/generate_records.py DIR --shards 1000)");
    return;
  }
  const shard_summaries& s = summaries();
  for (auto _ : state) {
    const hookscope::loaded_engine merged = hookscope::load_summaries(s.named, every_call());
    const std::string ds = merged.engine.infer_dynamic_shapes({}).to_json();
    benchmark::DoNotOptimize(ds.data());
    if (merged.engine.num_obs() != s.records) state.SkipWithError("calls lost in the merge");
  }
  report(state, s.records, s.bytes);
  state.counters["summaries"] = static_cast<double>(s.named.size());
}

//=== --rss FILE: peak memory of one pass, one child process per repetition ===//

constexpr double max_rss_mib = 20.0;  // the target for a 1 GB file

double seconds_of(const timeval& t) { return static_cast<double>(t.tv_sec) + static_cast<double>(t.tv_usec) / 1e6; }

int rss_mode(const std::string& path, int repetitions) {
  std::printf(
      "| run | records | wall s | CPU s | records/s (CPU) | peak RSS MiB |\n| ---: | ---: | ---: | ---: | ---: | ---: "
      "|\n");
  std::vector<double> rss;
  std::vector<double> rates;
  for (int run = 1; run <= repetitions; ++run) {
    int fds[2];
    if (pipe(fds) != 0) {
      std::perror("read_bench: pipe");
      return 2;
    }
    const auto start = std::chrono::steady_clock::now();
    const pid_t child = fork();
    if (child < 0) {
      std::perror("read_bench: fork");
      return 2;
    }
    if (child == 0) {
      close(fds[0]);
      std::size_t records = 0;
      try {
        records = infer_file(path);
      } catch (const std::exception& e) {
        std::fprintf(stderr, "read_bench: %s\n", e.what());
        _exit(1);
      }
      const ssize_t wrote = write(fds[1], &records, sizeof records);
      _exit(wrote == sizeof records ? 0 : 1);
    }
    close(fds[1]);
    std::size_t records = 0;
    const ssize_t got = read(fds[0], &records, sizeof records);
    close(fds[0]);
    int status = 0;
    rusage usage{};
    if (wait4(child, &status, 0, &usage) != child || !WIFEXITED(status) || WEXITSTATUS(status) != 0 ||
        got != sizeof records) {
      std::fprintf(stderr, "read_bench: the run on %s failed\n", path.c_str());
      return 1;
    }
    const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    const double cpu = seconds_of(usage.ru_utime) + seconds_of(usage.ru_stime);
    rss.push_back(static_cast<double>(usage.ru_maxrss) / 1024.0);  // kilobytes on Linux
    rates.push_back(static_cast<double>(records) / cpu);           // per CPU second, as the table of read_bench
    std::printf("| %d | %zu | %.2f | %.2f | %.0f | %.1f |\n", run, records, wall, cpu, rates.back(), rss.back());
  }
  const auto median = [](std::vector<double> v) {
    std::sort(v.begin(), v.end());
    return v.size() % 2 == 1 ? v[v.size() / 2] : (v[v.size() / 2 - 1] + v[v.size() / 2]) / 2;
  };
  const double peak = median(rss);
  std::printf("\nmedian of %d: %.0f records per CPU second, peak RSS %.1f MiB (%.1f GB file, --store-n-calls all)\n",
              repetitions, median(rates), peak, static_cast<double>(file_bytes(path)) / 1e9);
  std::printf("- %s: peak RSS <= %.0f MiB reading the file with every call summarised: %.1f MiB\n",
              peak <= max_rss_mib ? "met" : "NOT met", max_rss_mib, peak);
  return 0;
}

const char* env_or_empty(const char* name) {
  const char* value = std::getenv(name);
  return value == nullptr ? "" : value;
}

}  // namespace

BENCHMARK(read_hookscope)->Iterations(1)->Unit(benchmark::kMillisecond);
BENCHMARK(read_floor_simdjson)->Iterations(1)->Unit(benchmark::kMillisecond);
BENCHMARK(read_boost_basic_parser)->Iterations(1)->Unit(benchmark::kMillisecond);
BENCHMARK(read_merge_summaries)->Iterations(1)->Unit(benchmark::kMillisecond);

int main(int argc, char** argv) {
  if (argc >= 3 && std::string_view(argv[1]) == "--rss") {
    int repetitions = 1;
    if (argc == 5 && std::string_view(argv[3]) == "--repetitions") repetitions = std::max(1, std::atoi(argv[4]));
    return rss_mode(argv[2], repetitions);
  }
  benchmark::Initialize(&argc, argv);
  records_file = argc > 1 ? argv[1] : env_or_empty("HOOKSCOPE_READ_BENCH_FILE");
  shards_dir = argc > 2 ? argv[2] : env_or_empty("HOOKSCOPE_READ_BENCH_SHARDS");
  benchmark::AddCustomContext("read_records_file", records_file);
  benchmark::AddCustomContext("read_shards", shards_dir);
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
