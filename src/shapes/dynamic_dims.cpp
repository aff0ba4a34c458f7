// Dynamic dimensions (rules C1-C3, C5, docs/input_observer_rules.md): one rank per leaf, the dims that varied or are
// forced, their shared names and labels (well-known names from dynamic_shapes_options::known_dim_names first), and
// the warnings. The structure they are returned in (C4) is torch_structure.cpp's.
#include "engine_state.hpp"

#include <algorithm>
#include <map>
#include <set>
#include <unordered_map>
#include <unordered_set>

HOOKSCOPE_DETAIL_BEGIN_NAMESPACE
namespace detail::shapes {

// C1.
void check_rank(const flat_leaf& f) {
  const leaf_summary* l = f.summary;
  if (!l || !l->rank_conflict_call) return;
  std::string seen;
  for (const shape_t& shape : l->shapes_seen) seen += (seen.empty() ? "" : ", ") + shape_text(shape);
  // Facts: argument (the tensor's path), call, rank (the rank before that call).
  throw inference_error(inference_error_kind::rank_differs,
                        "all the shapes of '" + join_path(f.path) + "' must have the same rank, but call " +
                            std::to_string(*l->rank_conflict_call) + " gave " + shape_text(l->rank_conflict_shape) +
                            " after rank " + std::to_string(l->rank) + "; shapes seen: " + seen +
                            (l->shapes_truncated ? ", ..." : ""),
                        {{"argument", join_path(f.path)}, {"call", *l->rank_conflict_call}, {"rank", l->rank}});
}

// C2 (and dim_labels): a name matches the parameter or keyword (the *args name every extra position), a position
// the positional argument or the named parameter at that place.
bool matches(const input_key& k, const slot& s) {
  if (k.is_position()) return (s.positional && s.position == k.position()) || s.signature_index == k.position();
  return k.name() == s.name || (!s.path.empty() && k.name() == s.path.front());
}

namespace {

// C1: every dim that varied is dynamic, and dim 0 when forced (C2); min/opt/max per dim.
tensor_input describe(const flat_leaf& f, const leaf_summary& l, bool forced) {
  tensor_input t;
  t.name = join_path(f.path);
  t.path = f.path;
  t.dtype = l.dtype;
  t.rank = l.rank;
  t.shapes_seen = l.shapes_seen;
  t.shapes_seen_truncated = l.shapes_truncated;
  t.dtypes_seen = l.dtypes;
  for (std::size_t d = 0; d < l.rank; ++d) {
    const dim_summary& s = l.dims[d];
    t.min_shape.push_back(s.min);
    t.opt_shape.push_back(s.opt());
    t.max_shape.push_back(s.max);
    if (!s.varies && !(d == 0 && forced)) continue;
    dynamic_dim dd;
    dd.dim = d;
    dd.label = unnamed_dim_label;
    dd.min = s.min;
    dd.max = s.max;
    dd.opt = s.opt();
    dd.forced = !s.varies;
    t.dynamic_dims.push_back(std::move(dd));
  }
  return t;
}

const std::string* known_label(const std::vector<known_dim_name>& known, std::string_view input, std::size_t dim) {
  for (const known_dim_name& k : known) {
    if (k.input == input && k.dim == dim) return &k.label;
  }
  return nullptr;
}

// Labels are identifiers (is_dim_label: what torch.export.Dim accepts): every byte of a name that cannot be in
// one becomes '_', and a name that is empty or starts with a digit gets a leading '_'.
std::string identifier(std::string_view name) {
  std::string out;
  if (name.empty() || (name[0] >= '0' && name[0] <= '9')) out.push_back('_');
  for (const char c : name) {
    const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
    out.push_back(ok ? c : '_');
  }
  return out;
}

// The identifier each argument's labels start from: its name when that is one, else the name made one, with a
// suffix when another argument's already is that (`pixel-values` beside `pixel_values` is `pixel_values_2`).
class label_bases {
 public:
  explicit label_bases(const std::vector<slot>& slots) {
    for (const slot& s : slots) {
      if (is_dim_label(s.label_name)) add(s.label_name, s.label_name);
    }
    for (const slot& s : slots) {
      if (is_dim_label(s.label_name) || bases_.count(s.label_name)) continue;
      const std::string base = identifier(s.label_name);
      std::string b = base;
      for (std::size_t n = 2; taken_.count(b); ++n) b = base + "_" + std::to_string(n);
      add(s.label_name, b);
    }
  }
  /// "<base>_dim_<d>": distinct for distinct arguments (the part after the last "_dim_" is digits only).
  std::string label(const std::string& label_name, std::size_t dim) const {
    const auto it = bases_.find(label_name);
    return (it != bases_.end() ? it->second : identifier(label_name)) + "_dim_" + std::to_string(dim);
  }

