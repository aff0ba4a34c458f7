// Integration tests that assert on a compiler's internal state through its hooks (the Torch-TensorRT
// story): the passes of a toy lowering pipeline are observable functions; a test attaches pre/post
// callbacks for one lowering, reads each pass's graph by name, and checks what the pass promised.
// Run with HOOKSCOPE_TRACE=passes::fold_constants,passes::eliminate_* to see the same passes traced without any callback.
#include <hookscope/observable.hpp>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdio>
#include <map>
#include <ostream>
#include <string>
#include <utility>
#include <vector>

//=== the compiler: a toy IR and its passes ===//

namespace ir {

enum class op_kind { input, constant, add, mul, fused_mul_add, output };

struct op {
  int id = 0;
  op_kind kind = op_kind::input;
  std::vector<int> inputs;  // ids of earlier ops: the ops are in topological order
  double value = 0;         // constants only
};

struct graph {
  std::vector<op> ops;
  std::size_t size() const noexcept { return ops.size(); }
  const op& find(int id) const {
    return *std::find_if(ops.begin(), ops.end(), [&](const op& o) { return o.id == id; });
  }
};

// What HOOKSCOPE_TRACE and the registry's erased callbacks print for a graph argument.
std::ostream& operator<<(std::ostream& os, const graph& g) { return os << "graph(" << g.size() << " ops)"; }

const char* name_of(op_kind k) {
  static const char* const names[] = {"input", "const", "add", "mul", "fma", "output"};
  return names[static_cast<int>(k)];
}

bool is_arithmetic(op_kind k) { return k == op_kind::add || k == op_kind::mul || k == op_kind::fused_mul_add; }

/// How many ops read each op.
std::map<int, int> use_counts(const graph& g) {
  std::map<int, int> uses;
  for (const op& o : g.ops) {
    for (int in : o.inputs) ++uses[in];
  }
  return uses;
}

/// The value of the graph's output for input x.
double evaluate(const graph& g, double x) {
  std::map<int, double> v;
  double result = 0;
  for (const op& o : g.ops) {
    const auto in = [&](std::size_t i) { return v.at(o.inputs.at(i)); };
    switch (o.kind) {
      case op_kind::input: v[o.id] = x; break;
      case op_kind::constant: v[o.id] = o.value; break;
      case op_kind::add: v[o.id] = in(0) + in(1); break;
      case op_kind::mul: v[o.id] = in(0) * in(1); break;
      case op_kind::fused_mul_add: v[o.id] = in(0) * in(1) + in(2); break;
      case op_kind::output: result = in(0); break;
    }
  }
  return result;
}

}  // namespace ir

