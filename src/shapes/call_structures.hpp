// src/shapes/call_structures.hpp — private to the shape engine: a call structure (shape_engine::add_structure), whose
// later calls give only their tensors' sizes. Per recorded_state (the inputs, and the results) one structure_part.
#pragma once

#include "engine_state.hpp"

#include <cstdint>
#include <optional>
#include <span>
#include <unordered_map>
#include <vector>

HOOKSCOPE_DETAIL_BEGIN_NAMESPACE
namespace detail::shapes {

/// One recorded_state's share of a call structure: the call as given (its tensors' shapes ignored), and once a call
/// of it was recorded, that call prepared (A3-A5, recording.cpp) with the place of each of its tensors in it.
class structure_part {
 public:
  explicit structure_part(call_inputs original);
  // A copy's targets would point into the original's prepared call; a move keeps the containers' storage, and them.
  structure_part(const structure_part&) = delete;
  structure_part& operator=(const structure_part&) = delete;
  structure_part(structure_part&&) noexcept = default;
  structure_part& operator=(structure_part&&) noexcept = default;
  ~structure_part() = default;
  /// How many sizes a call gives: the ranks of the original's tensor leaves, summed.
  std::size_t sizes() const noexcept { return sizes_; }
  /// Exactly add_call(s, the original with its tensors' shapes taken from `sizes`, in leaf order). The first call
  /// after `epoch` changed (anything that changes how a call is prepared or renumbers the keys) takes that path
  /// itself and keeps what it prepared; the later ones write the sizes into the prepared call in place and observe
  /// it (no value tree built). A structure whose preparation throws is never kept: each call throws as add_call does.
  bool add_call(recorded_state& s, std::span<const std::int64_t> sizes, std::uint64_t epoch);

 private:
  call_inputs with_sizes(std::span<const std::int64_t> sizes) const;
  void keep_prepared(const recorded_state& s, const prepared_call& c, std::uint64_t epoch);

  call_inputs original_;
  std::vector<std::size_t> ranks_;  // per tensor leaf of original_, in leaf order
  std::size_t sizes_ = 0;
  std::optional<std::uint64_t> epoch_;  // none: nothing prepared (yet, or since the epoch changed)
  prepared_call prepared_{};
  call_keys keys_{};
  std::vector<tensor_spec*> targets_;  // per tensor leaf of original_: its tensor in prepared_, or null (a placeholder)
  bool every_target_ = true;           // no null among targets_: a call's sizes are all the prepared call's
  std::vector<std::int64_t> effective_;                          // else the sizes of the targets, for prepared_.sizes
  call_hash_program hash_;                                       // call_hash of prepared_, reading its sizes in place
  std::unordered_map<std::uint64_t, std::size_t> known_combos_;  // prepared_call::known_combos
};

}  // namespace detail::shapes
HOOKSCOPE_DETAIL_END_NAMESPACE