 private:
  void add(const std::string& name, const std::string& base) {
    bases_.emplace(name, base);
    taken_.insert(base);
  }
  std::unordered_map<std::string, std::string> bases_;  // label_name -> base
  std::unordered_set<std::string> taken_;
};

std::string label_for(const slot& s, const dynamic_dim& dd, const dynamic_shapes_options& o, const label_bases& bases) {
  if (!o.dim_labels.empty()) {
    // The entries for this argument: by position first, by name otherwise (the reference's dict lookup).
    bool by_position = false;
    for (const dim_label& l : o.dim_labels) {
      by_position = by_position || (l.input.is_position() && matches(l.input, s));
    }
    for (const dim_label& l : o.dim_labels) {
      if (l.input.is_position() != by_position || !matches(l.input, s)) continue;
      if (l.dim == dd.dim) return l.label;
    }
    if (!o.dim_names) return bases.label(s.label_name, dd.dim);
  }
  return o.dim_names ? dd.shared_name : std::string(unnamed_dim_label);
}

// C3. shared_name: the automatic algorithm, always; label: explicit, automatic or "DYNAMIC" per the options. Dims
// share a name only when every two of them were given together by some call and equal in every call giving both
// (absent is not different): the names form groups of such dims, the well-known ones seeded first. Two dims decide
// it by their pair state (recorded_state::pairs) when both are tracked, else only when both are given in every call
// and have the same sizes in call order (their sequence hashes); any other dim beyond max_label_dims shares
// nothing. A well-known name goes to a dim only when it fits its group; a dim it does not fit gets a name of its
// own, and a note says why. Explicit labels shared by dims that differ in some call are kept (the user asked for
// them) with a warning.
void name_dims(std::vector<tensor_input>& inputs, const std::vector<flat_leaf>& flat,
               const std::vector<std::size_t>& tensor_of, const std::vector<slot>& slots, const recorded_state& state,
               const dynamic_shapes_options& o, std::vector<inference_warning>& notes) {
  const dim_pairs& pairs = state.pairs;
  const label_bases bases(slots);
  using sequence_t = std::pair<std::uint64_t, std::uint64_t>;  // (hash of the sizes in call order, their count)
  struct dim_ref {
    std::uint32_t slot = untracked_dim;
    bool everywhere = false;  // given in every call
    sequence_t sequence;
  };
  struct group {
    std::string name;
    std::string holder;                  // its first dim: "dimension 0 of 'input_ids'"
    std::vector<std::uint32_t> members;  // its tracked dims
    bool untracked = false;              // it has an untracked dim
    bool everywhere = true;              // every dim of it is given in every call, with `sequence`
    sequence_t sequence;
  };
  std::vector<group> groups;
  std::set<std::string> taken;                   // the groups' names
  std::map<std::string, std::size_t> suffixes;   // base -> the next suffix to try (from 2)
  std::vector<std::size_t> tracked;              // the groups with tracked dims only
  std::map<sequence_t, std::size_t> everywhere;  // sequence -> the first group of dims given in every call with it
  const auto ref = [&](std::size_t f, std::size_t d) {
    const leaf_summary& l = *flat[f].summary;
    return dim_ref{l.dims[d].pair_slot, l.observed == state.n_calls, {l.dims[d].sequence.value, l.observed}};
  };
  const auto where = [&](std::size_t f, std::size_t d) {
    return "dimension " + std::to_string(d) + " of '" + inputs[tensor_of[f]].name + "'";
  };
  // Given with some member and different from none: then every call gives its members equal sizes, whichever of
  // them it gives (a cache absent at the prefill joins input_ids' batch though never given with an image that only
  // the prefill has).
  const auto fits = [&](const group& g, const dim_ref& r) {
    if (g.everywhere && r.everywhere && g.sequence == r.sequence) return true;
    return r.slot != untracked_dim && !g.untracked && !g.members.empty() &&
           std::none_of(g.members.begin(), g.members.end(),
                        [&](std::uint32_t m) { return pairs.ever_differ(m, r.slot); }) &&
           std::any_of(g.members.begin(), g.members.end(),
                       [&](std::uint32_t m) { return pairs.equal_where_both(m, r.slot); });
  };
  const auto named = [&](std::string_view name) {
    if (!taken.count(std::string(name))) return groups.end();
    return std::find_if(groups.begin(), groups.end(), [&](const group& g) { return g.name == name; });
  };
  const auto join = [&](std::size_t gi, const dim_ref& r) {
    group& g = groups[gi];
    const bool was_everywhere = g.everywhere;
    g.everywhere = g.everywhere && r.everywhere && g.sequence == r.sequence;
    if (was_everywhere && !g.everywhere) {
      const auto e = everywhere.find(g.sequence);
      if (e != everywhere.end() && e->second == gi) everywhere.erase(e);
    }
    if (r.slot == untracked_dim) {
      if (!g.untracked) std::erase(tracked, gi);
      g.untracked = true;
      return;
    }
    if (g.members.empty() && !g.untracked) tracked.push_back(gi);
    g.members.push_back(r.slot);
  };
  const auto start = [&](std::string name, std::string holder, const dim_ref& r) {
    taken.insert(name);
    groups.push_back({std::move(name), std::move(holder), {}, false, r.everywhere, r.sequence});
    if (r.everywhere) everywhere.try_emplace(r.sequence, groups.size() - 1);
    join(groups.size() - 1, r);
  };
  std::vector<std::pair<std::size_t, std::size_t>> conflicting;  // (flat leaf, dim): not given their known name
  const auto is_conflicting = [&](std::size_t f, std::size_t d) {
    return std::find(conflicting.begin(), conflicting.end(), std::pair{f, d}) != conflicting.end();
  };
  for (int pass = 0; pass < 2; ++pass) {  // well-known names are seeded first
    for (std::size_t f = 0; f < flat.size(); ++f) {
      if (tensor_of[f] == no_tensor) continue;
      const slot& s = slots[flat[f].slot];
      for (dynamic_dim& dd : inputs[tensor_of[f]].dynamic_dims) {
        const std::string* known = known_label(o.known_dim_names, s.label_name, dd.dim);
        if (known && is_conflicting(f, dd.dim)) known = nullptr;
        if ((known != nullptr) != (pass == 0)) continue;
        const dim_ref r = ref(f, dd.dim);
        if (known) {
          const std::string name = is_dim_label(*known) ? *known : identifier(*known);
          const auto g = named(name);
          if (g == groups.end()) {
            start(name, where(f, dd.dim), r);
            dd.shared_name = name;
          } else if (fits(*g, r)) {
            join(static_cast<std::size_t>(g - groups.begin()), r);
            dd.shared_name = name;
          } else {
            conflicting.emplace_back(f, dd.dim);
            if (o.dim_names) {
              const bool differ =
                  r.slot != untracked_dim && std::any_of(g->members.begin(), g->members.end(),
                                                         [&](std::uint32_t m) { return pairs.ever_differ(m, r.slot); });
              notes.push_back(inference_warning{
                  .type = inference_warning::kind::well_known_name_not_taken,
                  .input = inputs[tensor_of[f]].name,
                  .dim = dd.dim,
                  .sentence = where(f, dd.dim) + " is not named " + name + " (its well-known name): " +
                              (differ ? "its values differ from those of " + g->holder + ", which has that name"
                                      : "no call gives it together with " + g->holder +
                                            ", which has that name, or it is not tracked") +
                              "; it gets a name of its own"});
            }
          }
          continue;
        }
        // The first group it fits: among those of dims given in every call with its sizes, and those of tracked
        // dims (at most max_label_dims).
        std::size_t found = groups.size();
        if (r.everywhere) {
          const auto e = everywhere.find(r.sequence);
          if (e != everywhere.end()) found = e->second;
        }
        if (r.slot != untracked_dim) {
          const auto g =
              std::find_if(tracked.begin(), tracked.end(), [&](std::size_t x) { return fits(groups[x], r); });
          if (g != tracked.end()) found = std::min(found, *g);
        }
        if (found != groups.size()) {
          join(found, r);
          dd.shared_name = groups[found].name;
          continue;
        }
        const std::string base = bases.label(s.label_name, dd.dim);
        std::string name = base;
        for (std::size_t& n = suffixes.try_emplace(base, 2).first->second; taken.count(name); ++n) {
          name = base + "_" + std::to_string(n);
        }
        start(name, where(f, dd.dim), r);
        dd.shared_name = name;
      }
    }
  }
  struct use {
    std::string label;
    std::vector<std::uint32_t> members;
    std::string holder;
  };
  std::vector<use> uses;  // explicit labels: the dims given each
  std::unordered_map<std::string, std::size_t> use_of;
  for (std::size_t f = 0; f < flat.size(); ++f) {
    if (tensor_of[f] == no_tensor) continue;
    const slot& s = slots[flat[f].slot];
    for (dynamic_dim& dd : inputs[tensor_of[f]].dynamic_dims) {
      dd.label = label_for(s, dd, o, bases);
      if (o.dim_labels.empty() || dd.label == dd.shared_name) continue;
      const std::uint32_t slot = ref(f, dd.dim).slot;
      const auto [at, fresh] = use_of.try_emplace(dd.label, uses.size());
      if (fresh) uses.push_back({dd.label, {}, where(f, dd.dim)});
      const auto u = uses.begin() + static_cast<std::ptrdiff_t>(at->second);
      if (!fresh && slot != untracked_dim && std::any_of(u->members.begin(), u->members.end(), [&](std::uint32_t m) {
            return pairs.ever_differ(m, slot);
          })) {
        notes.push_back(inference_warning{
            .type = inference_warning::kind::label_joins_differing_dims,
            .input = inputs[tensor_of[f]].name,
            .dim = dd.dim,
            .sentence = "the label " + dd.label + " is given to " + u->holder + " and to " + where(f, dd.dim) +
                        ", whose observed values differ: torch.export and TensorRT will take "
                        "them as equal"});
      }
      if (slot != untracked_dim) u->members.push_back(slot);
    }
  }
  std::size_t untracked = 0;
  for (std::size_t f = 0; f < flat.size(); ++f) {
    if (tensor_of[f] == no_tensor) continue;
    for (const dynamic_dim& dd : inputs[tensor_of[f]].dynamic_dims) {
      const dim_ref r = ref(f, dd.dim);
      untracked += r.slot == untracked_dim && !r.everywhere;
    }
  }
  if (untracked > 0) {
    notes.push_back(inference_warning{
        .type = inference_warning::kind::dims_untracked,
        .sentence = std::to_string(untracked) +
                    " dynamic dims given in only some calls share no name: which dims are equal where both are given "
                    "is tracked for the " +
                    std::to_string(max_label_dims) +
                    " first dims only (by leaf, argument and dim), or the summary read did not say"});
  }
}

// C5.
std::vector<inference_warning> warnings(const std::vector<tensor_input>& inputs, const std::vector<flat_leaf>& flat,
                                        const std::vector<std::size_t>& tensor_of) {
  std::vector<inference_warning> out;
  for (std::size_t f = 0; f < flat.size(); ++f) {
    if (tensor_of[f] == no_tensor) continue;
    const tensor_input& t = inputs[tensor_of[f]];
    const leaf_summary& l = *flat[f].summary;
    for (const dynamic_dim& dd : t.dynamic_dims) {
      if (dd.only_zero_or_one()) {
        const std::string seen = dd.min == dd.max ? std::to_string(dd.min) : "0 and 1";
        out.push_back(inference_warning{
            .type = inference_warning::kind::dim_seen_below_two,
            .input = t.name,
            .dim = dd.dim,
            .sentence = "dimension " + std::to_string(dd.dim) + " of '" + t.name + "' (" + dd.label +
                        ") is dynamic but was only seen as " + seen +
                        ": torch.export specialises sizes 0 and 1, so record a call where it is at least 2"});
      }
      if (l.dims[dd.dim].counts_truncated) {
        out.push_back(inference_warning{.type = inference_warning::kind::distinct_values_truncated,
                                        .input = t.name,
                                        .dim = dd.dim,
                                        .sentence = "dimension " + std::to_string(dd.dim) + " of '" + t.name +
                                                    "' took more than " + std::to_string(max_distinct_values) +
                                                    " distinct values: its opt counts the " +
                                                    std::to_string(max_distinct_values) + " smallest only"});
      }
    }
    if (t.shapes_seen_truncated) {
      out.push_back(inference_warning{.type = inference_warning::kind::shapes_seen_truncated,
                                      .input = t.name,
                                      .sentence = "'" + t.name + "' took more than " + std::to_string(max_shapes_seen) +
                                                  " distinct shapes: shapes_seen lists the " +
                                                  std::to_string(max_shapes_seen) + " smallest only"});
    }
  }
  return out;
}

}  // namespace

shapes_result infer_dynamic_shapes(const recorded_state& s, const dynamic_shapes_options& o) {
  require_calls(s, "infer_dynamic_shapes");
  const std::vector<slot> slots = best_slots(s);
  check_alignment(s, slots);
  const std::vector<flat_leaf> flat = flatten_slots(s, slots);
  for (const flat_leaf& f : flat) check_rank(f);  // C1

  std::vector<input_key> batch;
  for (const std::string& b : o.batch_dimension_for) batch.push_back(input_key::parse(b));
  const auto named = [&](const slot& sl) {
    return std::any_of(batch.begin(), batch.end(), [&](const input_key& k) { return matches(k, sl); });
  };
  // C2: an argument only ever given value_if_missing's placeholder was never observed, so it gets no batch dim.
  const auto forced = [&](const slot& sl) {
    return (o.batch_dimension_for_all || named(sl)) && !s.keys[sl.key].only_if_missing();
  };

  shapes_result r;
  std::vector<std::size_t> tensor_of(flat.size(), no_tensor);
  std::vector<bool> slot_has_tensor(slots.size(), false);
  for (std::size_t f = 0; f < flat.size(); ++f) {
    const leaf_summary* l = flat[f].summary;
    if (!l || l->observed == 0) continue;
    tensor_of[f] = r.inputs.size();
    slot_has_tensor[flat[f].slot] = true;
    r.inputs.push_back(describe(flat[f], *l, forced(slots[flat[f].slot])));
  }
  std::vector<inference_warning> notes;
  for (std::size_t i = 0; i < slots.size(); ++i) {
    if (!named(slots[i])) continue;
    const bool placeholder = s.keys[slots[i].key].only_if_missing();
    if (!placeholder && slot_has_tensor[i]) continue;
    notes.push_back(inference_warning{
        .type = inference_warning::kind::batch_dimension_unobserved,
        .input = slots[i].name,
        .sentence =
            "a batch dimension is asked for '" + slots[i].name + "', which " +
            (placeholder ? "every call gave only as its value_if_missing placeholder" : "no call gave as a tensor") +
            ": it gets no dynamic batch dimension"});
  }
  name_dims(r.inputs, flat, tensor_of, slots, s, o, notes);
  r.warnings = warnings(r.inputs, flat, tensor_of);
  r.warnings.insert(r.warnings.end(), notes.begin(), notes.end());
  stored_rows stored;
  const std::vector<joint_row> rows = joint_rows(s, slots, flat, tensor_of, r.inputs, stored);
  std::vector<std::vector<std::uint32_t>> pair_slot(r.inputs.size());  // per input and dim: its C3 pair slot
  for (std::size_t f = 0; f < flat.size(); ++f) {
    if (tensor_of[f] == no_tensor) continue;
    for (const dim_summary& d : flat[f].summary->dims) pair_slot[tensor_of[f]].push_back(d.pair_slot);
  }
  const auto differ = [&](const dim_var& a, const dim_var& b) {
    const std::uint32_t i = pair_slot[a.input].at(a.dim), j = pair_slot[b.input].at(b.dim);
    return i != untracked_dim && j != untracked_dim && s.pairs.ever_differ(i, j);
  };
  r.relations = find_relations(r.inputs, rows, differ, r.warnings);
  r.profiles = make_profiles(r.inputs, rows, stored, r.relations, o.profile_phases, !s.combos_truncated, r.warnings);
  if (s.combos_truncated) {
    r.warnings.push_back(inference_warning{
        .type = inference_warning::kind::combinations_truncated,
        .sentence = "the calls took more than " + std::to_string(max_combinations) +
                    " distinct combinations of shapes: relations are found and checked on " +
                    std::to_string(max_combinations) +
                    " of them (those of smallest hash: the same whatever the calls' order or split); the "
                    "profiles' min and max still cover every call"});
  }
  for (const tensor_input& t : r.inputs) {
    if (t.dtypes_seen.size() < 2) continue;
    std::string list;
    for (const hookscope::dtype d : t.dtypes_seen) list += (list.empty() ? "" : ", ") + std::string(to_string(d));
    r.warnings.push_back(inference_warning{.type = inference_warning::kind::dtype_changed,
                                           .input = t.name,
                                           .sentence = "'" + t.name + "' changed dtype between calls (" + list +
                                                       "): an exported model takes one dtype per input"});
  }
  r.sequences.resize(r.inputs.size());
  for (std::size_t f = 0; f < flat.size(); ++f) {
    if (tensor_of[f] == no_tensor) continue;
    const leaf_summary& l = *flat[f].summary;
    for (const dynamic_dim& dd : r.inputs[tensor_of[f]].dynamic_dims) {
      r.sequences[tensor_of[f]].emplace_back(l.dims[dd.dim].sequence.value, l.observed);
    }
  }
  r.root = build_root(s, slots, tensor_of);
  return r;
}

}  // namespace detail::shapes
HOOKSCOPE_DETAIL_END_NAMESPACE
