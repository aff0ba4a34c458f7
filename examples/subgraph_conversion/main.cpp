// The observer story of Torch-TensorRT, in C++: a compiler fires `on_subgraph_converted` for every
// subgraph it converts; a consumer records the conversions of one compilation without touching the
// compiler's code. Then: context isolation across threads, and a buggy callback that cannot break it.
#include <hookscope/observer.hpp>

#include <cstdio>
#include <future>
#include <stdexcept>
#include <string>
#include <vector>

//=== the compiler (owns the observer) ===//

namespace compiler {

struct graph {
  std::string name;
  std::vector<std::string> nodes;
};

struct engine {
  std::string serialized;
  std::size_t layers = 0;
};

/// Fired after each subgraph is converted to an engine.
constinit hookscope::observer<const graph&, const engine&> on_subgraph_converted{"on_subgraph_converted"};

engine convert_subgraph(const graph& g) {
  engine e{"trt-engine<" + g.name + ">", g.nodes.size()};
  on_subgraph_converted.observe(g, e);  // one relaxed load when nobody listens
  return e;
}

std::vector<engine> compile(const std::vector<graph>& partitions) {
  std::vector<engine> engines;
  for (const graph& g : partitions) engines.push_back(convert_subgraph(g));
  return engines;
}

}  // namespace compiler

//=== a consumer (owns nothing of the compiler) ===//

namespace {

const std::vector<compiler::graph> model = {
    {"embedding", {"gather"}},
    {"attention", {"matmul", "softmax", "matmul"}},
    {"mlp", {"matmul", "gelu", "matmul"}},
};

int failures = 0;

void expect(bool ok, const char* what) {
  std::printf("  [%s] %s\n", ok ? "ok" : "FAILED", what);
  if (!ok) ++failures;
}

void record_one_compilation() {
  std::puts("1. Record the conversions of one compilation");
  std::vector<std::string> records;
  {
    auto capture = compiler::on_subgraph_converted.add([&](const compiler::graph& g, const compiler::engine& e) {
      records.push_back(g.name + " -> " + e.serialized + " (" + std::to_string(e.layers) + " layers)");
    });
    compiler::compile(model);
  }                          // the callback is removed here
  compiler::compile(model);  // not recorded
  for (const auto& r : records) std::printf("     %s\n", r.c_str());
  std::printf("     captured %zu subgraph conversions\n", records.size());
  expect(records.size() == model.size(), "only the compilation inside the scope was recorded");
}

void isolate_threads() {
  std::puts("2. Callbacks belong to the context (thread) that added them");
  int seen = 0;
  auto count = compiler::on_subgraph_converted.add([&](const auto&, const auto&) { ++seen; });
  std::async(std::launch::async, [] { compiler::compile(model); }).wait();
  std::printf("     a worker thread compiled: this thread's callback saw %d conversions\n", seen);
  expect(seen == 0, "a worker's events do not reach another thread's callbacks");

  const auto ctx = hookscope::context::current();
  std::async(std::launch::async, [ctx] {
    auto in_callers_context = ctx.attach();  // what a thread pool does for its caller
    compiler::compile(model);
  }).wait();
  std::printf("     a worker attached to our context compiled: the callback saw %d conversions\n", seen);
  expect(seen == static_cast<int>(model.size()), "an attached context shares its callbacks");
}

void survive_buggy_callbacks() {
  std::puts("3. A throwing callback is logged; the compilation and the other callbacks go on");
  hookscope::set_log_sink(
      [](std::string_view line) { std::printf("     log: %.*s\n", int(line.size()), line.data()); });
  int good_calls = 0;
  auto buggy = compiler::on_subgraph_converted.add([](const compiler::graph& g, const compiler::engine&) {
    if (g.name == "attention") throw std::runtime_error("cannot parse engine for " + g.name);
  });
  auto good = compiler::on_subgraph_converted.add([&](const auto&, const auto&) { ++good_calls; });
  const auto engines = compiler::compile(model);
  hookscope::set_log_sink({});
  expect(engines.size() == model.size() && good_calls == 3, "all subgraphs converted, all good callbacks ran");
}

}  // namespace

int main() {
  std::printf("hookscope observers (hooks %s)\n\n", hookscope::hooks_enabled ? "enabled" : "disabled");
  if (!hookscope::hooks_enabled) {
    std::puts("This build compiles hooks out (-Dhooks=false): observers do nothing. Rebuild with -Dhooks=true.");
    return 0;
  }
  record_one_compilation();
  isolate_threads();
  survive_buggy_callbacks();
  std::printf("\n%s\n",
              failures == 0 ? "All observer behaviours shown as expected." : "Some behaviour was not as expected.");
  return failures == 0 ? 0 : 1;
}
