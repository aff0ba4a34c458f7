// Every C++ block of README.md, compiled and run here; tools/check_readme_snippets.py checks that the
// README shows exactly these lines.
#include "hookscope/hookscope.hpp"

#include <catch2/catch.hpp>

#include <future>
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

// [snippet: declare]
// In the compiler: a named event source, constant-initialised, usable from anywhere.
constinit hookscope::observer<const graph&, const engine&> on_subgraph_converted{"on_subgraph_converted"};

engine convert_subgraph(const graph& g) {
  engine result = do_convert(g);
  on_subgraph_converted.observe(g, result);  // fire: runs every callback visible here
  return result;
}
// [/snippet]

inline std::vector<engine> compile(const std::vector<graph>& parts) {
  std::vector<engine> out;
  for (const auto& p : parts) out.push_back(convert_subgraph(p));
  return out;
}

}  // namespace readme

using namespace readme;

#if HOOKSCOPE_ENABLED

TEST_CASE("README: scoped callbacks") {
  const std::vector<graph> partitions{{{1, 2}}, {{3}}};
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
  CHECK(records == std::vector<std::string>{"2 nodes -> engine:2", "1 nodes -> engine:1"});
}

TEST_CASE("README: release and remove") {
  int calls = 0;
  auto count_it = [&](const graph&, const engine&) { ++calls; };
  // [snippet: release]
  hookscope::callback_id id = on_subgraph_converted.add(count_it).release();  // stays registered
  convert_subgraph(graph{});
  on_subgraph_converted.remove(id);  // until removed by id
  // [/snippet]
  convert_subgraph(graph{});
  CHECK(calls == 1);
}

TEST_CASE("README: global callbacks and contexts") {
  int seen = 0;
  auto count_it = [&](const auto&, const auto&) { ++seen; };
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
}

TEST_CASE("README: copy a context") {
  std::vector<std::string> log;
  // [snippet: copy]
  auto a = on_subgraph_converted.add([&](const auto&, const auto&) { log.push_back("a"); });
  hookscope::context snapshot = hookscope::context::current().copy();  // holds `a` as of now
  a.reset();                                  // gone from this thread's context...
  {
    auto scope = snapshot.attach();
    convert_subgraph(graph{});                // ...but still in the copy
  }
  convert_subgraph(graph{});                  // nothing: the current context has no callback
  // [/snippet]
  CHECK(log == std::vector<std::string>{"a"});
}

TEST_CASE("README: callback errors") {
  std::vector<std::string> lines;
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
  CHECK(lines.size() == 1);
}

#endif
