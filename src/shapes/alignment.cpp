// Alignment on the best candidate (rules B1-B5, docs/input_observer_rules.md): the best candidate's top-level
// arguments as slots, the checks that every call aligns on it, and a call's leaves aligned slot by slot; info().
#include "engine_state.hpp"

#include <algorithm>
#include <string_view>
#include <unordered_map>

HOOKSCOPE_DETAIL_BEGIN_NAMESPACE
namespace detail::shapes {

void require_calls(const recorded_state& s, std::string_view what) {
  if (s.n_calls == 0 || !s.best) {
    throw inference_error("" + std::string(what) +
                          ": no call was recorded (num_obs() is 0); record calls with begin_recording() and "
                          "add_call() first");
  }
}

namespace {

using kwarg_index = std::unordered_map<std::string_view, const value*>;

kwarg_index index_kwargs(const stored_call& c) {
  kwarg_index out;
  out.reserve(c.inputs.kwargs.size());
  for (const auto& kw : c.inputs.kwargs) out.emplace(kw.first, &kw.second);
  return out;
}

// The value a call gives to a slot of the best candidate (B3: extra positional arguments count as keywords, and a
// parameter the best candidate gives by position may come by its name: new inputs as a dict).
const value* find_value(const recorded_state& s, const stored_call& c, const kwarg_index& kw, const slot& sl) {
  if (sl.positional) {
    if (sl.position < c.inputs.args.size()) return &c.inputs.args[sl.position];
    const auto it = sl.signature_index ? kw.find(sl.name) : kw.end();
    return it != kw.end() ? it->second : nullptr;
  }
  if (const auto it = kw.find(sl.name); it != kw.end()) return it->second;
  for (std::size_t i = s.best->inputs.args.size(); i < c.inputs.args.size(); ++i) {
    if (s.find_position(i) == sl.key) return &c.inputs.args[i];
  }
  return nullptr;
}

// B5, beyond the reference: where the best candidate leaves out an argument (None, an empty cache) that other calls
// give, the slot takes the structure of a kept call giving it (a distinct call, else a stored one), so that the
// best candidate gets placeholders there as any call leaving it out does. None when no kept call gives it so.
const value* giving_value(const recorded_state& s, const slot& sl) {
  const key_summary& k = s.keys[sl.key];
  const auto gives = [&](const stored_call& c) -> const value* {
    const value* v = find_value(s, c, index_kwargs(c), sl);
    const bool full = v && truthy(*v) && v->leaf_count() == k.leaf_count && !(holds_no_dims(*v) && !k.provided_empty);
    return full ? v : nullptr;
  };
  for (const combination& c : s.combos) {
    if (const value* v = gives(*c.call)) return v;
  }
  for (const call_ptr& c : s.calls) {
    if (const value* v = gives(*c)) return v;
  }
  return nullptr;
}

}  // namespace

std::vector<slot> best_slots(const recorded_state& s) {
  std::vector<slot> slots;
  const parameter* var_pos = s.variadic(parameter_kind::var_positional);
  const auto& args = s.best->inputs.args;
  for (std::size_t i = 0; i < args.size(); ++i) {
    slot sl;
    sl.key = s.find_position(i).value();  // add_call made a key for every position of every call
    sl.positional = true;
    sl.position = i;
    sl.best_value = &args[i];
    if (i < s.n_named) {
      sl.name = sl.label_name = s.sig[i].name;
      sl.signature_index = i;
      sl.path = {s.sig[i].name};
    } else {
      sl.name = sl.label_name = "arg" + std::to_string(i);
      sl.path = var_pos ? std::vector<std::string>{var_pos->name, std::to_string(i - s.n_named)}
                        : std::vector<std::string>{sl.name};
    }
    slots.push_back(std::move(sl));
  }
  for (const auto& [name, v] : s.best->inputs.kwargs) {
    slot sl;
    sl.key = s.find_name(name).value();  // and for every keyword
    sl.best_value = &v;
    sl.name = sl.label_name = name;
    sl.path = {name};
    const auto index = s.signature_index(name);
    if (index && *index < s.n_named) sl.signature_index = index;
    slots.push_back(std::move(sl));
  }
  for (slot& sl : slots) {
    const key_summary& k = s.keys[sl.key];
    const value& own = *sl.best_value;
    const bool left_out = !truthy(own) || (holds_no_dims(own) && !k.provided_empty);
    if (k.provided == 0 || k.count_conflict || own.leaf_count() == k.leaf_count || !left_out) continue;
    if (const value* v = giving_value(s, sl)) sl.best_value = v;
  }
  return slots;
}

std::string slot_text(const slot& s) {
  if (s.positional) return "positional argument " + std::to_string(s.position) + " ('" + s.name + "')";
  return "named argument '" + s.name + "'";
}

namespace {

std::string best_kwargs_text(const recorded_state& s) {
  std::string out;
  for (const auto& kw : s.best->inputs.kwargs) out += (out.empty() ? "" : ", ") + kw.first;
  return out.empty() ? "none" : out;
}

}  // namespace

namespace {

// The facts naming a slot: its name, and its position when positional.
std::vector<inference_fact> slot_facts(const slot& sl) {
  std::vector<inference_fact> facts{{"argument", sl.name}};
  if (sl.positional) facts.push_back({"position", sl.position});
  return facts;
}

}  // namespace

// Raises the error the reference raises first: it checks the calls in order, each for B1, B2 then B4.
void check_alignment(const recorded_state& s, const std::vector<slot>& slots) {
  struct failure {
    std::size_t call;
    int rule;
    inference_error error;
  };
  std::optional<failure> first;
  const auto consider = [&](std::size_t call, int rule, auto make_error) {
    if (!first || call < first->call || (call == first->call && rule < first->rule)) {
      first.emplace(failure{call, rule, make_error()});
    }
  };
  const stored_call& best = *s.best;
  const kwarg_index best_kwargs = index_kwargs(best);
  for (const key_summary& k : s.keys) {  // B1
    if (!k.first_kwarg_call || k.position) continue;
    const bool in_best = best_kwargs.count(k.name) != 0;
    if (in_best) continue;
    consider(*k.first_kwarg_call, 0, [&] {
      // Facts: argument (the name the call gives), call, best_call, best_keywords (the best candidate's, as text).
      return inference_error(inference_error_kind::named_argument_missing,
                             "at least one call to the observed function must contain all the named arguments: call " +
                                 std::to_string(*k.first_kwarg_call) + " names '" + k.name +
                                 "' but the best candidate (call " + std::to_string(best.index) +
                                 ") names only: " + best_kwargs_text(s),
                             {{"argument", k.name},
                              {"call", *k.first_kwarg_call},
                              {"best_call", best.index},
                              {"best_keywords", best_kwargs_text(s)}});
    });
  }
  for (const constant_set& set : s.constant_sets) {  // B2
    if (constants_equal(set.values, best.constants)) continue;
    consider(set.first_call, 1, [&] {
      // Facts: constants, call, best_constants, best_call.
      return inference_error(inference_error_kind::constants_differ,
                             "two calls were made with different constant values, " + constants_text(set.values) +
                                 " (call " + std::to_string(set.first_call) + ") != " + constants_text(best.constants) +
                                 " (best candidate, call " + std::to_string(best.index) + ")",
                             {{"constants", constants_text(set.values)},
                              {"call", set.first_call},
                              {"best_constants", constants_text(best.constants)},
                              {"best_call", best.index}});
    });
  }
  for (const slot& sl : slots) {  // B4
    const key_summary& k = s.keys[sl.key];
    if (!k.count_conflict) continue;
    consider(k.count_conflict->first, 2, [&] {
      // Facts: argument, position (a positional slot's), count, previous, call.
      std::vector<inference_fact> facts = slot_facts(sl);
      facts.push_back({"count", k.count_conflict->second});
      facts.push_back({"previous", k.leaf_count});
      facts.push_back({"call", k.count_conflict->first});
      return inference_error(inference_error_kind::leaf_count_differs,
                             slot_text(sl) + " has " + std::to_string(k.count_conflict->second) +
                                 " flattened leaves in call " + std::to_string(k.count_conflict->first) +
                                 " but previously got " + std::to_string(k.leaf_count) +
                                 "; inference is impossible in that case",
                             std::move(facts));
    });
  }
  if (first) throw first->error;
  for (const slot& sl : slots) {  // B5
    const key_summary& k = s.keys[sl.key];
    const std::size_t best_count = sl.best_value->leaf_count();
    if (k.provided == 0 || k.leaf_count == best_count) continue;
    // Facts: argument, position (a positional slot's), count (in the calls that give it), best_count, best_call.
    std::vector<inference_fact> facts = slot_facts(sl);
    facts.push_back({"count", k.leaf_count});
    facts.push_back({"best_count", best_count});
    facts.push_back({"best_call", best.index});
    throw inference_error(inference_error_kind::not_aligned,
                          "the calls do not align on the best candidate (call " + std::to_string(best.index) +
                              "): " + slot_text(sl) + " has " + std::to_string(k.leaf_count) +
                              " flattened leaves in the calls that give it but " + std::to_string(best_count) +
                              " in the best candidate, which leaves it out",
                          std::move(facts));
  }
}

std::vector<flat_leaf> flatten_slots(const recorded_state& s, const std::vector<slot>& slots) {
  std::vector<flat_leaf> flat;
  for (std::size_t i = 0; i < slots.size(); ++i) {
    const key_summary& k = s.keys[slots[i].key];
    std::vector<std::string> path = slots[i].path;
    std::size_t j = 0;
    for_each_leaf(
        *slots[i].best_value,
        [&](const value&) {
          flat.push_back({i, k.provided > 0 ? &k.leaves[j] : nullptr, path});
          ++j;
        },
        &path);
  }
  return flat;
}

// B3, B4: leaves by slot; an argument left out (or falsy) becomes placeholders, except a falsy scalar where no call
// gave a tensor.
std::vector<const value*> aligned_leaves(const recorded_state& s, const stored_call& c, const std::vector<slot>& slots,
                                         bool strict) {
  static const value placeholder;
  std::vector<const value*> out;
  const kwarg_index kw = index_kwargs(c);
  for (const slot& sl : slots) {
    const value* v = find_value(s, c, kw, sl);
    const std::size_t expected = sl.best_value->leaf_count();
    const key_summary& k = s.keys[sl.key];
    // A falsy number, bool or string where no call gave a tensor is the value the call was given, not an absence.
    if (v && !truthy(*v) && is_scalar(*v) && expected == 1 && !(k.leaves.size() == 1 && k.leaves.front().has_tensor)) {
      out.push_back(v);
      continue;
    }
    if (v && truthy(*v)) {
      const std::size_t n = v->leaf_count();
      if (n == expected) {
        for_each_leaf(*v, [&](const value& leaf) { out.push_back(&leaf); });
        continue;
      }
      // No data (an empty sliding-window cache keeps only 0-d tensors) beside calls holding some: left out.
      if (strict && !(holds_no_dims(*v) && !k.provided_empty)) {
        // Facts: argument, position (a positional slot's), count, previous.
        const std::size_t previous = k.provided ? k.leaf_count : expected;
        std::vector<inference_fact> facts = slot_facts(sl);
        facts.push_back({"count", n});
        facts.push_back({"previous", previous});
        throw inference_error(inference_error_kind::leaf_count_differs,
                              slot_text(sl) + " has " + std::to_string(n) + " flattened leaves but previously got " +
                                  std::to_string(previous) + "; inference is impossible in that case",
                              std::move(facts));
      }
    }
    out.insert(out.end(), expected, &placeholder);
  }
  return out;
}

std::vector<value> align(const recorded_state& s, const stored_call& c, const std::vector<slot>& slots, bool strict) {
  const std::vector<const value*> leaves = aligned_leaves(s, c, slots, strict);
  std::vector<value> out;
  out.reserve(leaves.size());
  for (const value* leaf : leaves) out.push_back(*leaf);
  return out;
}

engine_info info(const recorded_state& s) {
  engine_info out;
  out.parameters = s.sig;
  if (!s.best) return out;
  const std::vector<call_ptr> listed = s.options.keep_calls ? s.calls : std::vector<call_ptr>{s.best};
  const std::vector<slot> slots = best_slots(s);
  for (std::size_t i = 0; i < listed.size(); ++i) {
    if (listed[i] == s.best) out.best_candidate = i;
    call_info c;
    c.inputs = listed[i]->inputs;
    c.constants = listed[i]->constants;
    c.leaf_count = listed[i]->leaf_count;
    c.aligned = align(s, *listed[i], slots, false);
    out.calls.push_back(std::move(c));
  }
  return out;
}

}  // namespace detail::shapes
HOOKSCOPE_DETAIL_END_NAMESPACE
