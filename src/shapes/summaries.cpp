// The per-argument, per-leaf and per-dimension summaries of the recorded calls (summaries.hpp).
#include "summaries.hpp"

#include <algorithm>

HOOKSCOPE_DETAIL_BEGIN_NAMESPACE
namespace detail::shapes {

namespace {

std::uint64_t mix(std::uint64_t h) noexcept {  // splitmix64's finaliser
  h ^= h >> 30;
  h *= 0xbf58476d1ce4e5b9ULL;
  h ^= h >> 27;
  h *= 0x94d049bb133111ebULL;
  return h ^ (h >> 31);
}

}  // namespace

//=== dim_summary ===//

void dim_summary::observe(std::int64_t v, bool first_time) {
  if (first_time) {
    first = min = max = v;
  } else {
    varies = varies || v != first;
    min = std::min(min, v);
    max = std::max(max, v);
  }
  sequence_hash = mix(sequence_hash + static_cast<std::uint64_t>(v) + 0x9e3779b97f4a7c15ULL);
  auto it = std::lower_bound(counts.begin(), counts.end(), v,
                             [](const auto& entry, std::int64_t x) { return entry.first < x; });
  if (it != counts.end() && it->first == v) {
    ++it->second;
  } else if (counts.size() < max_distinct_values) {
    counts.insert(it, {v, 1});
  } else {
    counts_truncated = true;
  }
}

std::int64_t dim_summary::opt() const noexcept {
  std::int64_t best = first;
  std::uint64_t best_count = 0;
  for (const auto& [v, n] : counts) {
    if (n > best_count) best = v, best_count = n;
  }
  return best;
}

//=== leaf_summary ===//

void leaf_summary::observe(const value& leaf, std::size_t call) {
  if (!leaf.is_tensor()) {
    if (!leaf.is_none()) last_other = leaf;
    return;
  }
  const shape_t& shape = leaf.as_tensor().shape;
  remember_shape(shape);
  has_tensor = true;
  last_tensor.shape.assign(shape.begin(), shape.end());  // reuses the capacity: no allocation per call
  last_tensor.dtype = leaf.as_tensor().dtype;
  if (observed == 0) {
    rank = shape.size();
    dtype = leaf.as_tensor().dtype;
    dims.resize(rank);
  } else if (shape.size() != rank) {
    if (!rank_conflict_call) rank_conflict_call = call, rank_conflict_shape = shape;
    return;
  }
  for (std::size_t d = 0; d < rank; ++d) dims[d].observe(shape[d], observed == 0);
  ++observed;
}

void leaf_summary::remember_shape(const shape_t& shape) {
  if (!shapes_seen.empty() && shapes_seen.back() == shape) return;  // the usual case: same as last time
  if (std::find(shapes_seen.begin(), shapes_seen.end(), shape) != shapes_seen.end()) return;
  if (shapes_seen.size() < max_shapes_seen) {
    shapes_seen.push_back(shape);
  } else {
    shapes_truncated = true;
  }
}

//=== key_summary ===//

void key_summary::observe(const value& v, std::size_t call) {
  ++present;
  if (!truthy(v)) return;
  ++provided;
  const std::size_t n = shapes::leaf_count(v);
  if (provided == 1) {
    leaf_count = n;
    leaves.resize(n);
  } else if (n != leaf_count) {
    if (!count_conflict) count_conflict = std::pair{call, n};
    return;
  }
  std::size_t j = 0;
  for_each_leaf(v, [&](const value& leaf) { leaves[j++].observe(leaf, call); });
}

}  // namespace detail::shapes
HOOKSCOPE_DETAIL_END_NAMESPACE
