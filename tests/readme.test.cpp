// Every C++ block of README.md, compiled and run here; tests/docs/test_readme_snippets.py checks that the
// README shows exactly these lines (so clang-format leaves each snippet as the README shows it).
#include "hookscope/hookscope.hpp"
#include "hookscope/observable.hpp"
#include "hookscope/recorder.hpp"

#include <catch2/catch.hpp>

#include <cstdio>
#include <filesystem>
#include <future>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

namespace readme {

struct graph {
  std::vector<int> nodes;
};
struct engine {
  std::string serialized;
};
inline engine do_convert(const graph& g) { return {"engine:" + std::to_string(g.nodes.size())}; }

// clang-format off
// [snippet: declare]
// In the compiler: a named event source, constant-initialised, usable from anywhere.
constinit hookscope::observer<const graph&, const engine&> on_subgraph_converted{"on_subgraph_converted"};

engine convert_subgraph(const graph& g) {
  engine result = do_convert(g);
  on_subgraph_converted.observe(g, result);  // fire: runs every callback visible here
  return result;
}
// [/snippet]
// clang-format on

inline std::vector<engine> compile(const std::vector<graph>& parts) {
  std::vector<engine> out;
  for (const auto& p : parts) out.push_back(convert_subgraph(p));
  return out;
}

struct settings {
  int level = 0;
};

}  // namespace readme

// The annotations at global scope, as in the README: registry names are qualified by the enclosing namespace
// ("passes::lower") or class ("model::forward").
using readme::graph;
using readme::settings;

// clang-format off
// [snippet: observable_declare]
namespace passes {
namespace impl {
graph lower(graph gm, const settings& s);  // the implementation, unchanged
}
HOOKSCOPE_OBSERVABLE(lower, impl::lower, gm, settings);  // name, function, parameter names
}  // namespace passes
// [/snippet]
// clang-format on

graph passes::impl::lower(graph gm, const settings& s) {
  gm.nodes.resize(gm.nodes.size() / 2 + static_cast<std::size_t>(s.level));
  return gm;
}

// clang-format off
// [snippet: observable_defaults]
namespace text {
namespace impl {
std::string pad(const std::string& s, std::size_t width = 8, char fill = ' ');
}
HOOKSCOPE_OBSERVABLE(pad, impl::pad, s, width = 8, fill = ' ');
}  // namespace text
// [/snippet]
// clang-format on

std::string text::impl::pad(const std::string& s, std::size_t width, char fill) {
  return s.size() >= width ? s : std::string(width - s.size(), fill) + s;
}

// clang-format off
// [snippet: observable_method]
class model {
 public:
  int forward_impl(int input_ids, int attention_mask) { return input_ids * 2 + attention_mask; }
  HOOKSCOPE_OBSERVABLE_METHOD(model, forward, forward_impl, input_ids, attention_mask);
};
// [/snippet]
// clang-format on

namespace readme {

namespace vendor {  // a library you cannot annotate
inline int compile_module(int graph_id, double budget) { return graph_id + static_cast<int>(budget); }
struct backend_table {
  int (*compile_module)(int, double);
};
inline backend_table backend{&compile_module};
inline int run_pipeline(int graph_id) { return backend.compile_module(graph_id, 1.0); }
}  // namespace vendor

// clang-format off
// [snippet: capture_types]
struct generation_config {  // an aggregate: captured field by field (Boost.PFR)
  int max_new_tokens = 0;
  std::optional<hookscope::tensor_spec> pixel_values;
};

class kv_cache {  // private members: it names its children, like registering a pytree node
 public:
  std::vector<hookscope::tensor_spec> keys, values;  // (public here only to keep the example short)
};
}  // namespace readme

template <>
struct hookscope::flatten_traits<readme::kv_cache> {
  static constexpr std::string_view name = "DynamicCache";
  static std::vector<std::pair<std::string, hookscope::tensor_spec>> flatten(const readme::kv_cache& c) {
    std::vector<std::pair<std::string, hookscope::tensor_spec>> children;
    for (std::size_t i = 0; i < c.keys.size(); ++i) {
      children.emplace_back("key_" + std::to_string(i), c.keys[i]);
      children.emplace_back("value_" + std::to_string(i), c.values[i]);
    }
    return children;
  }
};
// [/snippet]
// clang-format on

