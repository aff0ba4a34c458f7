// The tiny transformer's arithmetic. Nothing here knows about hookscope beyond the annotation in model.hpp:
// the hooks are attached from outside (main.cpp, infer_shapes.cpp).
#include "model.hpp"

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <limits>
#include <random>
#include <stdexcept>

namespace tiny_llm {

namespace {

// Uniform in [-scale, scale) from the raw mt19937 stream: the standard fixes mt19937's output, unlike
// std::uniform_real_distribution's, so the weights (and the generated tokens) are the same everywhere.
Eigen::MatrixXf random_matrix(std::mt19937& rng, int rows, int cols, float scale) {
  Eigen::MatrixXf m(rows, cols);
  for (Eigen::Index i = 0; i < m.size(); ++i) {
    m.data()[i] = (static_cast<float>(rng()) / 4294967296.0f * 2.0f - 1.0f) * scale;
  }
  return m;
}

Eigen::RowVectorXf ones(int n) { return Eigen::RowVectorXf::Ones(n); }

Eigen::MatrixXf rms_norm(const Eigen::MatrixXf& x, const Eigen::RowVectorXf& gain) {
  Eigen::MatrixXf out(x.rows(), x.cols());
  for (Eigen::Index i = 0; i < x.rows(); ++i) {
    const float rms = std::sqrt(x.row(i).squaredNorm() / static_cast<float>(x.cols()) + 1e-6f);
    out.row(i) = x.row(i).cwiseProduct(gain) / rms;
  }
  return out;
}

void softmax_rows(Eigen::MatrixXf& scores) {
  for (Eigen::Index i = 0; i < scores.rows(); ++i) {
    scores.row(i) = (scores.row(i).array() - scores.row(i).maxCoeff()).exp();
    scores.row(i) /= scores.row(i).sum();
  }
}

// Sinusoidal position encoding: the model needs token order, and this needs no weights.
Eigen::RowVectorXf position(std::int64_t pos, int hidden) {
  Eigen::RowVectorXf p(hidden);
  for (int i = 0; i < hidden; i += 2) {
    const double angle = static_cast<double>(pos) / std::pow(10000.0, static_cast<double>(i) / hidden);
    p(i) = static_cast<float>(std::sin(angle));
    if (i + 1 < hidden) p(i + 1) = static_cast<float>(std::cos(angle));
  }
  return p;
}

void check_inputs(const config& cfg, const id_tensor& ids, const id_tensor& mask, const kv_cache& cache,
                  const std::optional<tensor>& pixels) {
  if (ids.shape.size() != 2) throw std::invalid_argument("input_ids must be {batch, seq}");
  const std::int64_t batch = ids.dim(0), total = cache.past_length() + ids.dim(1);
  if (mask.shape != std::vector<std::int64_t>{batch, total}) {
    throw std::invalid_argument("attention_mask must be {batch, past + seq}");
  }
  if (cache.batch() != batch) throw std::invalid_argument("past_key_values has another batch size");
  const std::vector<std::int64_t> image{batch, 3, cfg.image_size, cfg.image_size};
  if (pixels && (pixels->shape != image || ids.dim(1) < cfg.patches())) {
    throw std::invalid_argument("pixel_values must be {batch, 3, 16, 16}, with room for the patch tokens");
  }
}

}  // namespace

//=== kv_cache ===//

kv_cache::kv_cache(const config& cfg, std::int64_t batch)
    : batch_(batch), layers_(cfg.layers), heads_(cfg.heads), head_dim_(cfg.head_dim()) {
  const auto slots = static_cast<std::size_t>(layers_ * batch_ * heads_);
  keys_.assign(slots, Eigen::MatrixXf(0, head_dim_));
  values_.assign(slots, Eigen::MatrixXf(0, head_dim_));
}

std::pair<const Eigen::MatrixXf&, const Eigen::MatrixXf&> kv_cache::append(int layer, std::int64_t b, int head,
                                                                           const Eigen::MatrixXf& k,
                                                                           const Eigen::MatrixXf& v) {
  Eigen::MatrixXf& keys = keys_[slot(layer, b, head)];
  Eigen::MatrixXf& values = values_[slot(layer, b, head)];
  const Eigen::Index past = keys.rows();
  keys.conservativeResize(past + k.rows(), Eigen::NoChange);
  values.conservativeResize(past + v.rows(), Eigen::NoChange);
  keys.bottomRows(k.rows()) = k;
  values.bottomRows(v.rows()) = v;
  return {keys, values};
}

//=== model ===//

model::model(config cfg) : cfg_(cfg) {
  std::mt19937 rng(cfg_.seed);
  const int h = cfg_.hidden;
  const float s = 1.0f / std::sqrt(static_cast<float>(h));
  embedding_ = random_matrix(rng, cfg_.vocab, h, 1.0f);
  patch_proj_ = random_matrix(rng, 3 * cfg_.patch * cfg_.patch, h, 1.0f / std::sqrt(3.0f * cfg_.patch * cfg_.patch));
  final_norm_ = ones(h);
  lm_head_ = random_matrix(rng, h, cfg_.vocab, 1.0f);
  for (int l = 0; l < cfg_.layers; ++l) {
    layers_.push_back({random_matrix(rng, h, h, s), random_matrix(rng, h, h, s), random_matrix(rng, h, h, s),
                       random_matrix(rng, h, h, s), random_matrix(rng, h, cfg_.mlp, s),
                       random_matrix(rng, cfg_.mlp, h, 1.0f / std::sqrt(static_cast<float>(cfg_.mlp))), ones(h),
                       ones(h)});
  }
}

tensor model::forward_impl(const id_tensor& input_ids, const id_tensor& attention_mask, kv_cache& past_key_values,
                           const std::optional<tensor>& pixel_values) const {
  check_inputs(cfg_, input_ids, attention_mask, past_key_values, pixel_values);
  const std::int64_t batch = input_ids.dim(0), seq = input_ids.dim(1), past = past_key_values.past_length();
  tensor logits({batch, seq, cfg_.vocab}, 0.0f);
  for (std::int64_t b = 0; b < batch; ++b) {
    Eigen::MatrixXf x = embed(input_ids, b, past, pixel_values);
    for (int l = 0; l < cfg_.layers; ++l) {
      const layer_weights& w = layers_[static_cast<std::size_t>(l)];
      x += attend(w, l, rms_norm(x, w.attention_norm), b, past, attention_mask, past_key_values);
      x += mlp(w, rms_norm(x, w.mlp_norm));
    }
    const Eigen::MatrixXf out = rms_norm(x, final_norm_) * lm_head_;  // seq x vocab
    for (std::int64_t i = 0; i < seq; ++i) {
      for (int v = 0; v < cfg_.vocab; ++v)
        logits.data[static_cast<std::size_t>((b * seq + i) * cfg_.vocab + v)] = out(i, v);
    }
  }
  return logits;
}

Eigen::MatrixXf model::embed(const id_tensor& ids, std::int64_t b, std::int64_t past,
                             const std::optional<tensor>& pixel_values) const {
  const std::int64_t seq = ids.dim(1);
  Eigen::MatrixXf x(seq, cfg_.hidden);
  for (std::int64_t i = 0; i < seq; ++i) {
    const std::int64_t token = ids.at(b, i);
    if (token < 0 || token >= cfg_.vocab) throw std::out_of_range("token id outside the vocabulary");
    x.row(i) = embedding_.row(token) + position(past + i, cfg_.hidden);
  }
  if (!pixel_values) return x;
  // Vision-language style: each 8x8 patch (3 channels) replaces one image placeholder token.
  const int grid = cfg_.image_size / cfg_.patch, p = cfg_.patch, size = cfg_.image_size;
  Eigen::RowVectorXf patch(3 * p * p);
  for (int n = 0; n < cfg_.patches(); ++n) {
    for (int c = 0; c < 3; ++c) {
      for (int r = 0; r < p; ++r) {
        for (int q = 0; q < p; ++q) {
          const std::int64_t row = (n / grid) * p + r, col = (n % grid) * p + q;
          patch((c * p + r) * p + q) =
              pixel_values->data[static_cast<std::size_t>(((b * 3 + c) * size + row) * size + col)];
        }
      }
    }
    x.row(n) = patch * patch_proj_ + position(past + n, cfg_.hidden);
  }
  return x;
}

Eigen::MatrixXf model::attend(const layer_weights& w, int layer, const Eigen::MatrixXf& x, std::int64_t b,
                              std::int64_t past, const id_tensor& mask, kv_cache& cache) const {
  const int d = cfg_.head_dim();
  const Eigen::MatrixXf q = x * w.wq, k = x * w.wk, v = x * w.wv;
  Eigen::MatrixXf heads_out(x.rows(), cfg_.hidden);
  for (int h = 0; h < cfg_.heads; ++h) {
    const auto [keys, values] = cache.append(layer, b, h, k.middleCols(h * d, d), v.middleCols(h * d, d));
    Eigen::MatrixXf scores = q.middleCols(h * d, d) * keys.transpose() / std::sqrt(static_cast<float>(d));
    for (Eigen::Index i = 0; i < scores.rows(); ++i) {
      for (Eigen::Index j = 0; j < scores.cols(); ++j) {
        const bool hidden = j > past + i || mask.at(b, j) == 0;  // causal, and padding the mask excludes
        if (hidden) scores(i, j) = -std::numeric_limits<float>::infinity();
      }
    }
    softmax_rows(scores);
    heads_out.middleCols(h * d, d) = scores * values;
  }
  return heads_out * w.wo;
}

Eigen::MatrixXf model::mlp(const layer_weights& w, const Eigen::MatrixXf& x) const {
  const Eigen::ArrayXXf up = (x * w.w_up).array();
  const Eigen::MatrixXf activated = (up / (1.0f + (-up).exp())).matrix();  // SiLU
  return activated * w.w_down;
}

//=== generation ===//

namespace {

std::int64_t argmax_last(const tensor& logits, std::int64_t b) {
  const std::int64_t seq = logits.dim(1), vocab = logits.dim(2);
  const auto first = logits.data.begin() + static_cast<std::ptrdiff_t>((b * seq + seq - 1) * vocab);
  return std::max_element(first, first + static_cast<std::ptrdiff_t>(vocab)) - first;
}

}  // namespace

std::vector<std::vector<std::int64_t>> generate(const model& m, const prompt& p, int max_new_tokens) {
  const std::int64_t batch = p.input_ids.dim(0);
  std::vector<std::vector<std::int64_t>> generated(static_cast<std::size_t>(batch));
  kv_cache cache(m.cfg(), batch);
  id_tensor ids = p.input_ids;
  id_tensor mask({batch, ids.dim(1)}, 1);
  tensor logits = m.forward(ids, mask, cache, p.pixel_values);  // prefill: the whole prompt (and the image)
  for (int step = 0; step < max_new_tokens; ++step) {
    ids = id_tensor({batch, 1}, 0);
    for (std::int64_t b = 0; b < batch; ++b) {
      ids.at(b, 0) = argmax_last(logits, b);
      generated[static_cast<std::size_t>(b)].push_back(ids.at(b, 0));
    }
    if (step + 1 == max_new_tokens) break;
    mask = id_tensor({batch, cache.past_length() + 1}, 1);
    logits = m.forward(ids, mask, cache, std::nullopt);  // decode: one token, the cache holds the rest
  }
  return generated;
}

prompt image_prompt(const config& cfg) {
  prompt p{"A", id_tensor({1, 7}, cfg.image_token), tensor({1, 3, cfg.image_size, cfg.image_size}, 0.0f)};
  const std::int64_t words[] = {17, 42, 5};  // after the 4 image placeholders
  for (std::int64_t i = 0; i < 3; ++i) p.input_ids.at(0, cfg.patches() + i) = words[i];
  // A deterministic picture: a smooth gradient per channel.
  for (std::size_t i = 0; i < p.pixel_values->data.size(); ++i) {
    p.pixel_values->data[i] = static_cast<float>(i % 97) / 97.0f - 0.5f;
  }
  return p;
}

prompt text_prompt() {
  prompt p{"B", id_tensor({2, 5}, 0), std::nullopt};
  const std::int64_t tokens[2][5] = {{3, 14, 15, 9, 26}, {53, 58, 9, 7, 9}};
  for (std::int64_t b = 0; b < 2; ++b) {
    for (std::int64_t i = 0; i < 5; ++i) p.input_ids.at(b, i) = tokens[b][i];
  }
  return p;
}

}  // namespace tiny_llm

std::vector<std::pair<std::string, hookscope::tensor_spec>> hookscope::flatten_traits<tiny_llm::kv_cache>::flatten(
    const tiny_llm::kv_cache& cache) {
  std::vector<std::pair<std::string, hookscope::tensor_spec>> children;
  const hookscope::tensor_spec spec{cache.shape(), hookscope::dtype::float32};
  for (int l = 0; l < cache.layers(); ++l) {
    children.emplace_back("key_" + std::to_string(l), spec);
    children.emplace_back("value_" + std::to_string(l), spec);
  }
  return children;
}
