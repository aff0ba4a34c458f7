// Dynamic dimensions (rules C1-C3, C5, docs/input_observer_rules.md): one rank per leaf, the dims that varied or are
// forced, their shared names and labels (well-known names from dynamic_shapes_options::known_dim_names first), and
// the warnings. The structure they are returned in (C4) is torch_structure.cpp's.
#include "engine_state.hpp"

#include <algorithm>

HOOKSCOPE_DETAIL_BEGIN_NAMESPACE
namespace detail::shapes {

// C1.
void check_rank(const flat_leaf& f) {
  const leaf_summary* l = f.summary;
  if (!l || !l->rank_conflict_call) return;
  std::string seen;
  for (const shape_t& shape : l->shapes_seen) seen += (seen.empty() ? "" : ", ") + shape_text(shape);
  throw inference_error("hookscope: all the shapes of '" + join_path(f.path) + "' must have the same rank, but call " +
                        std::to_string(*l->rank_conflict_call) + " gave " + shape_text(l->rank_conflict_shape) +
                        " after rank " + std::to_string(l->rank) + "; shapes seen: " + seen +
                        (l->shapes_truncated ? ", ..." : ""));
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
    dd.label = "DYNAMIC";
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

std::string label_for(const slot& s, const dynamic_dim& dd, const dynamic_shapes_options& o) {
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
    if (!o.dim_names) return s.label_name + "_dim_" + std::to_string(dd.dim);
  }
  return o.dim_names ? dd.shared_name : "DYNAMIC";
}

// C3. shared_name: the automatic algorithm, always; label: explicit, automatic or "DYNAMIC" per the options. A
// well-known name goes only to dims equal (same values in every call) to the first dim that took it: any other dim
// the table names so gets a name of its own, and a note says why. Explicit labels shared by dims that differ are
// kept (the user asked for them) with a warning.
void name_dims(std::vector<tensor_input>& inputs, const std::vector<flat_leaf>& flat,
               const std::vector<std::size_t>& tensor_of, const std::vector<slot>& slots,
               const dynamic_shapes_options& o, std::vector<std::string>& notes) {
  using sequence_t = std::pair<std::uint64_t, std::uint64_t>;
  std::vector<std::pair<sequence_t, std::string>> names;  // sequence -> name
  struct claim {
    std::string label;
    sequence_t seq;
    std::string holder;  // "dimension 0 of 'input_ids'"
  };
  std::vector<claim> claims;  // well-known name -> the values of the first dim that took it
  const auto sequence = [&](std::size_t f, std::size_t d) {
    const leaf_summary& l = *flat[f].summary;
    return sequence_t{l.dims[d].sequence.value, l.observed};
  };
  const auto lookup = [&](sequence_t seq) -> const std::string* {
    for (const auto& [sq, n] : names) {
      if (sq == seq) return &n;
    }
    return nullptr;
  };
  const auto where = [&](std::size_t f, std::size_t d) {
    return "dimension " + std::to_string(d) + " of '" + inputs[tensor_of[f]].name + "'";
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
        const auto seq = sequence(f, dd.dim);
        if (known) {
          const auto c = std::find_if(claims.begin(), claims.end(), [&](const claim& x) { return x.label == *known; });
          if (c != claims.end() && c->seq != seq) {
            conflicting.emplace_back(f, dd.dim);
            if (o.dim_names) {
              notes.push_back("hookscope: " + where(f, dd.dim) + " is not named " + *known +
                              " (its well-known name): its values differ from those of " + c->holder +
                              ", which has that name; it gets a name of its own");
            }
            continue;
          }
          if (c == claims.end()) claims.push_back({*known, seq, where(f, dd.dim)});
        }
        const std::string* shared = lookup(seq);
        if (known) {
          dd.shared_name = *known;
        } else {
          dd.shared_name = shared ? *shared : s.label_name + "_dim_" + std::to_string(dd.dim);
        }
        if (!shared) names.emplace_back(seq, dd.shared_name);
      }
    }
  }
  struct use {
    std::string label;
    sequence_t seq;
    std::string holder;
  };
  std::vector<use> uses;  // explicit labels: the first dim given each
  for (std::size_t f = 0; f < flat.size(); ++f) {
    if (tensor_of[f] == no_tensor) continue;
    const slot& s = slots[flat[f].slot];
    for (dynamic_dim& dd : inputs[tensor_of[f]].dynamic_dims) {
      dd.label = label_for(s, dd, o);
      if (o.dim_labels.empty() || dd.label == dd.shared_name) continue;
      const auto seq = sequence(f, dd.dim);
      const auto u = std::find_if(uses.begin(), uses.end(), [&](const use& x) { return x.label == dd.label; });
      if (u == uses.end()) {
        uses.push_back({dd.label, seq, where(f, dd.dim)});
      } else if (u->seq != seq) {
        notes.push_back("hookscope: the label " + dd.label + " is given to " + u->holder + " and to " +
                        where(f, dd.dim) +
                        ", whose observed values differ: torch.export and TensorRT will take "
                        "them as equal");
      }
    }
  }
}