namespace readme {
namespace impl {
inline hookscope::tensor_spec forward(const hookscope::tensor_spec& input_ids,
                                      const std::optional<hookscope::tensor_spec>& attention_mask) {
  (void)attention_mask;
  return {{input_ids.shape.at(0), input_ids.shape.at(1), 64}, hookscope::dtype::float32};
}
}  // namespace impl
HOOKSCOPE_OBSERVABLE(forward, impl::forward, input_ids, attention_mask);
}  // namespace readme

using namespace readme;

#if HOOKSCOPE_ENABLED

TEST_CASE("README: scoped callbacks") {
  const std::vector<graph> partitions{{{1, 2}}, {{3}}};
  // clang-format off
  // [snippet: scoped]
  std::vector<std::string> records;
  {
    auto sub = on_subgraph_converted.add([&](const graph& g, const engine& e) {
      records.push_back(std::to_string(g.nodes.size()) + " nodes -> " + e.serialized);
    });
    compile(partitions);  // every conversion in this thread is recorded
  }                       // the callback is removed here
  compile(partitions);    // not recorded
  // [/snippet]
  // clang-format on
  CHECK(records == std::vector<std::string>{"2 nodes -> engine:2", "1 nodes -> engine:1"});
}

TEST_CASE("README: release and remove") {
  int calls = 0;
  auto count_it = [&](const graph&, const engine&) { ++calls; };
  // clang-format off
  // [snippet: release]
  hookscope::callback_id id = on_subgraph_converted.add(count_it).release();  // stays registered
  convert_subgraph(graph{});
  on_subgraph_converted.remove(id);  // until removed by id
  // [/snippet]
  // clang-format on
  convert_subgraph(graph{});
  CHECK(calls == 1);
}

TEST_CASE("README: global callbacks and contexts") {
  int seen = 0;
  auto count_it = [&](const auto&, const auto&) { ++seen; };
  // clang-format off
  // [snippet: contexts]
  auto mine = on_subgraph_converted.add(count_it);  // this thread's context only
  std::async(std::launch::async, [] { convert_subgraph(graph{}); }).wait();
  CHECK(seen == 0);  // a callback added in one thread is invisible in another

  auto ctx = hookscope::context::current();
  std::async(std::launch::async, [ctx] {
    auto scope = ctx.attach();  // what a thread pool does on behalf of its caller
    convert_subgraph(graph{});
  }).wait();
  CHECK(seen == 1);  // the worker shared our context

  auto everywhere = on_subgraph_converted.add_global(count_it);  // every thread, every context
  std::async(std::launch::async, [] { convert_subgraph(graph{}); }).wait();
  CHECK(seen == 2);
  // [/snippet]
  // clang-format on
}

TEST_CASE("README: copy a context") {
  std::vector<std::string> log;
  // clang-format off
  // [snippet: copy]
  auto a = on_subgraph_converted.add([&](const auto&, const auto&) { log.push_back("a"); });
  hookscope::context snapshot = hookscope::context::current().copy();  // holds `a` too
  auto b = on_subgraph_converted.add([&](const auto&, const auto&) { log.push_back("b"); });  // not in the copy
  {
    auto scope = snapshot.attach();
    convert_subgraph(graph{});                // a
  }
  a.reset();                                  // gone from this thread's context and from the copy
  {
    auto scope = snapshot.attach();
    convert_subgraph(graph{});                // nothing
  }
  convert_subgraph(graph{});                  // b
  // [/snippet]
  // clang-format on
  CHECK(log == std::vector<std::string>{"a", "b"});
}

TEST_CASE("README: callback errors") {
  std::vector<std::string> lines;
  // clang-format off
  // [snippet: errors]
  hookscope::set_log_sink([&](std::string_view line) { lines.emplace_back(line); });  // default: stderr
  auto buggy = on_subgraph_converted.add([](const graph&, const engine&) {
    throw std::runtime_error("bad engine");
  });
  convert_subgraph(graph{});  // logged, not thrown: instrumentation never breaks the program
  CHECK(lines.at(0) == "hookscope: a callback of observer 'on_subgraph_converted' threw: bad engine");

  {
    hookscope::rethrow_callback_exceptions_scope rethrow;  // in tests: let it propagate
    REQUIRE_THROWS_AS(convert_subgraph(graph{}), std::runtime_error);
  }
  hookscope::set_log_sink({});  // back to stderr
  // [/snippet]
  // clang-format on
  CHECK(lines.size() == 1);
}

