// The per-argument, per-leaf and per-dimension summaries of the recorded calls (summaries.hpp).
#include "summaries.hpp"

#include <algorithm>

HOOKSCOPE_DETAIL_BEGIN_NAMESPACE
namespace detail::shapes {

namespace {

//=== the sequence hash: a polynomial over the Mersenne prime 2^61 - 1 ===//

constexpr std::uint64_t mersenne = (std::uint64_t{1} << 61) - 1;
constexpr std::uint64_t hash_base = 0x1c8e4b3a5f27d913ULL % mersenne;

std::uint64_t reduce(std::uint64_t x) noexcept {
  x = (x & mersenne) + (x >> 61);
  return x >= mersenne ? x - mersenne : x;
}

std::uint64_t mul_mod(std::uint64_t a, std::uint64_t b) noexcept {
  __extension__ using u128 = unsigned __int128;  // GCC and Clang; __extension__: no -Wpedantic
  const u128 p = static_cast<u128>(a) * b;
  return reduce(reduce(static_cast<std::uint64_t>(p & mersenne)) + static_cast<std::uint64_t>(p >> 61));
}

std::uint64_t pow_mod(std::uint64_t base, std::uint64_t exponent) noexcept {
  std::uint64_t out = 1;
  for (; exponent; exponent >>= 1, base = mul_mod(base, base)) {
    if (exponent & 1) out = mul_mod(out, base);
  }
  return out;
}

// sequence_hash::append(size), local so that observe_dim inlines it (one call per dim of every call).
std::uint64_t appended(std::uint64_t hash, std::int64_t size) noexcept {
  return reduce(mul_mod(hash, hash_base) + reduce(mix(static_cast<std::uint64_t>(size) + 0x9e3779b97f4a7c15ULL)));
}

}  // namespace

//=== sequence_hash ===//

void sequence_hash::append(std::int64_t size) noexcept { value = appended(value, size); }

void sequence_hash::append(sequence_hash later, std::uint64_t later_length) noexcept {
  value = reduce(mul_mod(value, pow_mod(hash_base, later_length)) + later.value);
}

namespace {

//=== bounded sets that keep their smallest entries (so that they merge exactly) ===//

using count_entry = std::pair<std::int64_t, std::uint64_t>;

// Adds `n` calls of size `v` to the ascending counts. Consecutive calls mostly repeat a size or step to the next
// one (a growing sequence): the last size counted and the one after it are tried before a binary search.
void count_value(dim_summary& s, std::int64_t v, std::uint64_t n) {
  auto& counts = s.counts;
  for (std::size_t h = s.count_hint; h < counts.size() && h <= std::size_t{s.count_hint} + 1; ++h) {
    if (counts[h].first == v) {
      counts[h].second += n;
      s.count_hint = static_cast<std::uint32_t>(h);
      return;
    }
  }
  auto it = counts.end();
  if (!counts.empty() && !(counts.back().first < v)) {
    it = std::lower_bound(counts.begin(), counts.end(), v,
                          [](const count_entry& e, std::int64_t x) { return e.first < x; });
  }
  if (it != counts.end() && it->first == v) {
    it->second += n;
    s.count_hint = static_cast<std::uint32_t>(it - counts.begin());
    return;
  }
  if (counts.size() == max_distinct_values) {
    s.counts_truncated = true;
    if (it == counts.end()) return;  // larger than every kept size
    counts.pop_back();
  }
  s.count_hint = static_cast<std::uint32_t>(it - counts.begin());
  counts.insert(it, {v, n});
}

// Shapes are short: an inline loop beats std::vector's == (a memcmp call) and <.
bool same_shape(const shape_t& a, const shape_t& b) noexcept {
  if (a.size() != b.size()) return false;
  for (std::size_t i = 0; i < a.size(); ++i) {
    if (a[i] != b[i]) return false;
  }
  return true;
}

// Lexicographic <, as std::vector's.
bool shape_less(const shape_t& a, const shape_t& b) noexcept {
  const std::size_t n = std::min(a.size(), b.size());
  for (std::size_t i = 0; i < n; ++i) {
    if (a[i] != b[i]) return a[i] < b[i];
  }
  return a.size() < b.size();
}

// Adds a distinct shape: when full, the largest of the kept ones and the new one goes. Once full, a shape not below
// the largest kept one is either that one or not kept: one comparison before any search.
void remember_shape(leaf_summary& l, const shape_t& shape) {
  auto& seen = l.shapes_seen;
  if (!seen.empty() && same_shape(seen.back(), shape)) return;  // the usual case: same as last time
  const bool full = seen.size() == max_shapes_seen;
  if (full && !shape_less(shape, seen[l.largest_seen])) {
    if (!same_shape(shape, seen[l.largest_seen])) l.shapes_truncated = true;
    return;
  }
  if (std::any_of(seen.begin(), seen.end(), [&](const shape_t& s) { return same_shape(s, shape); })) return;
  if (!full) {
    seen.push_back(shape);
    if (seen.size() == max_shapes_seen) index_largest_shape(l);
    return;
  }
  l.shapes_truncated = true;
  seen.erase(seen.begin() + static_cast<std::ptrdiff_t>(l.largest_seen));
  seen.push_back(shape);
  index_largest_shape(l);
}

//=== observing one call (local: each has one caller, into which it is inlined) ===//

void observe_dim(dim_summary& s, std::int64_t v, bool first_time) {
  if (first_time) {
    s.first = s.min = s.max = v;
  } else {
    s.varies = s.varies || v != s.first;
    s.min = std::min(s.min, v);
    s.max = std::max(s.max, v);
  }
  s.sequence.value = appended(s.sequence.value, v);
  if (s.count_hint < s.counts.size() && s.counts[s.count_hint].first == v) {  // count_value's first try, inlined
    ++s.counts[s.count_hint].second;
  } else {
    count_value(s, v, 1);
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
  if (l.last_tensor.shape.size() == shape.size()) {  // the usual case: a few sizes copied in a loop, no memmove call
    for (std::size_t d = 0; d < shape.size(); ++d) l.last_tensor.shape[d] = shape[d];
  } else {
    l.last_tensor.shape.assign(shape.begin(), shape.end());  // reuses the capacity: no allocation per call
  }
  l.last_tensor.dtype = leaf.as_tensor().dtype;
  if (std::find(l.dtypes.begin(), l.dtypes.end(), l.last_tensor.dtype) == l.dtypes.end()) {
    l.dtypes.push_back(l.last_tensor.dtype);
  }
  if (l.observed == 0) {
    l.rank = shape.size();
    l.dtype = leaf.as_tensor().dtype;
    l.dims.resize(l.rank);
    l.first_tensor_call = call;
  } else if (shape.size() != l.rank) {
    if (!l.rank_conflict_call) l.rank_conflict_call = call, l.rank_conflict_shape = shape;
    return;
  }
  for (std::size_t d = 0; d < l.rank; ++d) observe_dim(l.dims[d], shape[d], l.observed == 0);
  ++l.observed;
  l.stamp = call + 1;
}

//=== merging (the later summary's calls come after) ===//

std::optional<std::size_t> shifted(std::optional<std::size_t> call, std::size_t offset) {
  return call ? std::optional(*call + offset) : std::nullopt;
}

void merge_dim(dim_summary& into, const dim_summary& later, std::uint64_t later_length) {
  into.varies = into.varies || later.varies || later.first != into.first;
  into.min = std::min(into.min, later.min);
  into.max = std::max(into.max, later.max);
  into.sequence.append(later.sequence, later_length);
  into.counts_truncated = into.counts_truncated || later.counts_truncated;
  for (const auto& [v, n] : later.counts) count_value(into, v, n);
}

// The tensors of `later` of another rank than `into`'s are each a conflict; its first is the first of them.
void merge_tensors(leaf_summary& into, const leaf_summary& later, std::size_t offset) {
  if (into.observed == 0) {
    into.observed = later.observed;
    into.rank = later.rank;
    into.dtype = later.dtype;
    into.dims = later.dims;
    into.first_tensor_call = later.first_tensor_call + offset;
    into.rank_conflict_call = shifted(later.rank_conflict_call, offset);
    into.rank_conflict_shape = later.rank_conflict_shape;
    return;
  }
  if (later.rank != into.rank) {
    if (!into.rank_conflict_call) {
      into.rank_conflict_call = later.first_tensor_call + offset;
      into.rank_conflict_shape.clear();
      for (const dim_summary& d : later.dims) into.rank_conflict_shape.push_back(d.first);
    }
    return;
  }
  if (!into.rank_conflict_call && later.rank_conflict_call) {
    into.rank_conflict_call = *later.rank_conflict_call + offset;
    into.rank_conflict_shape = later.rank_conflict_shape;
  }
  for (std::size_t d = 0; d < into.rank; ++d) merge_dim(into.dims[d], later.dims[d], later.observed);
  into.observed += later.observed;
}

void merge_leaf(leaf_summary& into, const leaf_summary& later, std::size_t offset) {
  into.shapes_truncated = into.shapes_truncated || later.shapes_truncated;
  for (const shape_t& shape : later.shapes_seen) remember_shape(into, shape);
  for (const hookscope::dtype t : later.dtypes) {
    if (std::find(into.dtypes.begin(), into.dtypes.end(), t) == into.dtypes.end()) into.dtypes.push_back(t);
  }
  if (later.observed > 0) merge_tensors(into, later, offset);
  if (later.has_tensor) into.has_tensor = true, into.last_tensor = later.last_tensor;
  if (later.last_other) into.last_other = later.last_other;
}

}  // namespace

void index_largest_shape(leaf_summary& l) {
  const auto& seen = l.shapes_seen;
  l.largest_seen = static_cast<std::size_t>(std::max_element(seen.begin(), seen.end()) - seen.begin());
}

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
  const std::size_t n = is_container(v) ? v.leaf_count() : 1;  // a leaf is its own only leaf
  const bool empty = holds_no_dims(v);
  if (provided > 0 && n != leaf_count && empty && !provided_empty) {
    ++left_out_empty;  // no data beside calls holding some: left out (B4)
    return;
  }
  if (provided > 0 && n != leaf_count && !empty && provided_empty && !count_conflict) {
    // The calls so far held no data: they are left out, this call's leaves are the argument's.
    left_out_empty += provided;
    provided = 0;
    leaves.clear();
  }
  ++provided;
  if (provided == 1) {
    leaf_count = n;
    first_provided_call = call;
    leaves.resize(n);
    provided_empty = empty;
  } else if (n != leaf_count) {
    if (!count_conflict) count_conflict = std::pair{call, n};
    return;
  }
  provided_empty = provided_empty && empty;
  if (!is_container(v)) return observe_leaf(leaves[0], v, call);  // no walk for the usual single tensor
  std::size_t j = 0;
  for_each_leaf(v, [&](const value& leaf) { observe_leaf(leaves[j++], leaf, call); });
}

void merge_into(key_summary& into, const key_summary& later, std::size_t offset) {
  into.present += later.present;
  into.constant_present += later.constant_present;
  into.if_missing += later.if_missing;
  into.left_out_empty += later.left_out_empty;
  if (!into.first_kwarg_call) into.first_kwarg_call = shifted(later.first_kwarg_call, offset);
  if (later.provided == 0) return;
  if (into.provided > 0 && later.leaf_count != into.leaf_count && later.provided_empty != into.provided_empty &&
      !into.count_conflict && !later.count_conflict) {
    // One side's calls held no data, the other's did, with another leaf count: the first are left out (B4).
    if (later.provided_empty) {
      into.left_out_empty += later.provided;
      return;
    }
    into.left_out_empty += into.provided;
    into.provided = 0;
    into.leaves.clear();
  }
  if (into.provided == 0) {
    into.provided_empty = later.provided_empty;
    into.leaf_count = later.leaf_count;
    into.first_provided_call = later.first_provided_call + offset;
    into.leaves.resize(into.leaf_count);
  } else if (later.leaf_count != into.leaf_count) {
    // Every call of `later` that provides it conflicts with `into`'s count; an inference then fails on the first.
    if (!into.count_conflict) into.count_conflict = std::pair{later.first_provided_call + offset, later.leaf_count};
    into.provided += later.provided;
    return;
  }
  if (!into.count_conflict && later.count_conflict) {
    into.count_conflict = std::pair{later.count_conflict->first + offset, later.count_conflict->second};
  }
  into.provided += later.provided;
  into.provided_empty = into.provided_empty && later.provided_empty;
  for (std::size_t j = 0; j < into.leaves.size(); ++j) merge_leaf(into.leaves[j], later.leaves[j], offset);
}

}  // namespace detail::shapes
HOOKSCOPE_DETAIL_END_NAMESPACE
