// A LibTorch model observed by hookscope: one attention block (torch::nn::Module) with a KV cache, whose
// forward(input_ids, attention_mask, past_key_values) is annotated with HOOKSCOPE_OBSERVABLE_METHOD. Generation
// runs a prefill and decode steps for two batch sizes; hookscope::call_recorder writes the calls as JSON Lines and
// hookscope::input_observer infers the dynamic shapes, printed for torch.export, trtexec, ONNX Runtime and people.
//
// Usage: libtorch_attention [RECORD.jsonl]   (default: libtorch_attention.jsonl in the current directory)
// Checked by tests/examples/test_libtorch_example.py.
#include <hookscope/adapters/libtorch.hpp>
#include <hookscope/input_observer.hpp>
#include <hookscope/observable.hpp>
#include <hookscope/recorder.hpp>

#include <torch/nn/module.h>
#include <torch/nn/modules/embedding.h>
#include <torch/nn/modules/linear.h>
#include <torch/utils.h>

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <exception>
#include <string>
#include <string_view>
#include <tuple>
#include <vector>

namespace {

constexpr std::int64_t vocab = 32, d_model = 16, heads = 2, head_dim = d_model / heads;

std::string shape_of(const at::Tensor& t) {
  std::string s;
  for (std::int64_t d : t.sizes()) {
    if (!s.empty()) s += 'x';
    s += std::to_string(d);
  }
  return s;
}

// Token embedding, one multi-head causal self-attention with a KV cache, and the output projection.
class attention_block : public torch::nn::Module {
 public:
  /// The KV cache of the block: {key, value}, each batch x heads x past x head_dim.
  using kv_cache = std::vector<at::Tensor>;

  attention_block()
      : embed_(register_module("embed", torch::nn::Embedding(vocab, d_model))),
        q_(register_module("q", torch::nn::Linear(d_model, d_model))),
        k_(register_module("k", torch::nn::Linear(d_model, d_model))),
        v_(register_module("v", torch::nn::Linear(d_model, d_model))),
        o_(register_module("o", torch::nn::Linear(d_model, d_model))),
        lm_head_(register_module("lm_head", torch::nn::Linear(d_model, vocab))) {}

  /// logits (batch x seq x vocab) and the cache grown by seq positions.
  std::tuple<at::Tensor, kv_cache> forward_impl(const at::Tensor& input_ids, const at::Tensor& attention_mask,
                                                const kv_cache& past_key_values) {
    const std::int64_t batch = input_ids.size(0), seq = input_ids.size(1);
    const at::Tensor x = embed_(input_ids);
    auto split_heads = [&](const at::Tensor& t) { return t.view({batch, seq, heads, head_dim}).transpose(1, 2); };
    const at::Tensor q = split_heads(q_(x));
    const at::Tensor k = at::cat({past_key_values.at(0), split_heads(k_(x))}, 2);
    const at::Tensor v = at::cat({past_key_values.at(1), split_heads(v_(x))}, 2);
    const std::int64_t total = k.size(2), past = total - seq;
    // Query i (position past + i) sees keys 0 .. past + i, and only those the attention mask keeps.
    const at::Tensor causal = at::ones({seq, total}, at::kBool).tril(past);
    const at::Tensor keep = causal.view({1, 1, seq, total}) & attention_mask.to(at::kBool).view({batch, 1, 1, total});
    const at::Tensor scores = at::matmul(q, k.transpose(-2, -1)).div(std::sqrt(double(head_dim)));
    const at::Tensor attended = at::matmul(scores.masked_fill(keep.logical_not(), -1e9).softmax(-1), v);
    const at::Tensor out = o_(attended.transpose(1, 2).reshape({batch, seq, d_model}));
    return {lm_head_(x + out), kv_cache{k, v}};
  }
  HOOKSCOPE_OBSERVABLE_METHOD(attention_block, forward, forward_impl, input_ids, attention_mask, past_key_values);

