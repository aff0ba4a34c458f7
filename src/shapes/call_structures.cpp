// Call structures (shape_engine::add_structure, call_structures.hpp): the first call of a structure is recorded by
// add_call itself and leaves its prepared inputs (after A3-A5) behind; every later call writes its sizes into them and
// runs the observation steps (A6-A7) only. One path: the steps are recording.cpp's, called in the same order.
#include "call_structures.hpp"

#include <algorithm>
#include <atomic>
#include <string_view>
#include <unordered_map>

HOOKSCOPE_DETAIL_BEGIN_NAMESPACE
namespace detail::shapes {

namespace {

// The tensors of a tree in leaf order, writable: `v` is owned (non-const) by the caller, and value gives no mutable
// access to a leaf, so the const of for_each_leaf's view is cast away on objects that are not const.
void tensors_of(const value& v, std::vector<tensor_spec*>& out) {
  for_each_leaf(v, [&](const value& leaf) {
    if (leaf.is_tensor()) out.push_back(const_cast<tensor_spec*>(&leaf.as_tensor()));
  });
}

void tensors_of(const call_inputs& in, std::vector<tensor_spec*>& out) {
  for (const value& a : in.args) tensors_of(a, out);
  for (const auto& kw : in.kwargs) tensors_of(kw.second, out);
}

std::size_t tensor_count(const value& v) {
  std::size_t n = 0;
  for_each_leaf(v, [&](const value& leaf) { n += leaf.is_tensor() ? 1 : 0; });
  return n;
}

// Writes each tensor's sizes (of its rank: no allocation) from `sizes`, in order; null targets skip theirs.
void write_sizes(const std::vector<tensor_spec*>& targets, const std::vector<std::size_t>& ranks,
                 std::span<const std::int64_t> sizes) {
  std::size_t at = 0;
  for (std::size_t t = 0; t < targets.size(); ++t) {
    if (targets[t]) {
      for (std::size_t d = 0; d < ranks[t]; ++d) targets[t]->shape[d] = sizes[at + d];  // a few: no memmove call
    }
    at += ranks[t];
  }
}

}  // namespace

structure_part::structure_part(call_inputs original) : original_(std::move(original)) {
  std::vector<tensor_spec*> tensors;
  tensors_of(original_, tensors);
  for (const tensor_spec* t : tensors) {
    ranks_.push_back(t->shape.size());
    sizes_ += t->shape.size();
  }
}

call_inputs structure_part::with_sizes(std::span<const std::int64_t> sizes) const {
  call_inputs out = original_;
  std::vector<tensor_spec*> tensors;
  tensors_of(out, tensors);
  write_sizes(tensors, ranks_, sizes);
  return out;
}

// Where each of the original's tensors is in the prepared call: positional arguments keep their place unless
// value_if_missing replaced them (their sizes are then ignored); keyword arguments are found by name (A5 reorders
// them; A3 drops only None and scalars, which hold no tensor; a name is given once, else key_call threw).
void structure_part::keep_prepared(const recorded_state& s, const prepared_call& c, std::uint64_t epoch) {
  prepared_ = c;
  keys_ = keys_of(s, c);
  targets_.clear();
  const call_inputs& in = prepared_.inputs;
  for (std::size_t i = 0; i < original_.args.size(); ++i) {
    const bool replaced = std::any_of(c.filled.begin(), c.filled.end(),
                                      [&](const input_key& k) { return k.is_position() && k.position() == i; });
    if (replaced) {
      targets_.resize(targets_.size() + tensor_count(original_.args[i]), nullptr);
    } else {
      tensors_of(in.args[i], targets_);
    }
  }
  std::unordered_map<std::string_view, const value*> prepared_kwargs;  // by name: linear in the keywords
  prepared_kwargs.reserve(in.kwargs.size());
  for (const auto& [name, v] : in.kwargs) prepared_kwargs.emplace(name, &v);
  for (const auto& kw : original_.kwargs) {
    if (tensor_count(kw.second) == 0) continue;  // a keyword A3 drops, whose name a placeholder may then take, has none
    tensors_of(*prepared_kwargs.at(kw.first), targets_);
  }
  hash_ = hash_program(prepared_.inputs);
  known_combos_.clear();
  every_target_ = std::none_of(targets_.begin(), targets_.end(), [](const tensor_spec* t) { return t == nullptr; });
  // A tag of its own (across engines and threads): its calls' combinations are compared by their sizes alone.
  static std::atomic<std::uint64_t> next_tag{1};
  prepared_.structure = next_tag.fetch_add(1, std::memory_order_relaxed);
  epoch_ = epoch;
}

bool structure_part::add_call(recorded_state& s, std::span<const std::int64_t> sizes, std::uint64_t epoch) {
  if (at_limit(s)) return false;
  if (epoch_ != epoch) {
    epoch_.reset();
    prepared_call c{with_sizes(sizes)};
    prepare_call(s, c);
    key_call(s, c);
    keep_prepared(s, c, epoch);
    observe_call(s, c, &c);
    return true;
  }
  write_sizes(targets_, ranks_, sizes);
  prepared_.sizes = sizes;
  if (!every_target_) {  // the sizes of tensors value_if_missing replaced are no part of the call
    effective_.clear();
    std::size_t at = 0;
    for (std::size_t t = 0; t < targets_.size(); ++t) {
      if (targets_[t])
        effective_.insert(effective_.end(), sizes.begin() + static_cast<std::ptrdiff_t>(at),
                          sizes.begin() + static_cast<std::ptrdiff_t>(at + ranks_[t]));
      at += ranks_[t];
    }
    prepared_.sizes = effective_;
  }
  prepared_.hash_program = &hash_;  // set here, not when prepared: a structure_part may have moved since
  prepared_.known_combos = &known_combos_;
  key_call(s, prepared_, keys_);
  observe_call(s, prepared_, nullptr);
  return true;
}

}  // namespace detail::shapes
HOOKSCOPE_DETAIL_END_NAMESPACE
