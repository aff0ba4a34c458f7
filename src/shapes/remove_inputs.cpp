// remove_inputs (rule D4, docs/input_observer_rules.md): forgets arguments everywhere — their summaries, the kept
// calls, value_if_missing, the signature and the constant sets — as if no call had given them.
#include "engine_state.hpp"

#include <algorithm>
#include <functional>

HOOKSCOPE_DETAIL_BEGIN_NAMESPACE
namespace detail::shapes {

namespace {

bool contains(const std::vector<std::string>& names, std::string_view name) {
  return std::find(names.begin(), names.end(), name) != names.end();
}

std::vector<call_ptr> unique_calls(const recorded_state& s) {
  std::vector<call_ptr> out = s.calls;
  if (s.best) out.push_back(s.best);
  for (const auto& e : s.first_by_counts) out.push_back(e.second);
  for (const auto& c : s.combos) out.push_back(c.call);
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

// `positions`: of named positional parameters, descending.
void remove_from_calls(recorded_state& s, const std::vector<std::size_t>& positions,
                       const std::vector<std::string>& removed) {
  const auto is_removed = [&](const auto& f) { return contains(removed, f.first); };
  for (const call_ptr& c : unique_calls(s)) {
    for (const std::size_t p : positions) {
      if (p < c->inputs.args.size()) c->inputs.args.erase(c->inputs.args.begin() + static_cast<std::ptrdiff_t>(p));
    }
    std::erase_if(c->inputs.kwargs, is_removed);
    std::erase_if(c->constants, is_removed);
    c->leaf_count = call_leaf_count(c->inputs);
  }
  // The first call of each argument count: recounted from the kept calls (the earliest wins a shared count).
  std::vector<std::pair<count_pair, call_ptr>> recount;
  for (const auto& [counts, c] : s.first_by_counts) {
    const count_pair now{c->inputs.args.size(), c->inputs.kwargs.size()};
    auto it = std::find_if(recount.begin(), recount.end(), [&](const auto& e) { return e.first == now; });
    if (it == recount.end()) {
      recount.emplace_back(now, c);
    } else if (c->index < it->second->index) {
      it->second = c;
    }
  }
  s.first_by_counts = std::move(recount);
}

// The summaries of the removed names that some call gave are erased (the other keys keep their order; position_keys,
// the only record of key indices, is rebuilt by on_signature); returns how many times they were given.
std::size_t forget_keys(recorded_state& s, const std::vector<std::string>& removed) {
  std::size_t count = 0;
  std::vector<bool> erased(s.keys.size(), false);
  for (const std::string& name : removed) {
    const auto k = s.find_name(name);
    if (k && !erased[*k] && (s.keys[*k].present || s.keys[*k].constant_present)) {
      count += s.keys[*k].present + s.keys[*k].constant_present;
      erased[*k] = true;
    }
  }
  std::vector<key_summary> kept;
  kept.reserve(s.keys.size());
  for (std::size_t i = 0; i < s.keys.size(); ++i) {
    if (!erased[i]) kept.push_back(std::move(s.keys[i]));
  }
  s.keys = std::move(kept);
  s.name_keys.clear();
  for (std::size_t i = 0; i < s.keys.size(); ++i) {
    if (!s.keys[i].position) s.name_keys.emplace(s.keys[i].name, i);
  }
  return count;
}

}  // namespace

std::size_t remove_inputs(recorded_state& s, const std::vector<std::string>& names) {
  if (s.n_calls == 0) throw inference_error("remove_inputs: no input was captured");
  std::vector<std::size_t> positions;  // of named positional parameters, descending
  std::vector<std::string> removed;    // parameter / keyword names
  for (const std::string& text : names) {
    const input_key k = input_key::parse(text);
    const std::optional<std::size_t> index = k.is_position() ? std::optional(k.position()) : s.signature_index(text);
    if (index && *index < s.sig.size() && s.sig[*index].kind != parameter_kind::positional_or_keyword) {
      throw inference_error("remove_inputs: cannot remove the variadic parameter '" + s.sig[*index].name + "'");
    }
    if (index && *index < s.n_named) positions.push_back(*index);
    if (!k.is_position()) removed.push_back(text);
    if (k.is_position() && index && *index < s.sig.size()) removed.push_back(s.sig[*index].name);
  }
  std::sort(positions.begin(), positions.end(), std::greater<>());
  positions.erase(std::unique(positions.begin(), positions.end()), positions.end());
  const std::size_t count = forget_keys(s, removed);
  remove_from_calls(s, positions, removed);
  rebuild_combos(s);
  for (const std::size_t p : positions) {  // later positions shift down, as the positional arguments do
    for (key_summary& k : s.keys) {
      if (k.position && *k.position > p) --*k.position;
    }
  }
  forget_removed_pairs(s);
  std::erase_if(s.if_missing, [&](const auto& e) {
    return contains(removed, e.first.to_string()) ||
           (e.first.is_position() &&
            std::find(positions.begin(), positions.end(), e.first.position()) != positions.end());
  });
  std::erase_if(s.sig, [&](const parameter& p) { return contains(removed, p.name); });
  on_signature(s);
  for (auto& set : s.constant_sets) {
    std::erase_if(set.values, [&](const auto& c) { return contains(removed, c.first); });
  }
  for (std::size_t i = 0; i < s.constant_sets.size();
       ++i) {  // sets that became equal merge, the earliest first call kept
    for (std::size_t j = i + 1; j < s.constant_sets.size();) {
      if (!constants_equal(s.constant_sets[i].values, s.constant_sets[j].values)) {
        ++j;
        continue;
      }
      s.constant_sets[i].first_call = std::min(s.constant_sets[i].first_call, s.constant_sets[j].first_call);
      s.constant_sets.erase(s.constant_sets.begin() + static_cast<std::ptrdiff_t>(j));
    }
  }
  return count;
}

}  // namespace detail::shapes
HOOKSCOPE_DETAIL_END_NAMESPACE
