// Recording (rules A1-A7, docs/input_observer_rules.md): the signature, value_if_missing, and add_call, which
// splits the constant keyword values apart, applies value_if_missing, orders the keywords (prepare_call), finds the
// arguments' keys (key_call), updates the summaries and keeps the calls the inference needs (observe_call: the best
// candidate, the first call of each argument count pair). A call of a known structure (call_structures.cpp) takes the
// same steps, preparing once.
#include "engine_state.hpp"
#include "../fnv1a.hpp"

#include <algorithm>
#include <functional>

HOOKSCOPE_DETAIL_BEGIN_NAMESPACE
namespace detail::shapes {

//=== the signature and the keys ===//

// A short signature is scanned (cheaper than hashing the name); a long one is looked up in sig_index.
constexpr std::size_t scanned_signature = 16;

std::optional<std::size_t> recorded_state::signature_index(std::string_view name) const {
  if (sig.size() <= scanned_signature) {
    for (std::size_t i = 0; i < sig.size(); ++i) {
      if (sig[i].name == name) return i;
    }
    return std::nullopt;
  }
  const auto it = sig_index.find(name);
  if (it == sig_index.end()) return std::nullopt;
  return it->second.index;
}

const parameter* recorded_state::variadic(parameter_kind kind) const {
  for (const parameter& p : sig) {
    if (p.kind == kind) return &p;
  }
  return nullptr;
}

const value* recorded_state::scalar_default(std::string_view name) const {
  if (sig.size() <= scanned_signature) {
    for (const parameter& p : sig) {
      if (p.name == name && p.default_value && is_scalar(*p.default_value)) return &*p.default_value;
    }
    return nullptr;
  }
  const auto it = sig_index.find(name);
  if (it == sig_index.end() || !it->second.scalar_default) return nullptr;
  return &*sig[*it->second.scalar_default].default_value;
}

std::string recorded_state::signature_text() const {
  std::string out = "(";
  for (std::size_t i = 0; i < sig.size(); ++i) {
    if (i) out += ", ";
    out += sig[i].name;
  }
  return out + ")";
}

// Each field's position looked up once (not twice per comparison), then a stable sort by it.
void recorded_state::sort_by_signature(value_fields& fields) const {
  std::vector<std::pair<std::size_t, std::size_t>> order;  // (signature position, field)
  order.reserve(fields.size());
  for (std::size_t i = 0; i < fields.size(); ++i)
    order.emplace_back(signature_index(fields[i].first).value_or(sig.size()), i);
  std::stable_sort(order.begin(), order.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
  value_fields sorted;
  sorted.reserve(fields.size());
  for (const auto& entry : order) sorted.push_back(std::move(fields[entry.second]));
  fields = std::move(sorted);
}

std::optional<std::size_t> recorded_state::find_name(std::string_view name) const {
  if (name_keys.size() <= scanned_signature) {  // as for signatures: a few names are scanned, not hashed
    for (const auto& [key_name, key] : name_keys) {
      if (key_name == name) return key;
    }
    return std::nullopt;
  }
  const auto it = name_keys.find(name);
  if (it == name_keys.end()) return std::nullopt;
  return it->second;
}

std::optional<std::size_t> recorded_state::find_position(std::size_t p) const {
  if (p < position_keys.size()) return position_keys[p];
  if (p < n_named) return find_name(sig[p].name);
  for (std::size_t j = 0; j < keys.size(); ++j) {
    if (keys[j].position == p) return j;
  }
  return std::nullopt;
}

// A2: positions name the leading positional-or-keyword parameters.
void on_signature(recorded_state& s) {
  s.n_named = 0;
  while (s.n_named < s.sig.size() && s.sig[s.n_named].kind == parameter_kind::positional_or_keyword) ++s.n_named;
  s.sig_index.clear();
  for (std::size_t i = 0; i < s.sig.size(); ++i) {
    const parameter& p = s.sig[i];
    signature_entry& e = s.sig_index.try_emplace(p.name, signature_entry{i, std::nullopt}).first->second;
    if (!e.scalar_default && p.default_value && is_scalar(*p.default_value)) e.scalar_default = i;
  }
  s.position_keys.clear();
}

void set_parameters(recorded_state& s, parameter_list sig) {
  if (s.sig_set) {
    if (sig == s.sig) return;
    throw inference_error("set_parameters: the parameters are already set to " + s.signature_text() +
                          " and cannot change");
  }
  if (s.n_calls > 0) {
    throw inference_error("set_parameters: set the parameters before adding calls");
  }
  s.sig = std::move(sig);
  s.sig_set = true;
  on_signature(s);
}

void value_if_missing(recorded_state& s, input_key key, value v) {
  for (auto& e : s.if_missing) {
    if (e.first == key) {
      e.second = std::move(v);
      return;
    }
  }
  s.if_missing.emplace_back(std::move(key), std::move(v));
}

// A1: the next store_n_calls calls are kept.
void begin_recording(recorded_state& s) {
  const std::size_t n = s.options.store_n_calls;
  s.limit = n > unlimited - s.n_calls ? unlimited : s.n_calls + n;
}

std::size_t call_leaf_count(const call_inputs& in) {
  std::size_t n = 0;
  for (const value& a : in.args) n += a.leaf_count();
  for (const auto& kw : in.kwargs) n += kw.second.leaf_count();
  return n;
}

namespace {

std::size_t intern_name(recorded_state& s, std::string_view name) {
  if (const auto k = s.find_name(name)) return *k;
  s.keys.emplace_back().name = std::string(name);
  s.name_keys.emplace(s.keys.back().name, s.keys.size() - 1);
  return s.keys.size() - 1;
}

// The key of positional argument i, created (with those before it) on first use.
std::size_t position_key(recorded_state& s, std::size_t i) {
  while (s.position_keys.size() <= i) {
    const std::size_t p = s.position_keys.size();
    if (p < s.n_named) {
      s.position_keys.push_back(intern_name(s, s.sig[p].name));
      continue;
    }
    std::size_t k = s.keys.size();
    for (std::size_t j = 0; j < s.keys.size(); ++j) {
      if (s.keys[j].position == p) k = j;
    }
    if (k == s.keys.size()) s.keys.emplace_back().position = p;
    s.position_keys.push_back(k);
  }
  return s.position_keys[i];
}

//=== add_call's steps ===//

// A3: constant scalar keyword values apart (those equal to their default dropped), None and scalars dropped.
value_fields split_kwargs(const recorded_state& s, call_inputs& in) {
  value_fields constants;
  auto& kw = in.kwargs;
  std::size_t out = 0;
  for (std::size_t i = 0; i < kw.size(); ++i) {
    value& v = kw[i].second;
    if (v.is_none()) continue;
    if (is_scalar(v)) {
      const value* d = s.scalar_default(kw[i].first);
      if (d && !scalar_equal(v, *d)) constants.push_back(std::move(kw[i]));
      continue;
    }
    if (out != i) kw[out] = std::move(kw[i]);
    ++out;
  }
  kw.resize(out, {std::string(), value()});
  if (constants.size() > 1) s.sort_by_signature(constants);
  return constants;
}

// The place of named parameter `name` among the call's positional arguments, if the call gives it there.
std::optional<std::size_t> position_given(const recorded_state& s, const call_inputs& in, std::string_view name) {
  const auto i = s.signature_index(name);
  if (i && *i < s.n_named && *i < in.args.size()) return *i;
  return std::nullopt;
}

// Returns whether the call left that argument out (gave none there).
bool apply_missing_position(const recorded_state& s, call_inputs& in, std::size_t k, const value& v) {
  if (k >= s.sig.size()) {
    throw inference_error("value_if_missing position " + std::to_string(k) + " is beyond the observed signature " +
                          s.signature_text());
  }
  if (k >= in.args.size()) {
    // Facts: position, given (the call's positional arguments).
    throw inference_error(inference_error_kind::if_missing_position_not_given,
                          "value_if_missing position " + std::to_string(k) + " is not given in this call: only " +
                              std::to_string(in.args.size()) + " positional arguments were given (signature " +
                              s.signature_text() + ")",
                          {{"position", k}, {"given", in.args.size()}});
  }
  const bool left_out = in.args[k].is_none();
  in.args[k] = v;
  return left_out;
}

// A4: by name, added to a call that does not give it by keyword; one that gives it by position has it replaced there
// (the references add the placeholder as a keyword argument, which then stands for the argument); by position,
// replaced unconditionally (the references' rule). `filled`: every argument given its placeholder (their sizes are
// not the call's); `unobserved`: those the call left out. A tensor the call gave and the placeholder replaced was
// observed all the same: C2 counts only the calls that gave nothing.
void apply_if_missing(const recorded_state& s, call_inputs& in, std::vector<input_key>& filled,
                      std::vector<input_key>& unobserved) {
  for (const auto& [key, v] : s.if_missing) {
    if (key.is_position()) {
      const bool left_out = apply_missing_position(s, in, key.position(), v);
      filled.push_back(key);
      if (left_out) unobserved.push_back(key);
      continue;
    }
    const std::string& name = key.name();
    if (std::any_of(in.kwargs.begin(), in.kwargs.end(), [&](const auto& f) { return f.first == name; })) continue;
    if (const auto i = position_given(s, in, name)) {
      if (in.args[*i].is_none()) unobserved.emplace_back(*i);
      in.args[*i] = v;
      filled.emplace_back(*i);
      continue;
    }
    if (!s.signature_index(name) && !s.variadic(parameter_kind::var_keyword)) {
      throw inference_error("unexpected keyword argument '" + name +
                            "' provided as a value_if_missing input for a function that does not accept it; every "
                            "value_if_missing key must be in the observed signature " +
                            s.signature_text());
    }
    in.kwargs.emplace_back(name, v);
    filled.push_back(key);
    unobserved.push_back(key);
  }
}

// The arguments the call left out and value_if_missing gave, counted: one given nothing else was never observed (C2).
void count_if_missing(recorded_state& s, const std::vector<input_key>& filled) {
  for (const input_key& key : filled) {
    ++s.keys[key.is_position() ? position_key(s, key.position()) : intern_name(s, key.name())].if_missing;
  }
}

// A5: keyword arguments in signature order, the others (absorbed by **kwargs) after them in call order.
void order_kwargs(const recorded_state& s, call_inputs& in) {
  bool sorted = true;
  std::size_t previous = 0;
  for (const auto& [name, v] : in.kwargs) {
    const std::size_t k = s.signature_index(name).value_or(s.sig.size());
    sorted = sorted && k >= previous;
    previous = k;
  }
  if (!sorted) s.sort_by_signature(in.kwargs);
}

// A5: the keywords' keys (created on first use), in the order of the (ordered) keyword arguments.
void key_kwargs(recorded_state& s, const call_inputs& in) {
  s.kwarg_keys.clear();
  for (const auto& [name, v] : in.kwargs) s.kwarg_keys.push_back(intern_name(s, name));
}

// A6: an argument given twice in one call is an error (rather than two summaries of one argument).
void check_names(recorded_state& s, const call_inputs& in) {
  const std::size_t stamp = s.n_calls + 1;
  for (std::size_t i = 0; i < in.args.size(); ++i) s.keys[position_key(s, i)].stamp = stamp;
  for (std::size_t j = 0; j < in.kwargs.size(); ++j) {
    key_summary& k = s.keys[s.kwarg_keys[j]];
    if (k.stamp == stamp) {
      throw inference_error("argument '" + k.name +
                            "' is given twice in one call (by position and by name, or twice by name)");
    }
    k.stamp = stamp;
  }
}

// A6: every argument's summary, and the distinct constant sets (for B2).
void summarise(recorded_state& s, const call_inputs& in, const value_fields& constants) {
  const std::size_t call = s.n_calls;
  for (std::size_t i = 0; i < in.args.size(); ++i) s.keys[position_key(s, i)].observe(in.args[i], call);
  for (std::size_t j = 0; j < in.kwargs.size(); ++j) {
    key_summary& k = s.keys[s.kwarg_keys[j]];
    if (!k.first_kwarg_call) k.first_kwarg_call = call;
    k.observe(in.kwargs[j].second, call);
  }
  for (const auto& c : constants) ++s.keys[intern_name(s, c.first)].constant_present;
  for (const constant_set& set : s.constant_sets) {
    if (constants_equal(set.values, constants)) return;
  }
  if (s.constant_sets.size() < max_constant_sets) s.constant_sets.push_back({constants, call});
  // Beyond the bound, two distinct sets are already known: the error is reported from those (earlier) calls.
}

// call_hash's walk: each step mixes a constant, or a tensor's size read where the call holds it. call_hash runs it at
// once; a call structure keeps it as a program (hash_program), which reads the sizes written into its prepared call.
template <class Step>
void hash_leaves(const value& v, Step& step) {
  for_each_leaf(v, [&](const value& leaf) {
    step(static_cast<std::uint64_t>(leaf.type()) + 0x9e3779b97f4a7c15ULL, nullptr);
    if (!leaf.is_tensor()) return;
    for (const std::int64_t& d : leaf.as_tensor().shape) step(0, &d);
    step(static_cast<std::uint64_t>(leaf.as_tensor().dtype), nullptr);
  });
}

template <class Step>
void hash_walk(const call_inputs& in, Step&& step) {
  for (const value& a : in.args) hash_leaves(a, step);
  for (const auto& [name, v] : in.kwargs) {
    step(fnv1a(name), nullptr);
    hash_leaves(v, step);
  }
}

void index_combo(recorded_state& s, std::size_t i) {
  const std::pair entry{s.combos[i].hash, i};
  s.combo_index.insert(std::lower_bound(s.combo_index.begin(), s.combo_index.end(), entry), entry);
}

// Beyond max_combinations the combinations of smallest (hash, first call) stay: the largest goes, or the new one.
// A combination's first call only grows with the calls, so the kept ones are those a merge of shards keeps too.
void evict_largest_combo(recorded_state& s) {
  const std::size_t gone = s.combo_index.back().second;  // the index is sorted by (hash, combination), and
  s.combo_index.pop_back();                              // combinations are in first-call order
  s.combos.erase(s.combos.begin() + static_cast<std::ptrdiff_t>(gone));
  for (auto& entry : s.combo_index) {
    if (entry.second > gone) --entry.second;
  }
}

// A7 (first call with the strictly largest leaf count) and D1 (first call with the best's argument counts). `owned`:
// the call's own inputs and constants, moved into the kept call rather than copied.
void keep(recorded_state& s, const prepared_call& c, prepared_call* owned) {
  const bool new_best = !s.best || c.leaf_count > s.best->leaf_count;
  const count_pair counts{c.inputs.args.size(), c.inputs.kwargs.size()};
  const bool new_counts =
      s.first_by_counts.size() < max_count_pairs && std::none_of(s.first_by_counts.begin(), s.first_by_counts.end(),
                                                                 [&](const auto& e) { return e.first == counts; });
  if (!new_best && !new_counts && !s.options.keep_calls) return;
  auto call = owned ? std::make_shared<stored_call>(
                          stored_call{s.n_calls, std::move(owned->inputs), std::move(owned->constants), c.leaf_count})
                    : std::make_shared<stored_call>(stored_call{s.n_calls, c.inputs, c.constants, c.leaf_count});
  if (new_best) s.best = call;
  if (new_counts) s.first_by_counts.emplace_back(counts, call);
  if (s.options.keep_calls) s.calls.push_back(std::move(call));
}

}  // namespace

std::optional<std::size_t> find_combo(const recorded_state& s, std::uint64_t h, const call_inputs& in,
                                      const value_fields& constants, std::uint64_t structure,
                                      std::span<const std::int64_t> sizes) {
  auto it = std::lower_bound(s.combo_index.begin(), s.combo_index.end(), std::pair{h, std::size_t{0}});
  for (; it != s.combo_index.end() && it->first == h; ++it) {
    if (const combination& c = s.combos[it->second]; structure != 0 && c.structure == structure) {
      if (std::equal(sizes.begin(), sizes.end(), c.sizes.begin(), c.sizes.end())) return it->second;
      continue;
    }
    const stored_call& c = *s.combos[it->second].call;
    if (c.inputs == in && constants_equal(c.constants, constants)) return it->second;
  }
  return std::nullopt;
}

void add_combo(recorded_state& s, combination c) {
  if (s.combos.size() == max_combinations) {
    s.combos_truncated = true;
    const combination& largest = s.combos[s.combo_index.back().second];
    if (std::pair{c.hash, c.call->index} > std::pair{largest.hash, largest.call->index}) return;
    evict_largest_combo(s);
  }
  s.combos.push_back(std::move(c));
  index_combo(s, s.combos.size() - 1);
}

// Deterministic across builds and machines: summaries written on one are merged on another (merge.cpp).
std::uint64_t call_hash(const call_inputs& in) {
  std::uint64_t h = in.args.size();
  hash_walk(in, [&](std::uint64_t constant, const std::int64_t* size) {
    h = mix(h + (size ? static_cast<std::uint64_t>(*size) : constant));
  });
  return h;
}

call_hash_program hash_program(const call_inputs& in) {
  call_hash_program p{in.args.size(), {}};
  hash_walk(in, [&](std::uint64_t constant, const std::int64_t* size) { p.steps.push_back({constant, size}); });
  return p;
}

void rebuild_combos(recorded_state& s) {
  std::vector<combination> old = std::move(s.combos);
  s.combos.clear();
  s.combo_index.clear();
  for (combination& c : old) {
    c.hash = call_hash(c.call->inputs);
    c.structure = 0;  // its call changed: compared whole from now on
    c.sizes.clear();
    if (const auto i = find_combo(s, c.hash, c.call->inputs, c.call->constants)) {
      s.combos[*i].count += c.count;
      continue;
    }
    add_combo(s, std::move(c));
  }
}

void prepare_call(const recorded_state& s, prepared_call& c) {
  c.constants = split_kwargs(s, c.inputs);
  c.filled.clear();
  c.unobserved.clear();
  apply_if_missing(s, c.inputs, c.filled, c.unobserved);
  order_kwargs(s, c.inputs);
  c.leaf_count = call_leaf_count(c.inputs);
}

void key_call(recorded_state& s, const prepared_call& c) {
  key_kwargs(s, c.inputs);
  check_names(s, c.inputs);
  count_if_missing(s, c.unobserved);
}

call_keys keys_of(const recorded_state& s, const prepared_call& c) {
  call_keys out{s.kwarg_keys, {}};
  for (const input_key& key : c.unobserved) {
    out.unobserved.push_back(*(key.is_position() ? s.find_position(key.position()) : s.find_name(key.name())));
  }
  return out;
}

void key_call(recorded_state& s, const prepared_call& c, const call_keys& keys) {
  s.kwarg_keys.assign(keys.kwargs.begin(), keys.kwargs.end());  // within its capacity after the first call
  check_names(s, c.inputs);
  for (const std::size_t k : keys.unobserved) ++s.keys[k].if_missing;
}

namespace {

// A hash of a structure's call's sizes for its table of distinct calls: each size mixed on its own (independent steps,
// not call_hash's chain), the mixes summed; an entry is checked on use.
std::uint64_t sizes_key(std::span<const std::int64_t> sizes) noexcept {
  std::uint64_t key = sizes.size();
  for (std::size_t i = 0; i < sizes.size(); ++i) {
    key += mix(static_cast<std::uint64_t>(sizes[i]) + i * 0x9e3779b97f4a7c15ULL);
  }
  return mix(key);
}

// The combination `c` is, through its structure's table, when the entry still names it.
std::optional<std::size_t> known_combo(const recorded_state& s, const prepared_call& c, std::uint64_t key) {
  const auto it = c.known_combos->find(key);
  if (it == c.known_combos->end() || it->second >= s.combos.size()) return std::nullopt;
  const combination& known = s.combos[it->second];
  if (known.structure != c.structure ||
      !std::equal(c.sizes.begin(), c.sizes.end(), known.sizes.begin(), known.sizes.end())) {
    return std::nullopt;
  }
  return it->second;
}

}  // namespace

void observe_call(recorded_state& s, const prepared_call& c, prepared_call* owned) {
  summarise(s, c.inputs, c.constants);
  const std::uint64_t key = c.known_combos ? sizes_key(c.sizes) : 0;
  std::optional<std::size_t> combo = c.known_combos ? known_combo(s, c, key) : std::nullopt;
  if (!combo) {
    const std::uint64_t h = c.hash_program ? c.hash_program->run() : call_hash(c.inputs);
    combo = find_combo(s, h, c.inputs, c.constants, c.structure, c.sizes);
    if (!combo) {
      // A call equal to a combination kept changes no pair of dims: only the others are observed (C3).
      observe_pairs(s, c.inputs);
      add_combo(s, {std::make_shared<stored_call>(stored_call{s.n_calls, c.inputs, c.constants, c.leaf_count}), 0, h,
                    c.structure, std::vector<std::int64_t>(c.sizes.begin(), c.sizes.end())});
      if (!s.combos.empty() && s.combos.back().call->index == s.n_calls) combo = s.combos.size() - 1;
    }
    if (combo && c.known_combos) {
      if (c.known_combos->size() >= 2 * max_combinations) c.known_combos->clear();  // stale entries go
      (*c.known_combos)[key] = *combo;
    }
  }
  if (combo) ++s.combos[*combo].count;
  keep(s, c, owned);
  ++s.n_calls;
}

bool at_limit(recorded_state& s) {
  if (s.n_calls < s.limit) return false;
  ++s.n_ignored;  // A1
  return true;
}

bool add_call(recorded_state& s, call_inputs&& in) {
  if (at_limit(s)) return false;
  prepared_call c{std::move(in)};
  prepare_call(s, c);
  key_call(s, c);
  observe_call(s, c, &c);
  return true;
}

}  // namespace detail::shapes
HOOKSCOPE_DETAIL_END_NAMESPACE
