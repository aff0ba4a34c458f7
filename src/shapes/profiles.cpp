// Consistent TensorRT profiles (rule C6, docs/export_formats.md "Relations and profiles"), solved from the relations relations.cpp
// finds: the dims no relation defines (free) take their observed extremes, every defined dim is computed from its
// terms in dependency order, so every point satisfies every relation by construction. A relation whose computed
// extremes do not cover what was observed (a call beyond the kept distinct calls broke it), or go below 0 or
// overflow, is removed and named in a warning, and the system is solved again: at most one solve per relation.
#include "engine_state.hpp"

#include <algorithm>
#include <limits>
#include <string_view>
#include <unordered_map>

HOOKSCOPE_DETAIL_BEGIN_NAMESPACE
namespace detail::shapes {

std::vector<joint_row> joint_rows(const recorded_state& s, const std::vector<slot>& slots,
                                  const std::vector<flat_leaf>& flat, const std::vector<std::size_t>& tensor_of,
                                  const std::vector<tensor_input>& inputs, stored_rows& stored) {
  const std::size_t n_inputs = inputs.size();
  // Per shared name, its dims: a placeholder's dim takes the value its name has in the call (below).
  std::unordered_map<std::string_view, std::vector<dim_var>> by_name;
  for (std::size_t i = 0; i < n_inputs; ++i) {
    for (const dynamic_dim& dd : inputs[i].dynamic_dims) by_name[dd.shared_name].push_back({i, dd.dim});
  }
  const std::vector<std::vector<value>> observed = observed_calls(s, slots);
  const placeholder_sources sources(flat, observed);
  // A call's row from its leaves aligned on the best candidate.
  const auto row_of = [&](std::vector<value> leaves, std::uint64_t count, std::size_t first_call) {
    joint_row r;
    r.count = count;
    r.first_call = first_call;
    r.shapes.resize(n_inputs);
    r.filled.resize(n_inputs);
    const auto take = [&](std::vector<std::optional<shape_t>>& into) {
      for (std::size_t f = 0; f < flat.size() && f < leaves.size(); ++f) {
        if (tensor_of[f] == no_tensor || !leaves[f].is_tensor()) continue;
        const auto& shape = leaves[f].as_tensor().shape;
        if (!flat[f].summary || shape.size() != flat[f].summary->rank) continue;
        into[tensor_of[f]] = shape_t(shape.begin(), shape.end());
      }
    };
    take(r.shapes);
    fill_placeholders(leaves, flat, sources);
    take(r.filled);
    // Placeholders follow the labels: a dim of a placeholder whose shared name a tensor of the call gives takes that
    // value (a cache left out at the prefill has the prefill's batch, not its source call's), so that a name's dims
    // agree at every profile point. A dim D2 left 0 stays 0: that zero is what says "absent" to the model (an image
    // of batch 0), and a name the call gives nowhere keeps D2's value.
    for (std::size_t i = 0; i < n_inputs; ++i) {
      if (r.shapes[i] || !r.filled[i]) continue;
      for (const dynamic_dim& dd : inputs[i].dynamic_dims) {
        std::int64_t& x = (*r.filled[i])[dd.dim];
        if (x == 0) continue;
        for (const dim_var& m : by_name[dd.shared_name]) {
          if (!r.shapes[m.input] || m.dim >= r.shapes[m.input]->size()) continue;
          x = (*r.shapes[m.input])[m.dim];
          break;
        }
      }
    }
    return r;
  };
  std::vector<joint_row> rows;
  rows.reserve(s.combos.size());
  for (std::size_t i = 0; i < s.combos.size(); ++i) {
    rows.push_back(row_of(observed[i], s.combos[i].count, s.combos[i].call->index));
  }
  // Each stored call is the distinct call equal to it; one beyond those kept gets a row of its own.
  stored.row.clear();
  stored.own.clear();
  for (const call_ptr& c : s.calls) {
    if (const auto combo = find_combo(s, call_hash(c->inputs), c->inputs, c->constants)) {
      stored.row.push_back(*combo);
      continue;
    }
    stored.row.push_back(rows.size() + stored.own.size());
    stored.own.push_back(row_of(align(s, *c, slots, false), 1, c->index));
  }
  return rows;
}

namespace {

std::size_t input_index(const std::vector<tensor_input>& inputs, const std::string& name) {
  for (std::size_t i = 0; i < inputs.size(); ++i) {
    if (inputs[i].name == name) return i;
  }
  return inputs.size();
}

// A listed relation as an equation between classes: target = k*terms[0] + c (+ terms[1]).
struct equation {
  std::size_t relation = 0;  // index into the listed relations
  std::size_t target = 0;
  std::vector<std::size_t> terms;
  std::int64_t k = 1;
  std::int64_t c = 0;
};

std::optional<std::int64_t> evaluate(const equation& e, const std::vector<std::int64_t>& v) {
  std::int64_t x = 0;
  if (__builtin_mul_overflow(e.k, v[e.terms[0]], &x) || __builtin_add_overflow(x, e.c, &x)) return std::nullopt;
  if (e.terms.size() > 1 && __builtin_add_overflow(x, v[e.terms[1]], &x)) return std::nullopt;
  return x;
}

// The equations in an order where every class is computed after its terms (relations.cpp lists no cycle; should a
// class be defined twice, the second equation is only checked). Relations between dims of one class hold at every
// point by construction and give no equation.
std::vector<equation> equations(const std::vector<tensor_input>& inputs, const std::vector<value_class>& cls,
                                const std::vector<std::vector<std::size_t>>& index,
                                const std::vector<dim_relation>& relations) {
  std::vector<equation> all;
  std::vector<std::optional<std::size_t>> defined_by(cls.size());
  for (std::size_t r = 0; r < relations.size(); ++r) {
    const dim_relation& rel = relations[r];
    const auto cls_of = [&](const dim_relation::dim_ref& d) {
      const std::size_t i = input_index(inputs, d.input);
      if (i == inputs.size() || d.dim >= index[i].size() || index[i][d.dim] == no_class) {
        return std::optional<std::size_t>();
      }
      return std::optional<std::size_t>(index[i][d.dim]);
    };
    equation e{r, 0, {}, rel.k, rel.c};
    const auto target = cls_of(rel.target);
    if (!target) continue;
    e.target = *target;
    bool known = true;
    for (const auto& t : rel.terms) {
      const auto c = cls_of(t);
      known = known && c.has_value();
      if (c) e.terms.push_back(*c);
    }
    if (!known || (e.terms.size() == 1 && e.terms[0] == e.target && e.k == 1 && e.c == 0)) continue;
    if (!defined_by[e.target]) defined_by[e.target] = all.size();
    all.push_back(std::move(e));
  }
  std::vector<equation> out;
  std::vector<std::uint8_t> state(cls.size(), 0);  // 0 not visited, 1 in progress, 2 done
  const auto visit = [&](auto& self, std::size_t c) -> void {
    if (state[c] != 0 || !defined_by[c]) return;
    state[c] = 1;
    for (const std::size_t t : all[*defined_by[c]].terms) self(self, t);
    state[c] = 2;
    out.push_back(all[*defined_by[c]]);
  };
  for (std::size_t c = 0; c < cls.size(); ++c) visit(visit, c);
  for (std::size_t e = 0; e < all.size(); ++e) {
    if (*defined_by[all[e].target] != e) out.push_back(all[e]);  // checks, after every class is computed
  }
  return out;
}

// One side of a split: the calls whose class `cls` is `at` (equal), or is not (> at, or != at when some are below).
struct condition {
  std::size_t cls = no_class;
  std::int64_t at = 1;
  bool equal = false;

