// bench/shapes.bench.cpp — what `hookscope-shapes infer --store-n-calls all` costs on long recordings: records
// per second, and whether memory stays flat (docs/architecture.md: 1 M records at >= 200 k records/s, memory flat).
//
// The input is LLM-like JSONL: generate() calls of varying batch and prompt length, each a prefill then decode
// steps with a growing KV cache (a DynamicCache of 4 layers). A pool of distinct lines is generated once; a
// stream buffer serves them in turn, so reading N records holds one pool in memory whatever N is, and the
// peak RSS after 100 k and after 1 M records shows whether reading and inference stay flat.
//
// `shapes_json_parse` is the baseline: Boost.JSON parsing the same lines, no conversion, no inference.
// `shapes_read` adds the record reader (value trees, checks); `shapes_read_infer` adds the streaming engine.
// `shapes_summarize_shard` and `shapes_merge_summaries` are the same inference as a map-reduce over 100 shards.
// `shapes_merge_wide_shards`: merging alone, 1,000 shards with max_label_dims dims tracked each.
// `shapes_many_inputs_record`: 1,600 keyword inputs per call, recorded.
// `shapes_optional_*`: 5,000 distinct calls with an optional input, inferred (placeholders for every distinct call).
// `shapes_add_call_sizes` records LLM calls of two structures from their sizes (shape_engine::add_structure) beside
// `shapes_add_call_whole`, the same calls given as value trees (add_call of a copy: what a caller holding a tree pays).
#include "hookscope/records.hpp"
#include "hookscope/shapes.hpp"

#include <benchmark/benchmark.h>
#include <boost/json.hpp>

#include "bench_context.hpp"

#include <sys/resource.h>

#include <cstddef>
#include <cstdint>
#include <istream>
#include <streambuf>
#include <string>
#include <vector>

namespace {

constexpr int layers = 4;

std::string tensor(std::int64_t a, std::int64_t b, const char* dtype) {
  return "{\"shape\":[" + std::to_string(a) + "," + std::to_string(b) + "],\"dtype\":\"" + dtype + "\"}";
}

std::string cache_tensor(std::int64_t batch, std::int64_t past) {
  return "{\"shape\":[" + std::to_string(batch) + ",8," + std::to_string(past) + ",64],\"dtype\":\"float16\"}";
}

// One forward() call: `length` new tokens after `past` cached ones (past 0: the prefill, no cache).
std::string forward_line(std::int64_t batch, std::int64_t length, std::int64_t past, bool with_signature) {
  std::string line = "{\"function\":\"LlamaForCausalLM::forward\",";
  if (with_signature) {
    line +=
        "\"signature\":[{\"name\":\"input_ids\"},{\"name\":\"attention_mask\"},{\"name\":\"position_ids\"},"
        "{\"name\":\"past_key_values\",\"default\":null},{\"name\":\"use_cache\",\"default\":{\"bool\":true}}],";
  }
  line += "\"args\":[],\"kwargs\":[[\"input_ids\"," + tensor(batch, length, "int64") + "],[\"attention_mask\"," +
          tensor(batch, past + length, "int64") + "],[\"position_ids\"," + tensor(batch, length, "int64") +
          "],[\"past_key_values\",";
  if (past == 0) {
    line += "null";
  } else {
    line += "{\"struct\":\"DynamicCache\",\"fields\":[";
    for (int l = 0; l < layers; ++l) {
      if (l != 0) line += ",";
      line += "[\"key_" + std::to_string(l) + "\"," + cache_tensor(batch, past) + "],[\"value_" + std::to_string(l) +
              "\"," + cache_tensor(batch, past) + "]";
    }
    line += "]}";
  }
  line += "],[\"use_cache\",{\"bool\":true}]],\"result\":{\"shape\":[" + std::to_string(batch) + "," +
          std::to_string(length) + ",32000],\"dtype\":\"float32\"},\"latency_ns\":" + std::to_string(1000 + 37 * past) +
          "}\n";
  return line;
}

// generate() calls of batch 1..8 and prompts of 5..180 tokens, 16 decode steps each, until `count` lines.
std::vector<std::string> make_pool(std::size_t count) {
  std::vector<std::string> pool;
  pool.reserve(count);
  for (std::int64_t round = 0; pool.size() < count; ++round) {
    const std::int64_t batch = std::int64_t{1} << (round % 4);
    const std::int64_t prompt = 5 + (round * 37) % 176;
    pool.push_back(forward_line(batch, prompt, 0, pool.empty()));
    for (std::int64_t step = 0; step < 16 && pool.size() < count; ++step) {
      pool.push_back(forward_line(batch, 1, prompt + step, false));
    }
  }
  return pool;
}

// Not const: std::streambuf::setg takes char*, though nothing writes to the lines.
std::vector<std::string>& pool() {
  static std::vector<std::string> lines = make_pool(4096);
  return lines;
}

// Serves the pool's lines in turn, `records` of them, without copying: the stream of a long recording.
class pool_buffer : public std::streambuf {
 public:
  explicit pool_buffer(std::size_t records) : left_(records) {}

