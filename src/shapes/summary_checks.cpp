// The cross-checks of a summary read back (summary_checks.hpp): every field against the others, as recording keeps
// them (summaries.cpp, recording.cpp), so that the inference may rely on what it reads (a leaf's last tensor of its
// rank, dims in their ranges, calls among the recorded ones) and a damaged or hand-edited summary gives a
// format_error naming the JSON path, never a crash or a wrong answer built from numbers that contradict each other.
#include "summary_checks.hpp"

#include <algorithm>
#include <numeric>
#include <set>

HOOKSCOPE_DETAIL_BEGIN_NAMESPACE
namespace detail::shapes {

namespace {

[[noreturn]] void fail(const json_path& at, const std::string& what) { fail_at(at, what); }

std::string text(const shape_t& shape) {
  std::string out = "[";
  // Appended piece by piece: GCC 12 at -O3 reports a false -Wrestrict for `"literal" + std::to_string(...)`.
  for (std::size_t i = 0; i < shape.size(); ++i) {
    if (i) out += ',';
    out += std::to_string(shape[i]);
  }
  return out + "]";
}

void check_call(const json_path& at, std::uint64_t call, std::size_t n_calls) {
  if (call >= n_calls) {
    fail(at, "call " + std::to_string(call) + " is beyond the " + std::to_string(n_calls) + " calls recorded");
  }
}

void check_dim(const dim_summary& d, std::uint64_t observed, const json_path& at) {
  if (d.min < 0) fail(at / "min", "a negative size " + std::to_string(d.min));
  if (d.varies != (d.min != d.max)) fail(at / "varies", "does not say whether min and max differ");
  const json_path counts_at = at / "counts";
  if (d.counts.empty()) fail(counts_at, "no size counted for a dimension seen " + std::to_string(observed) + " times");
  std::uint64_t sum = 0;
  for (std::size_t i = 0; i < d.counts.size(); ++i) {
    const auto& [v, n] = d.counts[i];
    if (v < d.min || v > d.max) fail(counts_at[i][0], "size " + std::to_string(v) + " outside [min, max]");
    if (n == 0) fail(counts_at[i][1], "a size counted in no call");
    if (n > observed - std::min(observed, sum)) {
      fail(counts_at[i][1], "more calls counted than the " + std::to_string(observed) + " the leaf was seen in");
    }
    sum += n;
  }
  // The smallest sizes are kept: the minimum always, the maximum unless some were dropped.
  if (d.counts.front().first != d.min) fail(counts_at, "the smallest size counted is not min");
  if (d.counts_truncated) {
    if (d.counts.size() != max_distinct_values) {
      fail(at / "counts_truncated", "true with fewer than " + std::to_string(max_distinct_values) + " sizes");
    }
  } else {
    if (d.counts.back().first != d.max) fail(counts_at, "the largest size counted is not max");
    if (sum != observed) {
      fail(counts_at, std::to_string(sum) + " calls counted for a leaf seen " + std::to_string(observed) + " times");
    }
  }
}

bool in_ranges(const leaf_summary& l, const shape_t& shape) {
  for (std::size_t d = 0; d < shape.size(); ++d) {
    if (shape[d] < l.dims[d].min || shape[d] > l.dims[d].max) return false;
  }
  return true;
}

void check_leaf(const leaf_summary& l, const key_summary& k, std::size_t n_calls, const json_path& at) {
  if (l.has_tensor != (l.observed > 0)) {
    fail(at / "last_tensor", l.has_tensor ? "a last tensor for a leaf never seen as a tensor"
                                          : "no last tensor for a leaf seen as a tensor");
  }
  if (l.observed > k.provided) {
    fail(at / "observed",
         std::to_string(l.observed) + " tensors in an argument provided " + std::to_string(k.provided) + " times");
  }
  if (l.observed == 0) {
    if (l.rank != 0 || !l.dtypes.empty() || !l.shapes_seen.empty() || l.shapes_truncated || l.rank_conflict_call ||
        l.first_tensor_call != 0) {
      fail(at, "a rank, dtypes, shapes or calls for a leaf never seen as a tensor");
    }
    return;
  }
  check_call(at / "first_tensor_call", l.first_tensor_call, n_calls);
  if (l.first_tensor_call < k.first_provided_call) {
    fail(at / "first_tensor_call", "before the argument's first_provided_call");
  }
  const auto has_dtype = [&](hookscope::dtype t) {
    return std::find(l.dtypes.begin(), l.dtypes.end(), t) != l.dtypes.end();
  };
  for (std::size_t i = 0; i < l.dtypes.size(); ++i) {
    if (std::find(l.dtypes.begin(), l.dtypes.begin() + static_cast<std::ptrdiff_t>(i), l.dtypes[i]) !=
        l.dtypes.begin() + static_cast<std::ptrdiff_t>(i)) {
      fail((at / "dtypes")[i], "a dtype listed twice");
    }
  }
  if (!has_dtype(l.dtype)) fail(at / "dtype", "not among dtypes");
  if (!has_dtype(l.last_tensor.dtype)) fail(at / "last_tensor", "its dtype is not among dtypes");
  for (std::size_t d = 0; d < l.dims.size(); ++d) check_dim(l.dims[d], l.observed, (at / "dims")[d]);

  if (l.rank_conflict_call) {
    const json_path conflict_at = at / "rank_conflict";
    check_call(conflict_at[0], *l.rank_conflict_call, n_calls);
    if (*l.rank_conflict_call <= l.first_tensor_call) fail(conflict_at[0], "not after first_tensor_call");
    if (l.rank_conflict_shape.size() == l.rank) fail(conflict_at[1], "of the leaf's own rank");
  }
  // A tensor of another rank than the first is recorded only as a conflict: without one, every shape is of the
  // leaf's rank (the placeholders index the last tensor's dims by the leaf's).
  const json_path shapes_at = at / "shapes_seen";
  if (l.shapes_truncated && l.shapes_seen.size() != max_shapes_seen) {
    fail(at / "shapes_truncated", "true with fewer than " + std::to_string(max_shapes_seen) + " shapes");
  }
  for (std::size_t i = 0; i < l.shapes_seen.size(); ++i) {
    const shape_t& shape = l.shapes_seen[i];
    if (std::find(l.shapes_seen.begin(), l.shapes_seen.begin() + static_cast<std::ptrdiff_t>(i), shape) !=
        l.shapes_seen.begin() + static_cast<std::ptrdiff_t>(i)) {
      fail(shapes_at[i], "a shape listed twice");
    }
    if (shape.size() != l.rank) {
      if (!l.rank_conflict_call) {
        fail(shapes_at[i],
             text(shape) + " is not of rank " + std::to_string(l.rank) + " and no rank_conflict is given");
      }
    } else if (!l.rank_conflict_call && !in_ranges(l, shape)) {
      // With a conflict, a merged part whose first rank was another kept its tensors of this rank out of the dims.
      fail(shapes_at[i], text(shape) + " lies outside the dims' [min, max]");
    }
  }
  const shape_t& last = l.last_tensor.shape;
  if (last.size() != l.rank) {
    if (!l.rank_conflict_call) {
      fail(at / "last_tensor",
           text(last) + " is not of rank " + std::to_string(l.rank) + " and no rank_conflict is given");
    }
  } else if (!l.rank_conflict_call && !in_ranges(l, last)) {
    fail(at / "last_tensor", text(last) + " lies outside the dims' [min, max]");
  }
  if (!l.shapes_truncated && std::find(l.shapes_seen.begin(), l.shapes_seen.end(), last) == l.shapes_seen.end()) {
    fail(at / "last_tensor", text(last) + " is not among shapes_seen");
  }
}

void check_key(const key_summary& k, std::size_t n_calls, const json_path& at) {
  if (k.present > n_calls) fail(at / "present", "more than the " + std::to_string(n_calls) + " calls recorded");
  if (k.constant_present > n_calls) {
    fail(at / "constant_present", "more than the " + std::to_string(n_calls) + " calls recorded");
  }
  if (k.provided > k.present) fail(at / "provided", "more than present");
  if (k.left_out_empty > k.present - k.provided) fail(at / "left_out_empty", "more than present and not provided");
  if (k.provided_empty && k.provided == 0) fail(at / "provided_empty", "for an argument never provided");
  if (k.if_missing > k.present) fail(at / "if_missing", "more than present");
  if (k.first_kwarg_call) check_call(at / "first_kwarg_call", *k.first_kwarg_call, n_calls);
  if (k.provided == 0) {
    if (k.leaf_count != 0 || k.first_provided_call != 0 || k.count_conflict) {
      fail(at, "leaves or calls for an argument never provided");
    }
    return;
  }
  check_call(at / "first_provided_call", k.first_provided_call, n_calls);
  if (k.count_conflict) {
    const json_path conflict_at = at / "count_conflict";
    check_call(conflict_at[0], k.count_conflict->first, n_calls);
    if (k.count_conflict->first <= k.first_provided_call) fail(conflict_at[0], "not after first_provided_call");
    if (k.count_conflict->second == k.leaf_count) fail(conflict_at[1], "the argument's own leaf_count");
  }
  for (std::size_t j = 0; j < k.leaves.size(); ++j) check_leaf(k.leaves[j], k, n_calls, (at / "leaves")[j]);
}

// The calls the summary stores (best, the combinations, first_by_counts) against the leaves' summaries: each
// tensor of a leaf's rank within its dims' ranges, of a dtype seen, any other rank only with a rank conflict.
void check_stored_call(const recorded_state& s, const stored_call& c, const std::vector<slot>& slots,
                       const std::vector<flat_leaf>& flat, const json_path& at) {
  // Strict: without a leaf-count conflict (check_calls returns before), every call that gives an argument gives it
  // with its leaf_count leaves, so a stored call with more or fewer contradicts the summary.
  std::vector<const value*> leaves;
  try {
    leaves = aligned_leaves(s, c, slots, true);
  } catch (const inference_error& e) {
    fail(at, std::string("it does not fit the summaries of the arguments: ") + std::string(e.sentence()));
  }
  for (std::size_t f = 0; f < leaves.size() && f < flat.size(); ++f) {
    const leaf_summary* l = flat[f].summary;
    if (!leaves[f]->is_tensor() || l == nullptr) continue;
    const tensor_spec& t = leaves[f]->as_tensor();
    // Spelled only for a call that fails: a summary keeps thousands of calls.
    const auto fail_where = [&](const std::string& what) {
      fail(at, "its tensor '" + join_path(flat[f].path) + "' " + text(t.shape) + what);
    };
    if (l->observed == 0) fail_where(" is in no summary of its leaf");
    if (std::find(l->dtypes.begin(), l->dtypes.end(), t.dtype) == l->dtypes.end()) {
      fail_where(" has a dtype its leaf's summary does not list");
    }
    if (t.shape.size() != l->rank) {
      if (!l->rank_conflict_call) fail_where(" is not of its leaf's rank " + std::to_string(l->rank));
    } else if (!l->rank_conflict_call && !in_ranges(*l, t.shape)) {
      fail_where(" lies outside its leaf's dims' [min, max]");
    }
  }
}

void check_calls(const recorded_state& s, const json_path& at) {
  std::uint64_t sum = 0;
  const json_path combos_at = at / "combinations";
  for (std::size_t i = 0; i < s.combos.size(); ++i) {
    const std::uint64_t n = s.combos[i].count;
    if (n == 0 || n > s.n_calls - std::min<std::uint64_t>(s.n_calls, sum)) {
      fail(combos_at[i][1], "the combinations count more calls than the " + std::to_string(s.n_calls) + " recorded");
    }
    sum += n;
  }
  if (s.combos_truncated ? s.combos.size() != max_combinations : sum != s.n_calls) {
    fail(combos_at, std::to_string(s.combos.size()) + " combinations of " + std::to_string(sum) + " calls for " +
                        std::to_string(s.n_calls) + " calls recorded" +
                        (s.combos_truncated ? " (truncated: expected " + std::to_string(max_combinations) + ")" : ""));
  }
  if (s.n_calls > 0 && s.combos.empty()) fail(combos_at, "none for " + std::to_string(s.n_calls) + " calls");
  if (s.first_by_counts.size() > max_count_pairs) {
    fail(at / "first_by_counts", "more than " + std::to_string(max_count_pairs) + " pairs");
  }
  std::set<count_pair> pairs;
  for (std::size_t i = 0; i < s.first_by_counts.size(); ++i) {
    if (!pairs.insert(s.first_by_counts[i].first).second) fail((at / "first_by_counts")[i], "counts listed twice");
  }
  const json_path sets_at = at / "constant_sets";
  for (std::size_t i = 0; i < s.constant_sets.size(); ++i) {
    check_call(sets_at[i] / "first_call", s.constant_sets[i].first_call, s.n_calls);
  }
  if (!s.best) return;
  const std::vector<slot> slots = best_slots(s);
  // With a leaf count that differs between calls the inference stops at it (rule B4): leaves do not line up.
  for (const slot& sl : slots) {
    const key_summary& k = s.keys.at(sl.key);
    if (k.count_conflict || (k.provided > 0 && sl.best_value->leaf_count() != k.leaves.size())) return;
  }
  const std::vector<flat_leaf> flat = flatten_slots(s, slots);
  check_stored_call(s, *s.best, slots, flat, at / "best");
  for (std::size_t i = 0; i < s.combos.size(); ++i)
    check_stored_call(s, *s.combos[i].call, slots, flat, combos_at[i][0]);
  for (std::size_t i = 0; i < s.first_by_counts.size(); ++i) {
    check_stored_call(s, *s.first_by_counts[i].second, slots, flat, (at / "first_by_counts")[i][2]);
  }
}

// A placeholder count belongs to an argument value_if_missing names (by name, or by the position of its parameter or
// its own): a count elsewhere would take a real input's batch dim away (rule C2) on no recorded ground.
bool has_placeholder(const recorded_state& s, const key_summary& k) {
  return std::any_of(s.if_missing.begin(), s.if_missing.end(), [&](const auto& entry) {
    const input_key& key = entry.first;
    if (!key.is_position()) return !k.name.empty() && key.name() == k.name;
    const std::size_t p = key.position();
    return (k.position && *k.position == p) || (!k.name.empty() && p < s.sig.size() && s.sig[p].name == k.name);
  });
}

}  // namespace

void check_summary_state(const recorded_state& s, const json_path& at) {
  const json_path keys_at = at / "arguments";
  for (std::size_t i = 0; i < s.keys.size(); ++i) {
    check_key(s.keys[i], s.n_calls, keys_at[i]);
    if (s.keys[i].if_missing > 0 && !has_placeholder(s, s.keys[i])) {
      fail(keys_at[i] / "if_missing", "a count of placeholders for an argument value_if_missing does not name");
    }
  }
  try {
    check_calls(s, at);
  } catch (const format_error&) {
    throw;
  } catch (const std::exception& e) {  // inference_error from aligning a call the summaries do not fit
    fail(at / "best",
         std::string("the stored calls do not fit the summaries of the arguments: ") + std::string(sentence_of(e)));
  }
}

}  // namespace detail::shapes
HOOKSCOPE_DETAIL_END_NAMESPACE