TEST_CASE("README: observable functions") {
  std::vector<std::string> log;
  // clang-format off
  // [snippet: observable_hooks]
  auto before = passes::lower.observers.pre.add([&](const auto& ctx) {
    log.push_back("lowering " + std::to_string(ctx.template arg<"gm">().nodes.size()) + " nodes at level " +
                  std::to_string(ctx.template arg<1>().level));  // by name (checked at compile time) or position
  });
  auto after = passes::lower.observers.post.add([&](const auto& ctx) {
    if (ctx.return_value()) log.push_back("-> " + std::to_string(ctx.return_value()->nodes.size()) + " nodes");
    if (ctx.exception()) log.push_back("-> threw");  // post callbacks run even when the call throws
  });
  graph lowered = passes::lower(graph{{1, 2, 3, 4}}, settings{1});  // called exactly as before
  // [/snippet]
  // clang-format on
  CHECK(lowered.nodes.size() == 3);
  CHECK(log == std::vector<std::string>{"lowering 4 nodes at level 1", "-> 3 nodes"});
}

TEST_CASE("README: default arguments") {
  std::vector<std::string> log;
  auto sub = text::pad.observers.pre.add([&](const auto& ctx) {
    log.push_back(std::to_string(ctx.args_given()) + (ctx.template find_arg<"fill">() ? " fill" : " no fill"));
  });
  CHECK(text::pad("ab", 4) == "  ab");
  CHECK(text::pad("ab", 4, '*') == "**ab");
  CHECK(log ==
        (hookscope::hooks_enabled ? std::vector<std::string>{"2 no fill", "3 fill"} : std::vector<std::string>{}));
}

TEST_CASE("README: observable methods") {
  int seen = 0;
  // clang-format off
  // [snippet: observable_method_use]
  model m;
  auto sub = model::forward_observers().pre.add([&](const auto& ctx) { seen = ctx.template arg<"input_ids">(); });
  m.forward(7, 1);  // the observed call; registered as "model::forward"
  // [/snippet]
  // clang-format on
  CHECK(seen == 7);
  CHECK(hookscope::find_observable("model::forward") != nullptr);
}

TEST_CASE("README: functions you do not own") {
  std::vector<int> results;
  // clang-format off
  // [snippet: make_observable]
  auto observed = hookscope::make_observable("compile_module", &vendor::compile_module);
  auto original = std::exchange(vendor::backend.compile_module, observed.function_pointer());
  {
    auto sub = observed.observers.post.add([&](const auto& ctx) { results.push_back(*ctx.return_value()); });
    vendor::run_pipeline(41);  // the vendor's own code now calls through the observable
  }
  vendor::backend.compile_module = original;  // restore
  // [/snippet]
  // clang-format on
  CHECK(results == std::vector<int>{42});
}

TEST_CASE("README: the registry") {
  std::vector<std::string> lines;
  // clang-format off
  // [snippet: registry]
  for (const hookscope::function_info& f : hookscope::registry()) {
    std::printf("%.*s: %.*s\n", int(f.name.size()), f.name.data(), int(f.signature.size()), f.signature.data());
  }
  const hookscope::function_info* lower = hookscope::find_observable("passes::lower");  // by name: no types needed
  auto sub = lower->pre().add([&](const hookscope::erased_call& call) {
    std::string line(call.function().name);
    for (std::size_t i = 0; i < call.arg_count(); ++i) {
      line.append(" ").append(call.arg_name(i)).append("=").append(call.format_arg(i));
    }
    lines.push_back(line);
  });
  passes::lower(graph{{1, 2}}, settings{0});
  // [/snippet]
  // clang-format on
  CHECK(lines == std::vector<std::string>{"passes::lower gm=<readme::graph> settings=<readme::settings>"});
}

TEST_CASE("README: capture") {
  using hookscope::dtype;
  // clang-format off
  // [snippet: capture]
  const hookscope::value config = hookscope::capture_value(generation_config{16, std::nullopt});
  CHECK(hookscope::to_json(config) ==
        R"({"struct":"readme::generation_config","fields":[["0",{"int":16}],["1",null]]})");

  kv_cache cache{{{{1, 8, 7, 64}, dtype::float16}}, {{{1, 8, 7, 64}, dtype::float16}}};
  const hookscope::value captured = hookscope::capture_value(cache);  // shapes and dtypes, never the data
  CHECK(captured.struct_name() == "DynamicCache");
  CHECK(captured.leaf_count() == 2);
  // [/snippet]
  // clang-format on
}