  bool holds(std::optional<std::int64_t> v) const noexcept { return equal ? v == at : v != at; }
};

struct phase {
  std::string name;
  std::vector<std::size_t> rows;      // indexes into the rows
  std::vector<condition> conditions;  // every one holds for its calls (outermost first); none: all calls
  std::vector<tensorrt_profile::split_dim> splits{};
};

struct solved {
  tensorrt_profile profile;
  std::vector<std::int64_t> min_v, max_v;  // per class, at the min and max points
  std::optional<std::size_t> failed;       // the relation no point covering the observations satisfies
  std::string why;
};

// The most frequent value of each dim over the rows (weighted by their counts), the smallest on a tie.
std::vector<std::vector<std::int64_t>> row_opts(const std::vector<tensor_input>& inputs,
                                                const std::vector<const joint_row*>& rows) {
  std::vector<std::vector<std::int64_t>> out;
  for (std::size_t i = 0; i < inputs.size(); ++i) {
    std::vector<std::int64_t> o = inputs[i].opt_shape;
    for (std::size_t d = 0; d < inputs[i].rank; ++d) {
      std::vector<std::pair<std::int64_t, std::uint64_t>> counts;
      for (const joint_row* r : rows) {
        if (!r->filled[i]) continue;
        const std::int64_t v = (*r->filled[i])[d];
        auto it = std::find_if(counts.begin(), counts.end(), [&](const auto& e) { return e.first == v; });
        if (it == counts.end()) {
          counts.emplace_back(v, r->count);
        } else {
          it->second += r->count;
        }
      }
      std::sort(counts.begin(), counts.end());
      std::uint64_t best = 0;
      for (const auto& [v, n] : counts) {
        if (n > best) o[d] = v, best = n;
      }
    }
    out.push_back(std::move(o));
  }
  return out;
}

// opt: the most frequent distinct call of the phase, preferring those giving every input the phase gives; on a tie
// the one agreeing with the most per-dim modes, then the earliest. Inputs it lacks take their placeholders.
const joint_row* opt_row(const std::vector<tensor_input>& inputs, const std::vector<const joint_row*>& rows) {
  std::vector<bool> given(inputs.size(), false);
  for (const joint_row* r : rows) {
    for (std::size_t i = 0; i < inputs.size(); ++i) given[i] = given[i] || r->shapes[i].has_value();
  }
  const auto complete = [&](const joint_row* r) {
    for (std::size_t i = 0; i < inputs.size(); ++i) {
      if (given[i] && !r->shapes[i]) return false;
    }
    return true;
  };
  const bool any_complete = std::any_of(rows.begin(), rows.end(), complete);
  const auto opts = row_opts(inputs, rows);
  const joint_row* best = nullptr;
  std::size_t best_agree = 0;
  for (const joint_row* r : rows) {
    if (any_complete && !complete(r)) continue;
    std::size_t agree = 0;
    for (std::size_t i = 0; i < inputs.size(); ++i) {
      if (!r->filled[i]) continue;
      for (std::size_t d = 0; d < inputs[i].rank; ++d) agree += (*r->filled[i])[d] == opts[i][d];
    }
    const bool better =
        !best || r->count > best->count ||
        (r->count == best->count && (agree > best_agree || (agree == best_agree && r->first_call < best->first_call)));
    if (better) best = r, best_agree = agree;
  }
  return best;
}

// One profile. Per class: obs_lo/obs_hi its extremes over the phase's calls, which a computed dim must cover;
// lo/hi what a free dim spans (the same, extended to the calls not kept, see make_profiles).
solved solve(const std::vector<tensor_input>& inputs, const std::vector<joint_row>& rows,
             const std::vector<value_class>& cls, const std::vector<std::vector<std::size_t>>& index,
             const std::vector<dim_relation>& relations, const std::vector<equation>& eqs, const phase& ph,
             const std::vector<std::int64_t>& lo, const std::vector<std::int64_t>& hi,
             const std::vector<std::int64_t>& obs_lo, const std::vector<std::int64_t>& obs_hi) {
  solved out;
  tensorrt_profile& p = out.profile;
  p.phase = ph.name;
  p.splits = ph.splits;
  if (!p.splits.empty()) p.split = p.splits.front();
  std::vector<const joint_row*> in_phase;
  for (const std::size_t r : ph.rows) in_phase.push_back(&rows[r]), p.calls += rows[r].count;
  const joint_row* best = opt_row(inputs, in_phase);
  const std::size_t best_index = best ? static_cast<std::size_t>(best - rows.data()) : rows.size();

  std::vector<std::int64_t> min_v = lo, max_v = hi, opt_v = lo;
  std::vector<bool> opt_given(cls.size(), false);
  for (std::size_t c = 0; c < cls.size(); ++c) {
    if (best_index < rows.size() && cls[c].values[best_index]) {
      opt_v[c] = *cls[c].values[best_index];
      opt_given[c] = true;
    }
  }
  std::vector<bool> computed(cls.size(), false);
  for (const equation& e : eqs) {
    const auto fail = [&](std::string why) {
      out.failed = e.relation;
      out.why = std::move(why);
      return out;
    };
    const auto mn = evaluate(e, min_v);
    const auto mx = evaluate(e, max_v);
    const auto op = evaluate(e, opt_v);
    if (!mn || !mx || !op) return fail("it overflows at the extremes of " + p.phase);
    if (computed[e.target]) {  // a second equation for a class: it must agree with the first
      if (*mn != min_v[e.target] || *mx != max_v[e.target] || *op != opt_v[e.target]) {
        return fail("another relation already defines " + relations[e.relation].target.label);
      }
      continue;
    }
    if (*mn < 0) return fail("its min point in " + p.phase + " would be " + std::to_string(*mn));
    if (*mn > obs_lo[e.target] || *mx < obs_hi[e.target]) {
      return fail("computed from its terms' extremes in " + p.phase + " it spans " + std::to_string(*mn) + ".." +
                  std::to_string(*mx) + ", which does not cover the observed " + std::to_string(obs_lo[e.target]) +
                  ".." + std::to_string(obs_hi[e.target]) + " (a call broke it)");
    }
    if (opt_given[e.target] && *op != opt_v[e.target]) {
      return fail("the call chosen as opt in " + p.phase + " breaks it");
    }
    const dim_var& where = cls[e.target].members.front();
    const std::string dim_text = inputs[where.input].name + " dim " + std::to_string(where.dim);
    const std::string& text = relations[e.relation].text;
    if (*mn < obs_lo[e.target]) {
      p.widened.push_back("min of " + dim_text + " widened from " + std::to_string(obs_lo[e.target]) + " to " +
                          std::to_string(*mn) + " so that " + text + " holds at the min point");
    }
    if (*mx > obs_hi[e.target]) {
      p.widened.push_back("max of " + dim_text + " widened from " + std::to_string(obs_hi[e.target]) + " to " +
                          std::to_string(*mx) + " so that " + text + " holds at the max point");
    }
    min_v[e.target] = *mn, max_v[e.target] = *mx, opt_v[e.target] = *op;
    computed[e.target] = true;
  }
  const auto opts = row_opts(inputs, in_phase);
  for (std::size_t i = 0; i < inputs.size(); ++i) {
    if (inputs[i].rank == 0) continue;
    tensorrt_profile::shape_range r{inputs[i].name, inputs[i].min_shape, opts[i], inputs[i].max_shape};
    if (best && best->filled[i]) r.opt = *best->filled[i];
    for (std::size_t d = 0; d < inputs[i].rank; ++d) {
      const std::size_t c = index[i][d];
      if (c == no_class) continue;
      r.min[d] = min_v[c], r.opt[d] = opt_v[c], r.max[d] = max_v[c];
    }
    p.shapes.push_back(std::move(r));
  }
  out.min_v = std::move(min_v);
  out.max_v = std::move(max_v);
  return out;
}

// The class whose "= 1" / "!= 1" splits the calls best (dims constant within a phase, weighted by the phase's
// distinct calls), or no_class.
std::size_t phase_split(const std::vector<value_class>& cls) {
  std::size_t split = no_class;
  std::size_t best_score = 0;
  for (std::size_t p = 0; p < cls.size(); ++p) {
    const auto& v = cls[p].values;
    const std::size_t given =
        static_cast<std::size_t>(std::count_if(v.begin(), v.end(), [](const auto& x) { return x.has_value(); }));
    const std::size_t ones = static_cast<std::size_t>(std::count(v.begin(), v.end(), std::optional<std::int64_t>(1)));
    // A side of one call is a phase: one generate() has a single prefill, and its program must take it.
    if (given != v.size() || cls[p].constant || ones < 1 || v.size() - ones < 1) continue;
    std::size_t score = 0;
    for (const bool one : {true, false}) {
      for (std::size_t q = 0; q < cls.size(); ++q) {
        if (q == p || cls[q].constant) continue;
        std::optional<std::int64_t> first;
        bool constant = true;
        for (std::size_t i = 0; i < v.size(); ++i) {
          if ((*v[i] == 1) != one || !cls[q].values[i]) continue;
          if (!first) first = cls[q].values[i];
          constant = constant && cls[q].values[i] == first;
        }
        if (constant && first) score += one ? ones : v.size() - ones;
      }
    }
    if (score > best_score) split = p, best_score = score;
  }
  return split;
}

// An equality between dims of one class (equal in every kept call, placeholders included) gives no equation: its
// points hold by construction. A call not kept breaks it when it puts the target outside its term's extremes over
// every call, which the class's range, merged over its members, hides: such an equality is removed and named in
// `warnings`. Then each class is split into the groups of members still tied (one label, or a listed equality), so
// that a dim no relation ties to the others keeps its own extremes (the bound on widening).
std::vector<value_class> untied_classes(const std::vector<tensor_input>& inputs, std::vector<value_class> cls,
                                        std::vector<dim_relation>& relations,
                                        std::vector<inference_warning>& warnings) {
  const std::vector<std::vector<std::size_t>> index = class_index(inputs, cls);
  const auto var_of = [&](const dim_relation::dim_ref& d) -> std::optional<dim_var> {
    const std::size_t i = input_index(inputs, d.input);
    if (i == inputs.size() || d.dim >= index[i].size() || index[i][d.dim] == no_class) return std::nullopt;
    return dim_var{i, d.dim};
  };
  for (std::size_t r = 0; r < relations.size();) {
    const dim_relation& rel = relations[r];
    const auto t = var_of(rel.target);
    const auto x = rel.terms.size() == 1 && rel.k == 1 && rel.c == 0 ? var_of(rel.terms[0]) : std::nullopt;
    const std::size_t c = t ? index[t->input][t->dim] : no_class;
    if (!t || !x || c != index[x->input][x->dim]) {
      ++r;
      continue;
    }
    std::int64_t kept_lo = std::numeric_limits<std::int64_t>::max(), kept_hi = std::numeric_limits<std::int64_t>::min();
    for (const auto& v : cls[c].values) {
      if (v) kept_lo = std::min(kept_lo, *v), kept_hi = std::max(kept_hi, *v);
    }
    const std::int64_t t_lo = std::min(kept_lo, inputs[t->input].min_shape[t->dim]);
    const std::int64_t t_hi = std::max(kept_hi, inputs[t->input].max_shape[t->dim]);
    const std::int64_t x_lo = std::min(kept_lo, inputs[x->input].min_shape[x->dim]);
    const std::int64_t x_hi = std::max(kept_hi, inputs[x->input].max_shape[x->dim]);
    if (x_lo <= t_lo && t_hi <= x_hi) {
      ++r;
      continue;
    }
    warnings.push_back(inference_warning{
        .type = inference_warning::kind::relation_not_listed,
        .sentence = rel.text +
                    " held in every kept distinct call but is not listed: no profile point covering every observed "
                    "value satisfies it (computed from its term's extremes over every call it spans " +
                    std::to_string(x_lo) + ".." + std::to_string(x_hi) + ", which does not cover the observed " +
                    std::to_string(t_lo) + ".." + std::to_string(t_hi) + ": a call not kept broke it)"});
    relations.erase(relations.begin() + static_cast<std::ptrdiff_t>(r));
  }
  // Members tied: the same label, or a listed equality between them (union-find over the dims, linear in them).
  std::vector<std::vector<std::size_t>> flat_of(inputs.size());  // per input and dim: its index among all dims
  std::size_t n = 0;
  for (std::size_t i = 0; i < inputs.size(); ++i) {
    for (std::size_t d = 0; d < inputs[i].rank; ++d) flat_of[i].push_back(n++);
  }
  std::vector<std::size_t> parent(n);
  for (std::size_t m = 0; m < n; ++m) parent[m] = m;
  const auto root = [&](std::size_t m) {
    while (parent[m] != m) m = parent[m] = parent[parent[m]];
    return m;
  };
  const auto unite = [&](const dim_var& a, const dim_var& b) {
    parent[root(flat_of[a.input][a.dim])] = root(flat_of[b.input][b.dim]);
  };
  for (const value_class& c : cls) {
    std::unordered_map<std::string_view, dim_var> first_with;  // label -> the first member carrying it
    for (const dim_var& m : c.members) {
      const dynamic_dim* dd = nullptr;
      for (const dynamic_dim& x : inputs[m.input].dynamic_dims) dd = x.dim == m.dim ? &x : dd;
      if (!dd) continue;  // a class's members are dynamic dims
      const auto [at, fresh] = first_with.try_emplace(dd->shared_name, m);
      if (!fresh) unite(m, at->second);
    }
  }
  for (const dim_relation& rel : relations) {
    const auto t = var_of(rel.target);
    const auto x = rel.terms.size() == 1 && rel.k == 1 && rel.c == 0 ? var_of(rel.terms[0]) : std::nullopt;
    if (t && x && index[t->input][t->dim] == index[x->input][x->dim]) unite(*t, *x);
  }
  std::vector<value_class> out;
  std::unordered_map<std::size_t, std::size_t> group_of;  // root -> its class in `out`
  for (value_class& c : cls) {
    const std::size_t r0 = root(flat_of[c.members.front().input][c.members.front().dim]);
    if (std::all_of(c.members.begin(), c.members.end(),
                    [&](const dim_var& m) { return root(flat_of[m.input][m.dim]) == r0; })) {
      out.push_back(std::move(c));  // all tied: the class as it is (the usual case)
      continue;
    }
    group_of.clear();
    for (const dim_var& m : c.members) {
      const auto [at, fresh] = group_of.try_emplace(root(flat_of[m.input][m.dim]), out.size());
      if (fresh) {
        value_class g;
        g.values = c.values;
        g.constant = c.constant;
        g.usable = c.usable;
        out.push_back(std::move(g));
      }
      out[at->second].members.push_back(m);
    }
  }
  return out;
}

// Each stored call in its phase's profile (`out` one per phase, in the order of `ps`): the phase of its distinct
// call's row; a call with a row of its own (its distinct call not kept) by its values of the split classes, on the
// side other than "= 1" (or "= 0") where the call gives one nowhere.
void place_stored_calls(std::vector<tensorrt_profile>& out, const std::vector<phase>& ps, std::size_t n_rows,
                        const stored_rows& stored, const std::vector<value_class>& cls) {
  std::vector<std::size_t> phase_of(n_rows, 0);
  for (std::size_t q = 0; q < ps.size(); ++q) {
    for (const std::size_t r : ps[q].rows) phase_of[r] = q;
  }
  for (std::size_t k = 0; k < stored.row.size(); ++k) {
    std::size_t q = 0;
    if (stored.row[k] < n_rows) {
      q = phase_of[stored.row[k]];
    } else {
      const joint_row& own = stored.own[stored.row[k] - n_rows];
      const auto value_of = [&](std::size_t c) {
        std::optional<std::int64_t> v;
        for (const dim_var& m : cls[c].members) {
          if (!v && own.filled[m.input] && m.dim < own.filled[m.input]->size()) v = (*own.filled[m.input])[m.dim];
        }
        return v;
      };
      const auto fits = [&](const phase& ph) {
        return std::all_of(ph.conditions.begin(), ph.conditions.end(),
                           [&](const condition& c) { return c.holds(value_of(c.cls)); });
      };
      while (q + 1 < ps.size() && !fits(ps[q])) ++q;
    }
    out[q].call_indexes.push_back(k);
  }
}

// The class whose "= 0" / "> 0" splits these rows (one phase's) where some have it 0 and the others not: at 0 an
// input holds nothing (a cache or an image left out: D2's placeholder, or value_if_missing's empty batch), and a
// program traced from a call holding something guards what an empty one breaks (a cache's length equal to the
// encoder's, the images' batch equal to the prompts'). Among several, the one whose sides hold the most other
// classes constant (as phase_split), the first on a tie; no_class when none.
std::size_t zero_split(const std::vector<value_class>& cls, const std::vector<std::size_t>& rows) {
  std::size_t split = no_class;
  std::size_t best_score = 0;
  for (std::size_t p = 0; p < cls.size(); ++p) {
    const auto& v = cls[p].values;
    std::size_t zeros = 0;
    bool all_given = true;
    for (const std::size_t r : rows) {
      all_given = all_given && v[r].has_value();
      zeros += v[r] == std::optional<std::int64_t>(0);
    }
    if (!all_given || zeros < 1 || rows.size() - zeros < 1) continue;
    std::size_t score = 0;
    for (const bool zero : {true, false}) {
      for (std::size_t q = 0; q < cls.size(); ++q) {
        if (q == p) continue;
        std::optional<std::int64_t> first;
        bool constant = true;
        for (const std::size_t r : rows) {
          if ((*v[r] == 0) != zero || !cls[q].values[r]) continue;
          if (!first) first = cls[q].values[r];
          constant = constant && cls[q].values[r] == first;
        }
        if (constant && first) score += zero ? zeros : rows.size() - zeros;
      }
    }
    if (split == no_class || score > best_score) split = p, best_score = score;
  }
  return split;
}

}  // namespace

std::vector<tensorrt_profile> make_profiles(const std::vector<tensor_input>& inputs, const std::vector<joint_row>& rows,
                                            const stored_rows& stored, std::vector<dim_relation>& relations,
                                            bool phases, bool every_call_kept,
                                            std::vector<inference_warning>& warnings) {
  const std::vector<value_class> cls = untied_classes(inputs, value_classes(inputs, rows), relations, warnings);
  const std::vector<std::vector<std::size_t>> index = class_index(inputs, cls);
  // A phase's two halves on class c: the calls where it is `at`, and the others; each half after its parent's
  // conditions, the one with the earlier first call first.
  const auto halves = [&](const phase& parent, std::size_t c, std::int64_t at) {
    const dim_var& m = cls[c].members.front();
    const dynamic_dim* dd = nullptr;
    for (const dynamic_dim& x : inputs[m.input].dynamic_dims) dd = x.dim == m.dim ? &x : dd;
    const std::string label = dd ? dd->shared_name : inputs[m.input].name + "_dim_" + std::to_string(m.dim);
    phase eq = parent, ne = parent;
    eq.rows.clear(), ne.rows.clear();
    bool below = false;
    for (const std::size_t r : parent.rows) {
      (*cls[c].values[r] == at ? eq : ne).rows.push_back(r);
      below = below || *cls[c].values[r] < at;
    }
    for (const bool equal : {true, false}) {
      phase& h = equal ? eq : ne;
      h.conditions.push_back(condition{c, at, equal});
      h.splits.push_back(tensorrt_profile::split_dim{.label = label,
                                                     .input = inputs[m.input].name,
                                                     .dim = m.dim,
                                                     .equals_one = equal && at == 1,
                                                     .value = at,
                                                     .equal = equal});
      const std::string text = label + (equal ? " = " : below ? " != " : " > ") + std::to_string(at);
      h.name = parent.conditions.empty() ? text : parent.name + ", " + text;
    }
    const bool eq_first = rows[eq.rows.front()].first_call < rows[ne.rows.front()].first_call;
    return eq_first ? std::pair{std::move(eq), std::move(ne)} : std::pair{std::move(ne), std::move(eq)};
  };
  std::vector<phase> ps(1, phase{"all calls", {}, {}});
  for (std::size_t i = 0; i < rows.size(); ++i) ps[0].rows.push_back(i);
  if (phases && !rows.empty()) {
    if (const std::size_t split = phase_split(cls); split != no_class) {
      auto [first, second] = halves(ps[0], split, 1);
      ps = {std::move(first), std::move(second)};
    }
    // Then each phase where a class is 0 in some of its calls and not in the others, until none is.
    for (std::size_t q = 0; q < ps.size();) {
      const std::size_t z = zero_split(cls, ps[q].rows);
      if (z == no_class) {
        ++q;
        continue;
      }
      auto [first, second] = halves(ps[q], z, 0);
      ps[q] = std::move(first);
      ps.insert(ps.begin() + static_cast<std::ptrdiff_t>(q) + 1, std::move(second));
    }
  }
  // Per phase and class: the extremes over the phase's rows (placeholders included); a class no call of the phase
  // gives takes its extremes over every call.
  const std::int64_t none_lo = std::numeric_limits<std::int64_t>::max();
  const std::int64_t none_hi = std::numeric_limits<std::int64_t>::min();
  std::vector<std::int64_t> glo(cls.size(), none_lo), ghi(cls.size(), none_hi);  // every call (the summaries)
  for (std::size_t c = 0; c < cls.size(); ++c) {
    for (const dim_var& m : cls[c].members) {
      glo[c] = std::min(glo[c], inputs[m.input].min_shape[m.dim]);
      ghi[c] = std::max(ghi[c], inputs[m.input].max_shape[m.dim]);
    }
  }
  std::vector<std::vector<std::int64_t>> obs_lo(ps.size(), std::vector<std::int64_t>(cls.size(), none_lo));
  std::vector<std::vector<std::int64_t>> obs_hi(ps.size(), std::vector<std::int64_t>(cls.size(), none_hi));
  for (std::size_t q = 0; q < ps.size(); ++q) {
    for (std::size_t c = 0; c < cls.size(); ++c) {
      for (const std::size_t r : ps[q].rows) {
        if (!cls[c].values[r]) continue;
        obs_lo[q][c] = std::min(obs_lo[q][c], *cls[c].values[r]);
        obs_hi[q][c] = std::max(obs_hi[q][c], *cls[c].values[r]);
      }
      if (obs_lo[q][c] == none_lo) obs_lo[q][c] = glo[c], obs_hi[q][c] = ghi[c];
    }
  }
  // What free dims span. With every distinct call kept, the rows are every call. Else a call not kept may belong to
  // any phase: each phase's free dims span their extremes over every call, except the dims the phases are split on,
  // which stay on their phase's side of 1 or 0 (the "> 1" side reaching down to 2, the "> 0" side to 1).
  std::vector<std::vector<std::int64_t>> lo = obs_lo, hi = obs_hi;
  if (!every_call_kept) {
    for (std::size_t q = 0; q < ps.size(); ++q) {
      for (std::size_t c = 0; c < cls.size(); ++c) {
        const auto& conds = ps[q].conditions;
        const auto k = std::find_if(conds.begin(), conds.end(), [&](const condition& x) { return x.cls == c; });
        if (k != conds.end() && k->equal) continue;
        const std::int64_t floor =
            k != conds.end() && glo[c] >= k->at ? std::min<std::int64_t>(k->at + 1, ghi[c]) : glo[c];
        lo[q][c] = std::min(lo[q][c], floor);
        hi[q][c] = std::max(hi[q][c], ghi[c]);
      }
    }
  }
  for (;;) {
    const std::vector<equation> eqs = equations(inputs, cls, index, relations);
    std::vector<tensorrt_profile> out;
    std::optional<std::size_t> failed;
    std::string why;
    std::string failed_phase;  // the profile no point of which satisfies it; none when it fails over every call
    std::vector<std::int64_t> ulo(cls.size(), none_lo), uhi(cls.size(), none_hi);  // over the phases
    for (std::size_t q = 0; q < ps.size() && !failed; ++q) {
      solved s = solve(inputs, rows, cls, index, relations, eqs, ps[q], lo[q], hi[q], obs_lo[q], obs_hi[q]);
      failed = s.failed;
      if (failed) failed_phase = ps[q].name;
      why = std::move(s.why);
      for (std::size_t c = 0; c < s.min_v.size(); ++c) {
        ulo[c] = std::min(ulo[c], s.min_v[c]), uhi[c] = std::max(uhi[c], s.max_v[c]);
      }
      out.push_back(std::move(s.profile));
    }
    // A computed dim must also cover its values in the calls not kept: together, the phases' ranges.
    for (const equation& e : eqs) {
      if (failed) break;
      if (ulo[e.target] <= glo[e.target] && ghi[e.target] <= uhi[e.target]) continue;
      failed = e.relation;
      why = "computed from its terms' extremes over every call it spans " + std::to_string(ulo[e.target]) + ".." +
            std::to_string(uhi[e.target]) + ", which does not cover the observed " + std::to_string(glo[e.target]) +
            ".." + std::to_string(ghi[e.target]) + ": a call not kept broke it";
    }
    if (!failed) {
      place_stored_calls(out, ps, rows.size(), stored, cls);
      return out;
    }
    warnings.push_back(inference_warning{
        .type = inference_warning::kind::relation_outside_profile,
        .phase = failed_phase,
        .sentence = relations[*failed].text +
                    " held in every kept distinct call but is not listed: no profile point covering every observed "
                    "value satisfies it (" +
                    why + ")"});
    relations.erase(relations.begin() + static_cast<std::ptrdiff_t>(*failed));
  }
}

}  // namespace detail::shapes
HOOKSCOPE_DETAIL_END_NAMESPACE
