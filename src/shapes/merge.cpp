// Merging recorded states (the step to many machines): the state of calls recorded elsewhere, after this state's
// calls, folds into it so that every inference gives exactly what one state given all the calls in that order gives.
// What makes it exact: every summary is a sum, a min/max, a first/last, a concatenating hash, or a bounded set that
// keeps its smallest entries (summaries.hpp); call numbers of the later state shift by the earlier one's count.
#include "engine_state.hpp"

#include <algorithm>
#include <map>

HOOKSCOPE_DETAIL_BEGIN_NAMESPACE
namespace detail::shapes {

namespace {

[[noreturn]] void refuse(merge_error::reason reason, const std::string& why) { throw merge_error(reason, why); }

std::string if_missing_text(const std::vector<std::pair<input_key, value>>& entries) {
  std::string out;
  for (const auto& [key, v] : entries) out += (out.empty() ? "" : ", ") + key.to_string() + "=" + to_json(v);
  return out.empty() ? "none" : out;
}

// Only states recorded alike merge: every call kept (a limit keeps "the first N", which shards cannot know), the
// same signature (it decides what positions name and which keywords are constants), the same value_if_missing.
void check_every_call(const recorded_state& into, const recorded_state& later) {
  if (into.options.store_n_calls != unlimited || later.options.store_n_calls != unlimited) {
    refuse(merge_error::reason::not_every_call, "only states recording every call merge (store_n_calls = unlimited)");
  }
}

void check_alike(const recorded_state& into, const recorded_state& later) {
  if (into.sig_set != later.sig_set || into.sig != later.sig) {
    const auto text = [](const recorded_state& s) { return s.sig_set ? s.signature_text() : std::string("none"); };
    refuse(merge_error::reason::signatures_differ,
           "the signatures differ: " + text(into) + " and " + text(later) +
               " (a part of a file split by lines lacks the signature its first record carries)");
  }
  if (into.if_missing != later.if_missing) {
    refuse(
        merge_error::reason::values_if_missing_differ,
        "value_if_missing differs: " + if_missing_text(into.if_missing) + " and " + if_missing_text(later.if_missing));
  }
}

// The later state's stored calls, renumbered; one copy per call, so that calls shared by best, first_by_counts and
// the combinations stay shared.
class shifted_calls {
 public:
  explicit shifted_calls(std::size_t offset) : offset_(offset) {}
  call_ptr operator()(const call_ptr& c) {
    call_ptr& copy = copies_[c.get()];
    if (!copy) {
      copy = std::make_shared<stored_call>(*c);
      copy->index += offset_;
    }
    return copy;
  }

 private:
  std::size_t offset_;
  std::map<const stored_call*, call_ptr> copies_;
};

std::size_t key_for(recorded_state& into, const key_summary& k) {
  if (!k.position) {
    if (const auto i = into.find_name(k.name)) return *i;
    into.keys.emplace_back().name = k.name;
    into.name_keys.emplace(k.name, into.keys.size() - 1);
    return into.keys.size() - 1;
  }
  for (std::size_t i = 0; i < into.keys.size(); ++i) {
    if (into.keys[i].position == k.position) return i;
  }
  into.keys.emplace_back().position = k.position;
  return into.keys.size() - 1;
}

void merge_constant_sets(recorded_state& into, const recorded_state& later, std::size_t offset) {
  for (const constant_set& set : later.constant_sets) {
    const bool known = std::any_of(into.constant_sets.begin(), into.constant_sets.end(),
                                   [&](const constant_set& c) { return constants_equal(c.values, set.values); });
    if (!known && into.constant_sets.size() < max_constant_sets) {
      into.constant_sets.push_back({set.values, set.first_call + offset});
    }
  }
}

// A copied state's kept calls, copied in turn (one copy per call, however many places keep it): an engine shares no
// stored call with another, since remove_inputs rewrites its calls in place.
void own_calls(recorded_state& s) {
  shifted_calls copy(0);
  for (combination& c : s.combos) c.call = copy(c.call);
  if (s.best) s.best = copy(s.best);
  for (auto& entry : s.first_by_counts) entry.second = copy(entry.second);
  for (call_ptr& c : s.calls) c = copy(c);
}

void merge_calls(recorded_state& into, const recorded_state& later, shifted_calls& shift) {
  for (const combination& c : later.combos) {  // in first-call order: add_combo keeps combos so
    if (const auto i = find_combo(into, c.hash, c.call->inputs, c.call->constants)) {
      into.combos[*i].count += c.count;
    } else {
      add_combo(into, {shift(c.call), c.count, c.hash});
    }
  }
  into.combos_truncated = into.combos_truncated || later.combos_truncated;
  if (later.best && (!into.best || later.best->leaf_count > into.best->leaf_count)) into.best = shift(later.best);
  for (const auto& entry : later.first_by_counts) {  // not a structured binding: Clang 14 cannot capture one
    const bool known = std::any_of(into.first_by_counts.begin(), into.first_by_counts.end(),
                                   [&](const auto& e) { return e.first == entry.first; });
    if (!known && into.first_by_counts.size() < max_count_pairs) {
      into.first_by_counts.emplace_back(entry.first, shift(entry.second));
    }
  }
  if (into.options.keep_calls && later.options.keep_calls) {
    for (const call_ptr& c : later.calls) into.calls.push_back(shift(c));
  } else {
    into.options.keep_calls = false;
    into.calls.clear();
  }
}

}  // namespace

void merge(recorded_state& into, const recorded_state& later) {
  check_every_call(into, later);
  if (later.n_calls == 0 && later.n_ignored == 0) return;  // an empty part (a shard without calls of the function)
  if (into.n_calls == 0 && into.n_ignored == 0) {
    const engine_options options = into.options;
    into = later;
    own_calls(into);
    into.options.keep_calls = options.keep_calls && later.options.keep_calls;
    if (!into.options.keep_calls) into.calls.clear();
    return;
  }
  check_alike(into, later);
  const std::size_t offset = into.n_calls;
  merge_pairs(into, later);
  for (const key_summary& k : later.keys) {
    const std::size_t i = key_for(into, k);
    merge_into(into.keys[i], k, offset);
  }
  index_pairs(into);
  merge_constant_sets(into, later, offset);
  shifted_calls shift(offset);
  merge_calls(into, later, shift);
  into.n_calls += later.n_calls;
  into.n_ignored += later.n_ignored;
  into.position_keys.clear();  // rebuilt from the keys by the next add_call
}

}  // namespace detail::shapes
HOOKSCOPE_DETAIL_END_NAMESPACE
