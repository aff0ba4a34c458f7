// A real, small decoder-only transformer (Eigen, float32) whose forward is an observable method:
// token embedding, 2 layers of causal multi-head self-attention with a KV cache and an MLP, RMSNorm,
// an output projection to logits, greedy decoding; an optional image becomes patch tokens at the first step.
#pragma once

#include "tensor.hpp"

#include <hookscope/capture.hpp>
#include <hookscope/observable.hpp>

#include <Eigen/Core>

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace tiny_llm {

struct config {
  int vocab = 64;
  int hidden = 32;
  int heads = 2;
  int layers = 2;
  int mlp = 64;
  int image_size = 16;           // pixel_values are {batch, 3, 16, 16}
  int patch = 8;                 // 8x8 patches: 4 image tokens
  std::int64_t image_token = 1;  // the prompt's placeholders that the patch embeddings replace
  unsigned seed = 2024;          // every weight comes from std::mt19937(seed)

  int head_dim() const { return hidden / heads; }
  int patches() const { return (image_size / patch) * (image_size / patch); }
};

/// Keys and values of every layer for every token seen so far; the model appends to it in place.
class kv_cache {
 public:
  kv_cache(const config& cfg, std::int64_t batch);

  std::int64_t batch() const noexcept { return batch_; }
  std::int64_t past_length() const noexcept { return keys_.empty() ? 0 : keys_.front().rows(); }
  int layers() const noexcept { return layers_; }
  /// {batch, heads, past_length, head_dim}: the shape of key_<layer> and value_<layer>.
  std::vector<std::int64_t> shape() const { return {batch_, heads_, past_length(), head_dim_}; }

  /// Appends rows (new tokens x head_dim) for one layer, sequence and head; returns all keys and values so far.
  std::pair<const Eigen::MatrixXf&, const Eigen::MatrixXf&> append(int layer, std::int64_t b, int head,
                                                                   const Eigen::MatrixXf& k, const Eigen::MatrixXf& v);

 private:
  std::size_t slot(int layer, std::int64_t b, int head) const {
    return static_cast<std::size_t>((layer * batch_ + b) * heads_ + head);
  }

  std::int64_t batch_;
  int layers_, heads_, head_dim_;
  std::vector<Eigen::MatrixXf> keys_, values_;  // one (past_length x head_dim) matrix per layer, sequence, head
};

struct layer_weights {
  Eigen::MatrixXf wq, wk, wv, wo, w_up, w_down;
  Eigen::RowVectorXf attention_norm, mlp_norm;
};

class model {
 public:
  explicit model(config cfg = {});
  const config& cfg() const noexcept { return cfg_; }

  /// Logits {batch, seq, vocab} for input_ids {batch, seq}; attention_mask covers {batch, past + seq};
  /// appends the new keys and values to past_key_values; pixel_values {batch, 3, 16, 16} at the first step only.
  tensor forward_impl(const id_tensor& input_ids, const id_tensor& attention_mask, kv_cache& past_key_values,
                      const std::optional<tensor>& pixel_values) const;
  // The annotation: model.forward(...) is the observed call, model::forward_observers() its pre/post observers.
  HOOKSCOPE_OBSERVABLE_METHOD(model, forward, forward_impl, input_ids, attention_mask, past_key_values, pixel_values);

 private:
  Eigen::MatrixXf embed(const id_tensor& ids, std::int64_t b, std::int64_t past,
                        const std::optional<tensor>& pixel_values) const;
  Eigen::MatrixXf attend(const layer_weights& w, int layer, const Eigen::MatrixXf& x, std::int64_t b, std::int64_t past,
                         const id_tensor& mask, kv_cache& cache) const;
  Eigen::MatrixXf mlp(const layer_weights& w, const Eigen::MatrixXf& x) const;

  config cfg_;
  Eigen::MatrixXf embedding_;   // vocab x hidden
  Eigen::MatrixXf lm_head_;     // hidden x vocab (untied: tied random weights make a token predict itself)
  Eigen::MatrixXf patch_proj_;  // (3 * patch * patch) x hidden
  Eigen::RowVectorXf final_norm_;
  std::vector<layer_weights> layers_;
};

/// Prompts of one batch, all of the same length.
struct prompt {
  std::string name;
  id_tensor input_ids;                 // {batch, length}
  std::optional<tensor> pixel_values;  // {batch, 3, 16, 16}, or none
};

/// Greedy decoding: a prefill step, then one decode step per further token; the new tokens, per sequence.
std::vector<std::vector<std::int64_t>> generate(const model& m, const prompt& p, int max_new_tokens);

/// The demo's prompts: batch 1 x 7 tokens with an image (4 placeholders + 3 words), batch 2 x 5 without.
prompt image_prompt(const config& cfg);
prompt text_prompt();

}  // namespace tiny_llm

// The KV cache's children for capture, like registering a pytree node: shapes only, never the data.
template <>
struct hookscope::flatten_traits<tiny_llm::kv_cache> {
  static constexpr std::string_view name = "DynamicCache";
  static std::vector<std::pair<std::string, hookscope::tensor_spec>> flatten(const tiny_llm::kv_cache& cache);
};
