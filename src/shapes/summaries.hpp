// src/shapes/summaries.hpp — private to the shape engine: what the engine keeps of the recorded calls, in constant
// memory whatever their number — per top-level argument (key_summary), per flattened leaf of it (leaf_summary), per
// dimension of a leaf (dim_summary). Every rule is evaluated on these (rule ids: docs/input_observer_rules.md).
#pragma once

#include "values.hpp"

#include "../json_reader.hpp"

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

HOOKSCOPE_DETAIL_BEGIN_NAMESPACE
namespace detail::shapes {

//=== limits of the summaries (memory stays constant whatever the number of calls) ===//

// Beyond a bound, what is kept is the smallest entries (shapes in lexicographic order, sizes, calls by hash), never
// the first ones: the smallest of a union are the smallest of the smallest of each part, so summaries of shards
// merge into exactly the summary of the concatenated calls (merge_into below, merge.cpp).
inline constexpr std::size_t max_shapes_seen = 16;           // distinct shapes kept per tensor input
inline constexpr std::size_t max_distinct_values = 4096;     // distinct sizes counted per dimension (for opt)
inline constexpr std::size_t max_label_dims = 1024;          // dims whose pairs are tracked for shared labels (C3)
inline constexpr std::uint32_t untracked_dim = 0xffffffffU;  // dim_summary::pair_slot of a dim not tracked
// A summary's JSON holds values as deep as records do inside its own few levels.
inline constexpr std::size_t max_summary_json_levels = max_value_json_levels + 16;
// The value of a summary's member "format", which tells it from a record file.
inline constexpr std::string_view summary_format_name = "hookscope-shapes-summary";

/// A hash of a sequence of sizes that concatenates: hash(a ++ b) = hash(a) * base^len(b) + hash(b) (mod 2^61 - 1),
/// so that merged summaries name dimensions as one pass does (rule C3).
struct sequence_hash {
  std::uint64_t value = 0;
  void append(std::int64_t size) noexcept;
  /// `later` over `later_length` more values.
  void append(sequence_hash later, std::uint64_t later_length) noexcept;
  friend bool operator==(sequence_hash, sequence_hash) = default;
};

/// One dimension of a leaf, over the calls that give it a tensor of the leaf's rank.
struct dim_summary {
  std::int64_t first = 0;
  std::int64_t min = 0;
  std::int64_t max = 0;
  bool varies = false;
  bool counts_truncated = false;
  sequence_hash sequence;  // of the values in call order: equal sequences share a name (rule C3)
  std::vector<std::pair<std::int64_t, std::uint64_t>> counts;  // value -> calls, ascending value, the smallest kept
  std::uint32_t pair_slot = untracked_dim;  // its row in recorded_state::pairs (rebuilt from them, never written)
  std::uint32_t count_hint = 0;             // recording's cache: where in counts the last size counted is

  /// The most frequent value, the smallest on a tie (counts are in ascending value order).
  std::int64_t opt() const noexcept;
};

/// One flattened leaf of an argument, over the calls that give the argument.
struct leaf_summary {
  std::uint64_t observed = 0;  // tensors of the first rank seen
  std::size_t rank = 0;
  hookscope::dtype dtype = hookscope::dtype::float32;
  std::vector<hookscope::dtype> dtypes;  // distinct, first-seen order (at most the number of dtypes)
  std::vector<dim_summary> dims;
  std::vector<shape_t> shapes_seen;  // the smallest distinct ones, in first-seen order
  bool shapes_truncated = false;
  std::size_t largest_seen = 0;       // index of the largest of shapes_seen once full: one comparison per new shape
  std::size_t first_tensor_call = 0;  // of the first tensor (of rank `rank`, with dims[d].first)
  std::optional<std::size_t> rank_conflict_call;  // first call with another rank (rule C1)
  shape_t rank_conflict_shape;
  bool has_tensor = false;
  tensor_spec last_tensor;          // for the placeholders of infer_arguments (rule D2)
  std::optional<value> last_other;  // last non-tensor, non-none value
  std::size_t stamp = 0;            // call number + 1 when its dims last observed a tensor (dim_pairs.cpp reads it)
};

/// One top-level argument: a parameter name (given by position or by keyword), or a position without a parameter.
struct key_summary {
  std::string name;                     // empty for a position
  std::optional<std::size_t> position;  // set for a position without a parameter of its own
  std::uint64_t present = 0;            // calls giving it at all (remove_inputs counts them)
  std::uint64_t constant_present = 0;   // calls giving it as a constant keyword value
  std::uint64_t if_missing = 0;         // calls given it by value_if_missing (its placeholder, not an observation)
  std::uint64_t provided = 0;           // calls giving it with a truthy value (rule B4)
  // Calls whose value held no data (holds_no_dims) with another leaf count than the calls providing it: not given
  // (rule B4); and whether every call providing it held no data (a call holding data with another count then
  // replaces them, which are left out).
  std::uint64_t left_out_empty = 0;
  bool provided_empty = false;
  std::size_t leaf_count = 0;                                         // of the first call providing it
  std::size_t first_provided_call = 0;                                // that call
  std::optional<std::pair<std::size_t, std::size_t>> count_conflict;  // (call, leaves) of the first mismatch
  std::optional<std::size_t> first_kwarg_call;                        // first call naming it as a keyword (B1)
  std::vector<leaf_summary> leaves;
  std::size_t stamp = 0;  // call number + 1 when last seen in a call: catches an argument given twice

  /// Every call giving it gave value_if_missing's placeholder: it was never observed.
  bool only_if_missing() const noexcept { return present > 0 && if_missing == present; }

  /// One call's value for the argument: the counts, and every leaf's and dimension's summary (rules A6, B4, C1).
  /// The leaves and dimensions are observed by functions local to summaries.cpp, which the compiler inlines here.
  void observe(const value& v, std::size_t call);
};

/// Sets leaf_summary::largest_seen from shapes_seen (after reading a summary).
void index_largest_shape(leaf_summary& l);

/// Folds `later`, the summary of the same argument over calls that came after `into`'s (its call numbers shifted by
/// `offset`), into `into`: the result is what observing every call in order would have given.
void merge_into(key_summary& into, const key_summary& later, std::size_t offset);

}  // namespace detail::shapes
HOOKSCOPE_DETAIL_END_NAMESPACE