 protected:
  int_type underflow() override {
    if (left_ == 0) return traits_type::eof();
    --left_;
    std::string& line = pool()[next_];
    next_ = (next_ + 1) % pool().size();
    setg(line.data(), line.data(), line.data() + line.size());
    return traits_type::to_int_type(line[0]);
  }

 private:
  std::size_t left_;
  std::size_t next_ = 0;
};

double peak_rss_mib() {
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  return static_cast<double>(usage.ru_maxrss) / 1024.0;  // kilobytes on Linux
}

void report(benchmark::State& state, std::size_t records, double rss_before) {
  state.counters["records_per_s"] =
      benchmark::Counter(static_cast<double>(records), benchmark::Counter::kIsIterationInvariantRate);
  state.counters["peak_rss_before_MiB"] = rss_before;
  state.counters["peak_rss_after_MiB"] = peak_rss_mib();
}

void shapes_json_parse(benchmark::State& state) {
  const auto records = static_cast<std::size_t>(state.range(0));
  const double rss_before = peak_rss_mib();
  alignas(std::max_align_t) unsigned char first_block[16 * 1024];
  for (auto _ : state) {
    boost::json::parser parser;
    std::size_t keys = 0;
    for (std::size_t i = 0; i < records; ++i) {
      const std::string& line = pool()[i % pool().size()];
      boost::json::monotonic_resource memory(first_block, sizeof first_block);
      parser.reset(&memory);
      parser.write(line.data(), line.size());
      keys += parser.release().as_object().size();
    }
    benchmark::DoNotOptimize(keys);
  }
  report(state, records, rss_before);
}

void shapes_read(benchmark::State& state) {
  const auto records = static_cast<std::size_t>(state.range(0));
  const double rss_before = peak_rss_mib();
  for (auto _ : state) {
    pool_buffer buffer(records);
    std::istream in(&buffer);
    hookscope::record_reader reader(in, "bench.jsonl");
    hookscope::call_record record;
    std::size_t read = 0;
    while (reader.next(record)) ++read;
    if (read != records) state.SkipWithError("records lost");
  }
  report(state, records, rss_before);
}

void shapes_read_infer(benchmark::State& state) {
  const auto records = static_cast<std::size_t>(state.range(0));
  const double rss_before = peak_rss_mib();
  for (auto _ : state) {
    pool_buffer buffer(records);
    std::istream in(&buffer);
    hookscope::record_reader reader(in, "bench.jsonl");
    hookscope::shape_engine engine({.store_n_calls = hookscope::unlimited, .keep_calls = false});
    hookscope::call_record record;
    bool started = false;
    while (reader.next(record)) {
      if (!started) {
        engine.set_parameters(*record.parameters);
        engine.begin_recording();
        started = true;
      }
      engine.add_call(std::move(record.inputs));
    }
    hookscope::dynamic_shapes_options options;
    options.batch_dimension_for = {"input_ids"};
    const std::string ds = engine.infer_dynamic_shapes(options).to_json();
    benchmark::DoNotOptimize(ds.data());
    if (engine.num_obs() != records) state.SkipWithError("calls lost");
  }
  report(state, records, rss_before);
}

// Records [first, first + count) of the stream, summarised as a worker would (the signature is that of the stream's
// first record, as `summarize --signature-from` gives it to a part cut from a file).
std::string summarize_records(std::size_t first, std::size_t count) {
  const hookscope::call_record head = hookscope::parse_record(pool()[0]);
  hookscope::shape_engine engine({.store_n_calls = hookscope::unlimited, .keep_calls = false});
  engine.set_parameters(*head.parameters);
  engine.begin_recording();
  for (std::size_t i = first; i < first + count; ++i)
    engine.add_call(hookscope::parse_record(pool()[i % pool().size()]).inputs);
  return engine.to_summary_json("Model::forward");
}

constexpr std::size_t shard_records = 10'000;

// Summarising one shard of 10 k records: a worker's part of the map-reduce.
void shapes_summarize_shard(benchmark::State& state) {
  std::size_t bytes = 0;
  for (auto _ : state) {
    const std::string summary = summarize_records(0, shard_records);
    bytes = summary.size();
    benchmark::DoNotOptimize(summary.data());
  }
  state.counters["summary_bytes"] = static_cast<double>(bytes);
  state.counters["records_per_s"] =
      benchmark::Counter(static_cast<double>(shard_records), benchmark::Counter::kIsIterationInvariantRate);
}

// The driver's part: read N summaries of R records each (made beforehand, as the workers would), merge them in
// order, infer. N = 100, R = 10 k covers the 1 M records of shapes_read_infer/1000000, the one pass to compare with;
// N = 1,000, R = 200 is a thousand-shard merge of 200 k records.
void shapes_merge_summaries(benchmark::State& state) {
  const auto shards = static_cast<std::size_t>(state.range(0));
  const auto records = static_cast<std::size_t>(state.range(1));
  std::vector<std::string> summaries;
  for (std::size_t i = 0; i < shards; ++i) summaries.push_back(summarize_records(i * records, records));
  for (auto _ : state) {
    hookscope::shape_engine merged({.store_n_calls = hookscope::unlimited, .keep_calls = false});
    for (const std::string& s : summaries) merged.merge(hookscope::shape_engine::from_summary_json(s));
    hookscope::dynamic_shapes_options options;
    options.batch_dimension_for = {"input_ids"};
    const std::string ds = merged.infer_dynamic_shapes(options).to_json();
    benchmark::DoNotOptimize(ds.data());
    if (merged.num_obs() != shards * records) state.SkipWithError("calls lost");
  }
  state.counters["records_per_s"] =
      benchmark::Counter(static_cast<double>(shards * records), benchmark::Counter::kIsIterationInvariantRate);
}

// 5,000 distinct calls with an optional input (the cache, absent at every prefill): every distinct call needs its
// placeholders for the relations and profiles, which must not scan every other distinct call (that was quadratic:
// ~70 s for these 5,000). `shapes_optional_record` (recording alone) is the baseline of the two inferences.
std::vector<hookscope::call_inputs> optional_calls() {
  std::vector<hookscope::call_inputs> out;
  for (std::int64_t i = 0; i < 5000; ++i) {
    const std::int64_t batch = 1 + i % 3;
    const std::int64_t seq = i % 2 == 0 ? 2 + i / 2 : 1;
    const std::int64_t past = i % 2 == 0 ? 0 : 2 + i / 2;
    hookscope::value_fields kw{
        {"input_ids", hookscope::tensor_spec{{batch, seq}, hookscope::dtype::int64}},
        {"attention_mask", hookscope::tensor_spec{{batch, past + seq}, hookscope::dtype::int64}}};
    if (past != 0) kw.emplace_back("past_key_values", hookscope::tensor_spec{{batch, 8, past, 64}});
    out.push_back({{}, std::move(kw)});
  }
  return out;
}

hookscope::shape_engine record_optional(const std::vector<hookscope::call_inputs>& calls) {
  hookscope::shape_engine engine({.store_n_calls = hookscope::unlimited, .keep_calls = false});
  engine.set_parameters({{"input_ids"},
                         {"attention_mask"},
                         {"past_key_values", hookscope::parameter_kind::positional_or_keyword, hookscope::value()}});
  engine.begin_recording();
  for (const auto& c : calls) engine.add_call(c);
  return engine;
}

void shapes_optional_record(benchmark::State& state) {
  const auto calls = optional_calls();
  for (auto _ : state) {
    const hookscope::shape_engine engine = record_optional(calls);
    benchmark::DoNotOptimize(engine.num_obs());
  }
}

void shapes_optional_infer_dynamic_shapes(benchmark::State& state) {
  const auto calls = optional_calls();
  for (auto _ : state) {
    const hookscope::shape_engine engine = record_optional(calls);
    const hookscope::dynamic_shapes ds = engine.infer_dynamic_shapes({.dim_names = true});
    if (ds.tensorrt_profiles().empty()) state.SkipWithError("no profile");
    benchmark::DoNotOptimize(ds.relations().size());
  }
}

void shapes_optional_infer_arguments(benchmark::State& state) {
  const auto calls = optional_calls();
  for (auto _ : state) {
    const hookscope::shape_engine engine = record_optional(calls);
    const hookscope::value args = engine.infer_arguments().arguments;
    benchmark::DoNotOptimize(&args);
  }
}

// 1,600 one-dim keyword inputs x 400 calls, given in reverse signature order: every per-call lookup of a name (its
// signature position, its default, its key) must cost O(1), or recording grows with the square of the inputs.
constexpr std::size_t many_inputs = 1600;

// Appended rather than "x" + std::to_string(i), which GCC 12's -O3 -Wrestrict misreads.
std::string input_name(std::size_t i) {
  std::string name = "x";
  name += std::to_string(i);
  return name;
}

std::vector<hookscope::call_inputs> many_input_calls(std::size_t inputs, std::size_t calls) {
  std::vector<hookscope::call_inputs> out;
  for (std::size_t c = 0; c < calls; ++c) {
    hookscope::value_fields kw;
    for (std::size_t i = inputs; i-- > 0;) {
      kw.emplace_back(input_name(i), hookscope::tensor_spec{{static_cast<std::int64_t>(1 + (c + i % 3) % 5)},
                                                            hookscope::dtype::int64});
    }
    out.push_back({{}, std::move(kw)});
  }
  return out;
}

void shapes_many_inputs_record(benchmark::State& state) {
  const auto calls = many_input_calls(many_inputs, static_cast<std::size_t>(state.range(0)));
  hookscope::parameter_list sig;
  for (std::size_t i = 0; i < many_inputs; ++i) sig.push_back({input_name(i)});
  for (auto _ : state) {
    hookscope::shape_engine engine({.store_n_calls = hookscope::unlimited, .keep_calls = false});
    engine.set_parameters(sig);
    engine.begin_recording();
    for (const auto& c : calls) engine.add_call(c);
    benchmark::DoNotOptimize(engine.num_obs());
  }
  state.counters["calls_per_s"] =
      benchmark::Counter(static_cast<double>(calls.size()), benchmark::Counter::kIsIterationInvariantRate);
}

// Merging alone, on summaries read beforehand (from_summary_json): 1,000 shards of 4 calls, each call 260 rank-4
// inputs whose sizes vary, so that max_label_dims (1,024) dims have their pairs tracked and merged in every shard.
void shapes_merge_wide_shards(benchmark::State& state) {
  const auto shards = static_cast<std::size_t>(state.range(0));
  hookscope::parameter_list sig;
  for (std::size_t i = 0; i < 260; ++i) sig.push_back({input_name(i)});
  std::vector<hookscope::shape_engine> parts;
  for (std::size_t s = 0; s < shards; ++s) {
    hookscope::shape_engine part({.store_n_calls = hookscope::unlimited, .keep_calls = false});
    part.set_parameters(sig);
    part.begin_recording();
    for (std::size_t c = 0; c < 4; ++c) {
      hookscope::value_fields kw;
      for (std::size_t i = 0; i < sig.size(); ++i) {
        const auto n = static_cast<std::int64_t>(1 + (s * 4 + c + i) % 9);
        kw.emplace_back(sig[i].name, hookscope::tensor_spec{{n, 2, n + 1, 3}, hookscope::dtype::int64});
      }
      part.add_call({{}, std::move(kw)});
    }
    parts.push_back(hookscope::shape_engine::from_summary_json(part.to_summary_json()));
  }
  for (auto _ : state) {
    hookscope::shape_engine merged({.store_n_calls = hookscope::unlimited, .keep_calls = false});
    for (const auto& part : parts) merged.merge(part);
    benchmark::DoNotOptimize(merged.num_obs());
  }
  state.counters["merges_per_s"] =
      benchmark::Counter(static_cast<double>(shards), benchmark::Counter::kIsIterationInvariantRate);
}

// forward() calls of two structures (a prefill without a cache, decode steps with a DynamicCache of 4 layers), 256
// distinct ones in turn: after the first round every call repeats a distinct call (the usual case of long recordings).
struct llm_calls {
  std::vector<hookscope::call_inputs> calls;
  std::vector<std::vector<std::int64_t>> sizes;  // each call's tensors' sizes, in leaf order
};

llm_calls forward_calls() {
  llm_calls out;
  for (std::int64_t i = 0; i < 256; ++i) {
    const std::int64_t batch = 1 + i % 2, past = i % 16 == 0 ? 0 : 8 + i, seq = past == 0 ? 8 + i % 64 : 1;
    const auto t = [](std::vector<std::int64_t> shape, hookscope::dtype type) {
      return hookscope::value(hookscope::tensor_spec{std::move(shape), type});
    };
    hookscope::value_fields kw{{"input_ids", t({batch, seq}, hookscope::dtype::int64)},
                               {"attention_mask", t({batch, past + seq}, hookscope::dtype::int64)},
                               {"position_ids", t({batch, seq}, hookscope::dtype::int64)}};
    std::vector<std::int64_t> sizes{batch, seq, batch, past + seq, batch, seq};
    if (past > 0) {
      hookscope::value_fields cache;
      for (int l = 0; l < layers; ++l) {
        for (const char* kind : {"key_", "value_"}) {
          cache.emplace_back(kind + std::to_string(l), t({batch, 8, past, 64}, hookscope::dtype::float16));
          sizes.insert(sizes.end(), {batch, 8, past, 64});
        }
      }
      kw.emplace_back("past_key_values", hookscope::value::structure("DynamicCache", std::move(cache)));
    }
    kw.emplace_back("use_cache", hookscope::value(true));
    out.calls.push_back({{}, std::move(kw)});
    out.sizes.push_back(std::move(sizes));
  }
  return out;
}

hookscope::shape_engine forward_engine() {
  hookscope::shape_engine engine({.store_n_calls = hookscope::unlimited, .keep_calls = false});
  engine.set_parameters({{"input_ids"},
                         {"attention_mask"},
                         {"position_ids"},
                         {"past_key_values", hookscope::parameter_kind::positional_or_keyword, hookscope::value()},
                         {"use_cache", hookscope::parameter_kind::positional_or_keyword, hookscope::value(true)}});
  engine.begin_recording();
  return engine;
}

constexpr std::size_t forward_calls_per_engine = 4096;

void shapes_add_call_whole(benchmark::State& state) {
  const llm_calls in = forward_calls();
  for (auto _ : state) {
    hookscope::shape_engine engine = forward_engine();
    for (std::size_t i = 0; i < forward_calls_per_engine; ++i) engine.add_call(in.calls[i % in.calls.size()]);
    if (engine.num_obs() != forward_calls_per_engine) state.SkipWithError("calls lost");
  }
  state.SetItemsProcessed(static_cast<std::int64_t>(state.iterations() * forward_calls_per_engine));
}

void shapes_add_call_sizes(benchmark::State& state) {
  const llm_calls in = forward_calls();
  for (auto _ : state) {
    hookscope::shape_engine engine = forward_engine();
    // One structure per distinct structure (as a record reader recognises them): the prefill's and the decode's.
    const hookscope::call_structure prefill = engine.add_structure(in.calls[0]);
    const hookscope::call_structure decode = engine.add_structure(in.calls[1]);
    for (std::size_t i = 0; i < forward_calls_per_engine; ++i) {
      const std::vector<std::int64_t>& sizes = in.sizes[i % in.sizes.size()];
      engine.add_call(sizes.size() == prefill.sizes ? prefill : decode, sizes);
    }
    if (engine.num_obs() != forward_calls_per_engine) state.SkipWithError("calls lost");
  }
  state.SetItemsProcessed(static_cast<std::int64_t>(state.iterations() * forward_calls_per_engine));
}

}  // namespace