TEST_CASE("README: recording") {
  using hookscope::dtype;
  const auto path = std::filesystem::temp_directory_path() / "hookscope_readme_forward.jsonl";
  // clang-format off
  // [snippet: recording]
  {
    hookscope::call_recorder rec(forward);  // this thread's calls (or {.global = true}), the first 3 by default
    forward({{1, 7}, dtype::int64}, hookscope::tensor_spec{{1, 7}, dtype::int64});  // prefill
    forward({{1, 1}, dtype::int64}, std::nullopt);                                 // one decode step
    CHECK(rec.num_calls() == 2);
    CHECK(rec.calls()[1].inputs.kwargs[1].second.is_none());  // attention_mask was absent
    rec.write_jsonl(path);  // one JSON object per call; the first line carries the signature
  }                         // recording ends with the recorder
  // [/snippet]
  // clang-format on
  CHECK(std::filesystem::file_size(path) > 0);
  std::filesystem::remove(path);
}

TEST_CASE("README: input_observer") {
  using hookscope::dtype;
  // clang-format off
  // [snippet: input_observer]
  hookscope::input_observer obs;  // keeps the first 3 calls of each recording, as the reference
  {
    auto rec = obs.record(forward);
    forward({{2, 7}, dtype::int64}, hookscope::tensor_spec{{2, 7}, dtype::int64});  // prefill, 2 prompts
    forward({{2, 1}, dtype::int64}, hookscope::tensor_spec{{2, 8}, dtype::int64});  // one decode step
    forward({{1, 5}, dtype::int64}, hookscope::tensor_spec{{1, 5}, dtype::int64});  // another prompt
  }
  const hookscope::dynamic_shapes ds = obs.infer_dynamic_shapes({.dim_names = true});
  CHECK(ds.to_json() == R"({"input_ids":{"0":"batch_size","1":"sequence_length"},)"
                        R"("attention_mask":{"0":"batch_size","1":"total_sequence_length"}})");
  // One consistent profile: opt is a call that happened (the decode step), min/max cover every call.
  CHECK(ds.to_trtexec() == "--minShapes=input_ids:1x1,attention_mask:1x5 "
                           "--optShapes=input_ids:2x1,attention_mask:2x8 "
                           "--maxShapes=input_ids:2x7,attention_mask:2x8");
  const hookscope::value args = obs.infer_arguments();  // a representative call, placeholders filled
  CHECK(hookscope::to_json(args) == R"({"dict":[["input_ids",{"shape":[2,7],"dtype":"int64"}],)"
                                    R"(["attention_mask",{"shape":[2,7],"dtype":"int64"}]]})");
  // [/snippet]
  // clang-format on
}

TEST_CASE("README: summaries") {
  using hookscope::dtype;
  const auto call = [](std::int64_t batch, std::int64_t seq) {
    return hookscope::call_inputs{{}, {{"input_ids", hookscope::tensor_spec{{batch, seq}, dtype::int64}}}};
  };
  hookscope::shape_engine one_pass({.store_n_calls = hookscope::unlimited, .keep_calls = false});
  one_pass.begin_recording();
  for (const auto& [b, s] : {std::pair{1, 7}, {1, 1}, {2, 5}, {2, 1}}) one_pass.add_call(call(b, s));
  // clang-format off
  // [snippet: summaries]
  // Where the calls happen (each process, each machine): every call summarised, the summary written out.
  hookscope::shape_engine first({.store_n_calls = hookscope::unlimited, .keep_calls = false});
  first.begin_recording();
  first.add_call(call(1, 7));
  first.add_call(call(1, 1));
  const std::string summary = first.to_summary_json("Model::forward");  // JSON, docs/summary_format.md

  hookscope::shape_engine second({.store_n_calls = hookscope::unlimited, .keep_calls = false});
  second.begin_recording();
  second.add_call(call(2, 5));
  second.add_call(call(2, 1));

  // Where they are gathered: merged in the order of their calls, exactly one pass over all four.
  hookscope::shape_engine merged = hookscope::shape_engine::from_summary_json(summary);
  merged.merge(second);
  CHECK(merged.infer_dynamic_shapes().to_json() == R"({"input_ids":{"0":"DYNAMIC","1":"DYNAMIC"}})");
  // [/snippet]
  // clang-format on
  CHECK(merged.to_summary_json("Model::forward") == one_pass.to_summary_json("Model::forward"));
  CHECK(merged.infer_dynamic_shapes({.dim_names = true}).report() ==
        one_pass.infer_dynamic_shapes({.dim_names = true}).report());
}

#endif