// C5.
std::vector<std::string> warnings(const std::vector<tensor_input>& inputs, const std::vector<flat_leaf>& flat,
                                  const std::vector<std::size_t>& tensor_of) {
  std::vector<std::string> out;
  for (std::size_t f = 0; f < flat.size(); ++f) {
    if (tensor_of[f] == no_tensor) continue;
    const tensor_input& t = inputs[tensor_of[f]];
    const leaf_summary& l = *flat[f].summary;
    for (const dynamic_dim& dd : t.dynamic_dims) {
      if (dd.only_zero_or_one()) {
        const std::string seen = dd.min == dd.max ? std::to_string(dd.min) : "0 and 1";
        out.push_back("hookscope: dimension " + std::to_string(dd.dim) + " of '" + t.name + "' (" + dd.label +
                      ") is dynamic but was only seen as " + seen +
                      ": torch.export specialises sizes 0 and 1, so record a call where it is at least 2");
      }
      if (l.dims[dd.dim].counts_truncated) {
        out.push_back("hookscope: dimension " + std::to_string(dd.dim) + " of '" + t.name + "' took more than " +
                      std::to_string(max_distinct_values) + " distinct values: its opt counts the " +
                      std::to_string(max_distinct_values) + " smallest only");
      }
    }
    if (t.shapes_seen_truncated) {
      out.push_back("hookscope: '" + t.name + "' took more than " + std::to_string(max_shapes_seen) +
                    " distinct shapes: shapes_seen lists the " + std::to_string(max_shapes_seen) + " smallest only");
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
  const auto forced = [&](const slot& sl) {  // C2
    return o.batch_dimension_for_all ||
           std::any_of(batch.begin(), batch.end(), [&](const input_key& k) { return matches(k, sl); });
  };

  shapes_result r;
  std::vector<std::size_t> tensor_of(flat.size(), no_tensor);
  for (std::size_t f = 0; f < flat.size(); ++f) {
    const leaf_summary* l = flat[f].summary;
    if (!l || l->observed == 0) continue;
    tensor_of[f] = r.inputs.size();
    r.inputs.push_back(describe(flat[f], *l, forced(slots[flat[f].slot])));
  }
  std::vector<std::string> notes;
  name_dims(r.inputs, flat, tensor_of, slots, o, notes);
  r.warnings = warnings(r.inputs, flat, tensor_of);
  r.warnings.insert(r.warnings.end(), notes.begin(), notes.end());
  const std::vector<joint_row> rows = joint_rows(s, slots, flat, tensor_of, r.inputs.size());
  r.relations = find_relations(r.inputs, rows, r.warnings);
  r.profiles = make_profiles(r.inputs, rows, r.relations, o.profile_phases, !s.combos_truncated, r.warnings);
  if (s.combos_truncated) {
    r.warnings.push_back("hookscope: the calls took more than " + std::to_string(max_combinations) +
                         " distinct combinations of shapes: relations are found and checked on " +
                         std::to_string(max_combinations) +
                         " of them (those of smallest hash: the same whatever the calls' order or split); the "
                         "profiles' min and max still cover every call");
  }
  for (const tensor_input& t : r.inputs) {
    if (t.dtypes_seen.size() < 2) continue;
    std::string list;
    for (const hookscope::dtype d : t.dtypes_seen) list += (list.empty() ? "" : ", ") + std::string(to_string(d));
    r.warnings.push_back("hookscope: '" + t.name + "' changed dtype between calls (" + list +
                         "): an exported model takes one dtype per input");
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