// 100 k then 1 M records in one process: equal peaks after both mean memory does not grow with the input.
BENCHMARK(shapes_json_parse)->Arg(100'000)->Iterations(1)->Unit(benchmark::kMillisecond);
BENCHMARK(shapes_read)->Arg(100'000)->Arg(1'000'000)->Iterations(1)->Unit(benchmark::kMillisecond);
BENCHMARK(shapes_read_infer)->Arg(100'000)->Arg(1'000'000)->Iterations(1)->Unit(benchmark::kMillisecond);
// The map-reduce of summaries: one shard's summary, then merging 100 of them beside the one pass above.
BENCHMARK(shapes_summarize_shard)->Unit(benchmark::kMillisecond);
BENCHMARK(shapes_merge_summaries)->Args({100, shard_records})->Args({1000, 200})->Unit(benchmark::kMillisecond);
BENCHMARK(shapes_merge_wide_shards)->Arg(1000)->Iterations(1)->Unit(benchmark::kMillisecond);
// 5,000 distinct calls with an optional input: recording alone, then each inference on top of it.
BENCHMARK(shapes_optional_record)->Unit(benchmark::kMillisecond);
BENCHMARK(shapes_optional_infer_dynamic_shapes)->Unit(benchmark::kMillisecond);
BENCHMARK(shapes_optional_infer_arguments)->Unit(benchmark::kMillisecond);
// 1,600 one-dim keyword inputs, 400 calls: recording linear in the number of inputs.
// 4,096 LLM calls recorded: as value trees, then from their sizes (items per second: calls).
BENCHMARK(shapes_add_call_whole)->Unit(benchmark::kMicrosecond);
BENCHMARK(shapes_add_call_sizes)->Unit(benchmark::kMicrosecond);

BENCHMARK(shapes_many_inputs_record)->Arg(400)->Iterations(1)->Unit(benchmark::kMillisecond);

BENCHMARK_MAIN();
