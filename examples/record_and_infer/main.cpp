// record_and_infer — the cross-process workflow: a C++ program is run with HOOKSCOPE_RECORD in its
// environment (no code change, no recorder in the code), then `hookscope-shapes` infers the dynamic shapes
// from the file it wrote. run.sh does both and checks the result.
//
// The program is a toy encoder service: requests of different batch sizes and lengths go through one
// annotated function, as they would through a model's forward().
#include "hookscope/observable.hpp"
#include "hookscope/tensor.hpp"

#include <cstdint>
#include <cstdio>
#include <optional>
#include <vector>

namespace service {

// A tiny tensor of token ids: what a real service would hand to its model.
struct token_batch {
  std::int64_t batch = 0;
  std::int64_t length = 0;
  std::vector<std::int64_t> ids;
};

}  // namespace service

template <>
struct hookscope::tensor_traits<service::token_batch> {
  static std::vector<std::int64_t> shape(const service::token_batch& t) { return {t.batch, t.length}; }
  static hookscope::dtype dtype(const service::token_batch&) { return hookscope::dtype::int64; }
};

namespace service {
namespace impl {
// Sums each row's ids, masked: a stand-in for the model, enough to be a real computation.
std::vector<std::int64_t> encode(const token_batch& input_ids, const std::optional<token_batch>& attention_mask) {
  std::vector<std::int64_t> sums(static_cast<std::size_t>(input_ids.batch), 0);
  for (std::int64_t b = 0; b < input_ids.batch; ++b) {
    for (std::int64_t i = 0; i < input_ids.length; ++i) {
      const auto at = static_cast<std::size_t>(b * input_ids.length + i);
      if (!attention_mask || attention_mask->ids[at] != 0) sums[static_cast<std::size_t>(b)] += input_ids.ids[at];
    }
  }
  return sums;
}
}  // namespace impl

HOOKSCOPE_OBSERVABLE(encode, impl::encode, input_ids, attention_mask);

token_batch make_batch(std::int64_t batch, std::int64_t length, std::int64_t fill) {
  return {batch, length, std::vector<std::int64_t>(static_cast<std::size_t>(batch * length), fill)};
}

}  // namespace service

int main() {
  // Four requests: (batch, length) = (2, 5), (1, 9), (4, 7) with masks, then (1, 3) without one.
  struct request {
    std::int64_t batch, length;
    bool masked;
  };
  for (const request r : {request{2, 5, true}, request{1, 9, true}, request{4, 7, true}, request{1, 3, false}}) {
    const auto ids = service::make_batch(r.batch, r.length, 2);
    const auto mask = r.masked ? std::optional(service::make_batch(r.batch, r.length, 1)) : std::nullopt;
    const auto sums = service::encode(ids, mask);
    std::printf("request %lldx%lld -> first row sum %lld\n", static_cast<long long>(r.batch),
                static_cast<long long>(r.length), static_cast<long long>(sums.front()));
  }
  return 0;
}