namespace passes {
namespace impl {

/// Arithmetic on constants becomes a constant (the op count stays; dead-code elimination removes leftovers).
ir::graph fold_constants(ir::graph graph) {
  std::map<int, double> known;
  for (ir::op& o : graph.ops) {
    if (o.kind == ir::op_kind::constant) known[o.id] = o.value;
    const bool foldable = ir::is_arithmetic(o.kind) &&
                          std::all_of(o.inputs.begin(), o.inputs.end(), [&](int in) { return known.count(in) != 0; });
    if (!foldable) continue;
    const double a = known[o.inputs[0]], b = known[o.inputs[1]];
    o.value = o.kind == ir::op_kind::add ? a + b : o.kind == ir::op_kind::mul ? a * b : a * b + known[o.inputs[2]];
    o.kind = ir::op_kind::constant;
    o.inputs.clear();
    known[o.id] = o.value;
  }
  return graph;
}

/// Removes every op no output depends on (walking backwards: uses come after definitions).
ir::graph eliminate_dead_code(ir::graph graph) {
  std::map<int, bool> live;
  for (auto it = graph.ops.rbegin(); it != graph.ops.rend(); ++it) {
    if (it->kind == ir::op_kind::output || live[it->id]) {
      live[it->id] = true;
      for (int in : it->inputs) live[in] = true;
    }
  }
  std::erase_if(graph.ops, [&](const ir::op& o) { return !live[o.id]; });
  return graph;
}

/// add(mul(a, b), c) becomes fma(a, b, c) when the add is the mul's only user.
ir::graph fuse_multiply_add(ir::graph graph) {
  const std::map<int, int> uses = ir::use_counts(graph);
  std::vector<int> fused_away;
  for (ir::op& o : graph.ops) {
    if (o.kind != ir::op_kind::add) continue;
    for (std::size_t side = 0; side < 2; ++side) {
      const ir::op& m = graph.find(o.inputs[side]);
      if (m.kind != ir::op_kind::mul || uses.at(m.id) != 1) continue;
      o = {o.id, ir::op_kind::fused_mul_add, {m.inputs[0], m.inputs[1], o.inputs[1 - side]}, 0};
      fused_away.push_back(m.id);
      break;
    }
  }
  std::erase_if(graph.ops, [&](const ir::op& o) {
    return std::find(fused_away.begin(), fused_away.end(), o.id) != fused_away.end();
  });
  return graph;
}

}  // namespace impl

// The annotations: the passes are called as before, and are now observable (and traceable by name).
HOOKSCOPE_OBSERVABLE(fold_constants, impl::fold_constants, graph);
HOOKSCOPE_OBSERVABLE(eliminate_dead_code, impl::eliminate_dead_code, graph);
HOOKSCOPE_OBSERVABLE(fuse_multiply_add, impl::fuse_multiply_add, graph);

ir::graph lower(ir::graph g) { return fuse_multiply_add(eliminate_dead_code(fold_constants(std::move(g)))); }

}  // namespace passes

//=== the integration test: owns nothing of the compiler ===//

