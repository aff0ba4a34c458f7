// The per-argument, per-leaf and per-dimension summaries of the recorded calls (summaries.hpp).
#include "summaries.hpp"

#include <algorithm>

HOOKSCOPE_DETAIL_BEGIN_NAMESPACE
namespace detail::shapes {

namespace {

//=== observing one call (local: each has one caller, into which it is inlined) ===//

void observe_dim(dim_summary& s, std::int64_t v, bool first_time) {
  if (first_time) {
    s.first = s.min = s.max = v;
  } else {
    s.varies = s.varies || v != s.first;
    s.min = std::min(s.min, v);
    s.max = std::max(s.max, v);
  }
  s.sequence_hash = mix(s.sequence_hash + static_cast<std::uint64_t>(v) + 0x9e3779b97f4a7c15ULL);
  auto it = std::lower_bound(s.counts.begin(), s.counts.end(), v,
                             [](const auto& entry, std::int64_t x) { return entry.first < x; });
  if (it != s.counts.end() && it->first == v) {
    ++it->second;
  } else if (s.counts.size() < max_distinct_values) {
    s.counts.insert(it, {v, 1});
  } else {
    s.counts_truncated = true;
  }
}

void remember_shape(leaf_summary& l, const shape_t& shape) {
  auto& seen = l.shapes_seen;
  if (!seen.empty() && seen.back() == shape) return;  // the usual case: same as last time
  if (std::find(seen.begin(), seen.end(), shape) != seen.end()) return;
  if (seen.size() < max_shapes_seen) {
    seen.push_back(shape);
  } else {
    l.shapes_truncated = true;
  }
}

void observe_leaf(leaf_summary& l, const value& leaf, std::size_t call) {
  if (!leaf.is_tensor()) {
    if (!leaf.is_none()) l.last_other = leaf;
    return;
  }
  const shape_t& shape = leaf.as_tensor().shape;
  remember_shape(l, shape);
  l.has_tensor = true;
  l.last_tensor.shape.assign(shape.begin(), shape.end());  // reuses the capacity: no allocation per call
  l.last_tensor.dtype = leaf.as_tensor().dtype;
  if (std::find(l.dtypes.begin(), l.dtypes.end(), l.last_tensor.dtype) == l.dtypes.end()) {
    l.dtypes.push_back(l.last_tensor.dtype);
  }
  if (l.observed == 0) {
    l.rank = shape.size();
    l.dtype = leaf.as_tensor().dtype;
    l.dims.resize(l.rank);
  } else if (shape.size() != l.rank) {
    if (!l.rank_conflict_call) l.rank_conflict_call = call, l.rank_conflict_shape = shape;
    return;
  }
  for (std::size_t d = 0; d < l.rank; ++d) observe_dim(l.dims[d], shape[d], l.observed == 0);
  ++l.observed;
}

}  // namespace

//=== dim_summary ===//

std::int64_t dim_summary::opt() const noexcept {
  std::int64_t best = first;
  std::uint64_t best_count = 0;
  for (const auto& [v, n] : counts) {
    if (n > best_count) best = v, best_count = n;
  }
  return best;
}

//=== key_summary ===//

void key_summary::observe(const value& v, std::size_t call) {
  ++present;
  if (!truthy(v)) return;
  ++provided;
  const std::size_t n = v.leaf_count();
  if (provided == 1) {
    leaf_count = n;
    leaves.resize(n);
  } else if (n != leaf_count) {
    if (!count_conflict) count_conflict = std::pair{call, n};
    return;
  }
  std::size_t j = 0;
  for_each_leaf(v, [&](const value& leaf) { observe_leaf(leaves[j++], leaf, call); });
}

}  // namespace detail::shapes
HOOKSCOPE_DETAIL_END_NAMESPACE
