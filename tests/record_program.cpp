// Run by tools/check_record_env.py with and without HOOKSCOPE_RECORD: the records come from the environment alone.
#include "hookscope/observable.hpp"
#include "hookscope/tensor.hpp"

#include <cstdio>
#include <optional>
#include <stdexcept>
#include <string>

using hookscope::dtype;
using hookscope::tensor_spec;

namespace impl {
tensor_spec forward(const tensor_spec& input_ids, const std::optional<tensor_spec>& attention_mask, bool use_cache) {
  (void)attention_mask;
  if (input_ids.shape.size() != 2) throw std::invalid_argument("input_ids must have rank 2");
  return {{input_ids.shape[0], input_ids.shape[1], use_cache ? 16 : 8}, dtype::float32};
}
int step(int n) { return n + 1; }
struct handle {  // nothing can capture it
  virtual ~handle() = default;
  int id = 3;
};
int open_handle(const handle& h) { return h.id; }
}  // namespace impl

HOOKSCOPE_OBSERVABLE(forward, impl::forward, input_ids, attention_mask, use_cache);
HOOKSCOPE_OBSERVABLE(step, impl::step, n);
HOOKSCOPE_OBSERVABLE(open_handle, impl::open_handle, h);

int main() {
  const tensor_spec ids{{1, 7}, dtype::int64};
  const tensor_spec mask{{1, 7}, dtype::int64};
  std::printf("%zu\n", forward(ids, mask, true).shape.size());
  std::printf("%zu\n", forward(tensor_spec{{2, 1}, dtype::int64}, std::nullopt, false).shape.size());
  try {
    forward(tensor_spec{{3}, dtype::int64}, std::nullopt, true);
  } catch (const std::exception& e) {
    std::printf("caught %s\n", e.what());
  }
  std::printf("%d\n", step(step(1)));
  const impl::handle h;
  std::printf("%d %d\n", open_handle(h), open_handle(h));
  return 0;
}