namespace {

using ir::op_kind;

// out = x * (2 * 3) + x, with dead work: x * x, and 2 + 3 that only folding makes unused.
ir::graph sample_graph() {
  return {{{0, op_kind::input, {}, 0},
           {1, op_kind::constant, {}, 2},
           {2, op_kind::constant, {}, 3},
           {3, op_kind::mul, {1, 2}, 0},
           {4, op_kind::mul, {0, 3}, 0},
           {5, op_kind::add, {4, 0}, 0},
           {6, op_kind::mul, {0, 0}, 0},
           {7, op_kind::add, {1, 2}, 0},
           {8, op_kind::output, {5}, 0}}};
}

void print_graph(const ir::graph& g) {
  for (const ir::op& o : g.ops) {
    std::printf("    %%%d = %s", o.id, ir::name_of(o.kind));
    if (o.kind == op_kind::input) std::printf(" x");
    if (o.kind == op_kind::constant) std::printf(" %g", o.value);
    for (int in : o.inputs) std::printf(" %%%d", in);
    std::puts("");
  }
}

int failures = 0;

void expect(bool ok, const std::string& what) {
  std::printf("  [%s] %s\n", ok ? "ok" : "FAILED", what.c_str());
  if (!ok) ++failures;
}

// The promise each pass makes about the graph it returns.
bool no_constant_arithmetic(const ir::graph& g) {
  return std::none_of(g.ops.begin(), g.ops.end(), [&](const ir::op& o) {
    return ir::is_arithmetic(o.kind) &&
           std::all_of(o.inputs.begin(), o.inputs.end(), [&](int in) { return g.find(in).kind == op_kind::constant; });
  });
}

bool no_dead_op(const ir::graph& g) {
  const auto uses = ir::use_counts(g);
  return std::all_of(g.ops.begin(), g.ops.end(),
                     [&](const ir::op& o) { return o.kind == op_kind::output || uses.count(o.id) != 0; });
}

bool no_fusable_pair(const ir::graph& g) {
  const auto uses = ir::use_counts(g);
  return std::none_of(g.ops.begin(), g.ops.end(), [&](const ir::op& o) {
    return o.kind == op_kind::add && std::any_of(o.inputs.begin(), o.inputs.end(), [&](int in) {
             return g.find(in).kind == op_kind::mul && uses.at(in) == 1;
           });
  });
}

/// What the test saw of one pass through its hooks.
struct observed_pass {
  std::string name;  // as the hooks report it: ctx.function().name
  std::size_t ops_before = 0, ops_after = 0;
  bool promise_kept = false;
  int calls = 0;
};

/// Attaches pre/post callbacks to `pass` for the life of the returned subscriptions.
template <class Pass, class Promise>
std::pair<hookscope::subscription, hookscope::subscription> watch(const Pass& pass, observed_pass& seen,
                                                                  Promise promise) {
  // The graph is taken by value: post callbacks see it moved-from, so its size is read before the call.
  auto pre = pass.observers.pre.add([&seen](const auto& ctx) {
    seen.name = ctx.function().name;
    seen.ops_before = ctx.template arg<"graph">().size();
  });
  auto post = pass.observers.post.add([&seen, promise](const auto& ctx) {
    ++seen.calls;
    if (const ir::graph* out = ctx.return_value()) {
      seen.ops_after = out->size();
      seen.promise_kept = promise(*out);
    }
  });
  return {std::move(pre), std::move(post)};
}

void check(const char* pass, const observed_pass& seen, const char* promise) {
  expect(seen.calls == 1 && seen.name == pass && seen.promise_kept, seen.name + ": " + std::to_string(seen.ops_before) +
                                                                        " -> " + std::to_string(seen.ops_after) +
                                                                        " ops; " + promise);
}

void test_lowering() {
  const ir::graph input = sample_graph();
  std::printf("input graph (%zu ops):\n", input.size());
  print_graph(input);

  observed_pass fold, dce, fuse;
  ir::graph lowered;
  {
    // maybe_unused: in a -Dhooks=false build subscriptions are inert, and GCC would call them unused.
    [[maybe_unused]] auto w1 = watch(passes::fold_constants, fold, no_constant_arithmetic);
    [[maybe_unused]] auto w2 = watch(passes::eliminate_dead_code, dce, no_dead_op);
    [[maybe_unused]] auto w3 = watch(passes::fuse_multiply_add, fuse, no_fusable_pair);
    lowered = passes::lower(input);
  }                            // the callbacks end with the test's scope
  (void)passes::lower(input);  // a lowering outside the scope: unobserved

  std::puts("\nchecked through the hooks:");
  check("passes::fold_constants", fold, "no arithmetic op left with only constant inputs");
  check("passes::eliminate_dead_code", dce, "every op left feeds the output");
  check("passes::fuse_multiply_add", fuse, "no mul left whose only user is an add");
  expect(fold.ops_after <= fold.ops_before && dce.ops_after < dce.ops_before && fuse.ops_after < fuse.ops_before,
         "no pass grew the graph; dead-code elimination and fusion shrank it");
  expect(fold.calls + dce.calls + fuse.calls == 3, "the lowering outside the scope was not observed");

  const double x = 1.5, want = ir::evaluate(input, x), got = ir::evaluate(lowered, x);
  char result[80];
  std::snprintf(result, sizeof result, "(x = %g: %g)", x, got);
  expect(want == got, std::string("the lowered graph computes what the input graph computed ") + result);
  std::printf("\nlowered graph (%zu ops):\n", lowered.size());
  print_graph(lowered);
}

}  // namespace

int main() {
  std::printf("lowering_passes: a toy compiler's passes checked through their hooks (hooks %s)\n\n",
              hookscope::hooks_enabled ? "enabled" : "compiled out");
  if (!hookscope::hooks_enabled) {
    const ir::graph input = sample_graph();
    const bool same = ir::evaluate(input, 1.5) == ir::evaluate(passes::lower(input), 1.5);
    std::puts("This build compiles hooks out (-Dhooks=false): the passes are plain calls and no callback sees them.");
    expect(same, "the lowered graph computes what the input graph computed");
    return failures == 0 ? 0 : 1;
  }
  test_lowering();
  std::printf("\n%s\n", failures == 0 ? "All checks passed." : "Some checks FAILED.");
  return failures == 0 ? 0 : 1;
}