 private:
  torch::nn::Embedding embed_;
  torch::nn::Linear q_, k_, v_, o_, lm_head_;
};

struct prompt {
  std::int64_t batch, length;
};
constexpr int new_tokens = 3;  // a prefill and 2 decode steps: the 3 calls input_observer keeps per recording

// Greedy generation: the prompt's prefill, then one decode step per further token.
void generate(attention_block& model, const prompt& p) {
  std::printf("  batch %lld, prompt of %lld tokens, %d new tokens\n", static_cast<long long>(p.batch),
              static_cast<long long>(p.length), new_tokens);
  at::Tensor ids = at::randint(vocab, {p.batch, p.length}, at::kLong);
  at::Tensor mask = at::ones({p.batch, p.length}, at::kLong);
  const auto empty_cache = [&] {
    return attention_block::kv_cache{at::zeros({p.batch, heads, 0, head_dim}),
                                     at::zeros({p.batch, heads, 0, head_dim})};
  };
  attention_block::kv_cache cache = empty_cache();
  at::Tensor sequence = ids;  // the prompt and every token fed since
  at::Tensor last_logits;
  std::vector<std::int64_t> generated;
  for (int step = 0; step < new_tokens; ++step) {
    auto [logits, next_cache] = model.forward(ids, mask, cache);  // the observed call
    if (step > 0) sequence = at::cat({sequence, ids}, 1);
    last_logits = logits.select(1, logits.size(1) - 1);
    std::printf("    %-7s input_ids %-4s attention_mask %-4s past %-8s -> logits %s\n",
                step == 0 ? "prefill" : "decode", shape_of(ids).c_str(), shape_of(mask).c_str(),
                shape_of(cache[0]).c_str(), shape_of(logits).c_str());
    ids = logits.select(1, logits.size(1) - 1).argmax(-1, /*keepdim=*/true);  // batch x 1
    mask = at::cat({mask, at::ones({p.batch, 1}, at::kLong)}, 1);
    cache = std::move(next_cache);
    generated.push_back(ids[0][0].item<std::int64_t>());
  }
  std::printf("    generated (sequence 0):");
  for (std::int64_t t : generated) std::printf(" %lld", static_cast<long long>(t));
  std::printf("\n");
  // The cache is right if the last decode step matches the whole sequence recomputed without it (forward_impl:
  // not observed, so not recorded).
  const at::Tensor full = std::get<0>(model.forward_impl(sequence, at::ones_like(sequence), empty_cache()));
  const double diff = (full.select(1, full.size(1) - 1) - last_logits).abs().max().item<double>();
  std::printf("    KV cache check: last decode step equals the full recomputation: %s\n", diff < 1e-4 ? "yes" : "NO");
}

void print_indented(std::string_view text, std::string_view indent) {
  while (!text.empty()) {
    const std::size_t end = text.find('\n');
    const std::string_view line = text.substr(0, end);
    std::printf("%.*s%.*s\n", int(indent.size()), indent.data(), int(line.size()), line.data());
    text = end == std::string_view::npos ? std::string_view{} : text.substr(end + 1);
  }
}

}  // namespace

int main(int argc, char** argv) {
  const std::string record_path = argc > 1 ? argv[1] : "libtorch_attention.jsonl";
  torch::manual_seed(0);
  torch::NoGradGuard no_grad;
  attention_block model;
  model.eval();

  std::printf("== 1. Generation (attention_block: vocab %lld, d_model %lld, %lld heads of %lld) ==\n",
              static_cast<long long>(vocab), static_cast<long long>(d_model), static_cast<long long>(heads),
              static_cast<long long>(head_dim));
  hookscope::call_recorder rec(attention_block::forward_observable{}, {.store_n_calls = hookscope::unlimited});
  hookscope::input_observer obs;
  for (const prompt& p : {prompt{1, 7}, prompt{2, 5}}) {
    auto recording = obs.record(attention_block::forward_observable{});  // one recording per generation
    generate(model, p);
  }
  rec.stop();

  std::printf("== 2. Recording (hookscope::call_recorder, JSON Lines) ==\n");
  if (!hookscope::hooks_enabled) {
    std::puts("  (hooks are compiled out in this build: nothing is recorded, so there is no shape to infer)");
    return 0;
  }
  rec.write_jsonl(record_path);
  std::printf("  %zu calls of attention_block::forward written to %s\n", rec.num_calls(), record_path.c_str());

  std::printf("== 3. Dynamic shapes (hookscope::input_observer, %zu calls observed) ==\n", obs.num_obs());
  try {
    const hookscope::dynamic_shapes ds = obs.infer_dynamic_shapes({
        .batch_dimension_for = {"input_ids", "attention_mask"},
        .dim_names = true,
    });
    std::puts("  torch.export dynamic_shapes:");
    print_indented(ds.to_json(), "    ");
    std::puts("  trtexec:");
    print_indented(ds.to_trtexec(), "    ");
    std::puts("  ONNX Runtime TensorRT provider options:");
    print_indented(ds.to_ort_options(), "    ");
    std::puts("  report:");
    print_indented(ds.report(), "    ");
    for (const auto& w : ds.warnings()) std::printf("  warning: %s\n", w.text().c_str());
  } catch (const std::exception& e) {
    std::printf("  shape inference failed: %s\n", e.what());
    return 1;
  }
  return 0;
}
