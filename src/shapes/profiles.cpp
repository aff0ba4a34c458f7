// Relations between dynamic dimensions and consistent TensorRT profiles, from the distinct calls the engine counted
// (recorded_state::combos, each aligned on the best candidate with its placeholders filled as infer_arguments fills
// them, rule D2). A relation holds in every one of them; a profile's opt is one of them and its min/max are widened
// along the relations so that each point is a shape the model can run (docs/export_formats.md, "Profiles").
#include "engine_state.hpp"

#include <algorithm>
#include <cstdlib>

HOOKSCOPE_DETAIL_BEGIN_NAMESPACE
namespace detail::shapes {

namespace {

inline constexpr std::int64_t max_k = 8;              // a = k*b + c: 1 <= k <= max_k
inline constexpr std::int64_t max_c = 64;             // |c| <= max_c
inline constexpr std::int64_t max_value = 1LL << 40;  // larger sizes take no part in relations (no overflow)
inline constexpr std::size_t max_sum_classes = 64;    // a = b + e is searched among the first classes only

struct var {  // one dynamic dim of one input
  std::size_t input = 0;
  std::size_t dim = 0;
};

// Dims with the same values in every row (absent in the same rows), with those values. Rows are the calls as the
// model receives them, placeholders filled (rule D2): relations hold for those.
struct value_class {
  std::vector<var> members;
  std::vector<std::optional<std::int64_t>> values;  // per row; absent where the call gave no tensor there
  bool constant = false;
  bool usable = true;  // every value in [0, max_value]
};

std::vector<value_class> classes(const std::vector<tensor_input>& inputs, const std::vector<joint_row>& rows) {
  std::vector<value_class> out;
  if (rows.empty()) return out;
  for (std::size_t i = 0; i < inputs.size(); ++i) {
    for (const dynamic_dim& dd : inputs[i].dynamic_dims) {
      std::vector<std::optional<std::int64_t>> values;
      bool any = false;
      for (const joint_row& r : rows) {
        // The shapes the model receives: placeholders included (a prefill's empty cache has past length 0).
        if (r.filled[i] && r.filled[i]->size() > dd.dim) {
          values.emplace_back((*r.filled[i])[dd.dim]);
          any = true;
        } else {
          values.emplace_back();
        }
      }
      if (!any) continue;
      const auto same = std::find_if(out.begin(), out.end(), [&](const value_class& c) { return c.values == values; });
      if (same != out.end()) {
        same->members.push_back({i, dd.dim});
        continue;
      }
      value_class c;
      c.members.push_back({i, dd.dim});
      std::optional<std::int64_t> first;
      c.constant = true;
      for (const auto& v : values) {
        if (!v) continue;
        if (!first) first = v;
        c.constant = c.constant && *v == *first;
        c.usable = c.usable && *v >= 0 && *v <= max_value;
      }
      c.values = std::move(values);
      out.push_back(std::move(c));
    }
  }
  return out;
}

const dynamic_dim* find_dim(const tensor_input& t, std::size_t d) {
  for (const dynamic_dim& dd : t.dynamic_dims) {
    if (dd.dim == d) return &dd;
  }
  return nullptr;
}

dim_relation::dim_ref ref(const std::vector<tensor_input>& inputs, const var& v) {
  const dynamic_dim* dd = find_dim(inputs[v.input], v.dim);
  return {inputs[v.input].name, v.dim, dd ? dd->shared_name : inputs[v.input].name + "_dim_" + std::to_string(v.dim)};
}

std::string relation_text(const dim_relation& r) {
  std::string out = r.target.label + " = ";
  if (r.k != 1) out += std::to_string(r.k) + "*";
  out += r.terms[0].label;
  if (r.terms.size() > 1) out += " + " + r.terms[1].label;
  if (r.c > 0) out += " + " + std::to_string(r.c);
  if (r.c < 0) out += " - " + std::to_string(-r.c);
  return out;
}

// The rows where every class given has a value.
std::vector<std::size_t> common_rows(std::initializer_list<const value_class*> cs) {
  std::vector<std::size_t> out;
  const std::size_t n = (*cs.begin())->values.size();
  for (std::size_t i = 0; i < n; ++i) {
    if (std::all_of(cs.begin(), cs.end(), [&](const value_class* c) { return c->values[i].has_value(); })) {
      out.push_back(i);
    }
  }
  return out;
}

// a = k*b + c in every row giving both (two at least, b taking two values there), with 1 <= k <= max_k,
// |c| <= max_c; `equal` also accepts k = 1, c = 0 (two classes equal where both are present).
std::optional<std::pair<std::int64_t, std::int64_t>> affine(const value_class& a, const value_class& b, bool equal) {
  const std::vector<std::size_t> rows = common_rows({&a, &b});
  if (rows.size() < 2) return std::nullopt;
  const auto va = [&](std::size_t i) { return *a.values[rows[i]]; };
  const auto vb = [&](std::size_t i) { return *b.values[rows[i]]; };
  std::size_t j = 1;
  while (j < rows.size() && vb(j) == vb(0)) ++j;
  if (j == rows.size()) return std::nullopt;
  const std::int64_t dv = va(j) - va(0);
  const std::int64_t db = vb(j) - vb(0);
  if (dv % db != 0) return std::nullopt;
  const std::int64_t k = dv / db;
  if (k < 1 || k > max_k) return std::nullopt;
  const std::int64_t c = va(0) - k * vb(0);
  if (std::llabs(c) > max_c || (equal ? k != 1 || c != 0 : k == 1 && c <= 0)) return std::nullopt;
  for (std::size_t i = 0; i < rows.size(); ++i) {
    if (va(i) != k * vb(i) + c) return std::nullopt;
  }
  return std::pair{k, c};
}

}  // namespace

std::vector<joint_row> joint_rows(const recorded_state& s, const std::vector<slot>& slots,
                                  const std::vector<flat_leaf>& flat, const std::vector<std::size_t>& tensor_of,
                                  std::size_t n_inputs) {
  std::vector<joint_row> rows;
  const std::vector<std::vector<value>> observed = observed_calls(s, slots);
  for (std::size_t i = 0; i < s.combos.size(); ++i) {
    const combination& c = s.combos[i];
    joint_row r;
    r.count = c.count;
    r.first_call = c.call->index;
    r.shapes.resize(n_inputs);
    r.filled.resize(n_inputs);
    std::vector<value> leaves = observed[i];
    const auto take = [&](std::vector<std::optional<shape_t>>& into) {
      for (std::size_t f = 0; f < flat.size() && f < leaves.size(); ++f) {
        if (tensor_of[f] == no_tensor || !leaves[f].is_tensor()) continue;
        const auto& shape = leaves[f].as_tensor().shape;
        if (!flat[f].summary || shape.size() != flat[f].summary->rank) continue;
        into[tensor_of[f]] = shape_t(shape.begin(), shape.end());
      }
    };
    take(r.shapes);
    fill_placeholders(leaves, flat, observed, false);
    take(r.filled);
    rows.push_back(std::move(r));
  }
  return rows;
}

std::vector<dim_relation> find_relations(const std::vector<tensor_input>& inputs, const std::vector<joint_row>& rows) {
  std::vector<dim_relation> out;
  if (rows.size() < 2) return out;  // one call: every dim is "related" to every other
  const std::vector<value_class> cls = classes(inputs, rows);
  // Equalities the shared names do not already say.
  for (const value_class& c : cls) {
    const dim_relation::dim_ref first = ref(inputs, c.members.front());
    for (std::size_t m = 1; m < c.members.size(); ++m) {
      dim_relation r;
      r.target = ref(inputs, c.members[m]);
      if (r.target.label == first.label) continue;
      r.terms = {first};
      r.torch_derived = true;
      r.text = relation_text(r);
      out.push_back(std::move(r));
    }
  }
  std::vector<bool> explained(cls.size(), false);
  for (std::size_t a = 0; a < cls.size(); ++a) {  // a = k*b + c
    if (cls[a].constant || !cls[a].usable) continue;
    for (std::size_t b = 0; b < cls.size(); ++b) {
      if (a == b || cls[b].constant || !cls[b].usable) continue;
      const auto kc = affine(cls[a], cls[b], false);
      if (!kc) continue;
      dim_relation r;
      r.target = ref(inputs, cls[a].members.front());
      r.terms = {ref(inputs, cls[b].members.front())};
      r.k = kc->first;
      r.c = kc->second;
      r.torch_derived = true;
      r.text = relation_text(r);
      out.push_back(std::move(r));
      explained[a] = true;
      break;
    }
  }
  const std::size_t n = std::min(cls.size(), max_sum_classes);
  for (std::size_t a = 0; a < n; ++a) {  // a = b + e
    if (explained[a] || cls[a].constant || !cls[a].usable) continue;
    for (std::size_t b = 0; b < n && !explained[a]; ++b) {
      if (b == a || cls[b].constant || !cls[b].usable) continue;
      for (std::size_t e = b + 1; e < n; ++e) {
        if (e == a || cls[e].constant || !cls[e].usable) continue;
        const std::vector<std::size_t> common = common_rows({&cls[a], &cls[b], &cls[e]});
        bool holds = common.size() >= 2;
        for (std::size_t i = 0; holds && i < common.size(); ++i) {
          const std::size_t row = common[i];
          holds = *cls[a].values[row] == *cls[b].values[row] + *cls[e].values[row];
        }
        if (!holds) continue;
        dim_relation r;
        r.target = ref(inputs, cls[a].members.front());
        r.terms = {ref(inputs, cls[b].members.front()), ref(inputs, cls[e].members.front())};
        r.text = relation_text(r);
        out.push_back(std::move(r));
        explained[a] = true;
        break;
      }
    }
  }
  // Equal where both are given (an input some calls leave out), under different names.
  for (std::size_t a = 0; a < n; ++a) {
    if (cls[a].constant || !cls[a].usable) continue;
    for (std::size_t b = 0; b < a; ++b) {
      if (cls[b].constant || !cls[b].usable || !affine(cls[a], cls[b], true)) continue;
      dim_relation r;
      r.target = ref(inputs, cls[a].members.front());
      r.terms = {ref(inputs, cls[b].members.front())};
      if (r.target.label == r.terms[0].label) continue;
      r.torch_derived = true;
      r.text = relation_text(r);
      out.push_back(std::move(r));
      break;
    }
  }
  return out;
}

namespace {

struct bounds {
  std::vector<std::vector<std::int64_t>> min, opt, max;  // per input, per dim
};

std::size_t input_index(const std::vector<tensor_input>& inputs, const std::string& name) {
  for (std::size_t i = 0; i < inputs.size(); ++i) {
    if (inputs[i].name == name) return i;
  }
  return inputs.size();
}

// The most frequent value of each dim over the rows (weighted by their counts), the smallest on a tie.
std::vector<std::vector<std::int64_t>> row_opts(const std::vector<tensor_input>& inputs,
                                                const std::vector<const joint_row*>& rows) {
  std::vector<std::vector<std::int64_t>> out;
  for (std::size_t i = 0; i < inputs.size(); ++i) {
    std::vector<std::int64_t> o = inputs[i].opt_shape;
    for (std::size_t d = 0; d < inputs[i].rank; ++d) {
      std::vector<std::pair<std::int64_t, std::uint64_t>> counts;
      for (const joint_row* r : rows) {
        if (!r->shapes[i]) continue;
        const std::int64_t v = (*r->shapes[i])[d];
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

tensorrt_profile profile_of(const std::vector<tensor_input>& inputs, const std::vector<const joint_row*>& rows,
                            const std::vector<dim_relation>& relations, const std::vector<value_class>& cls,
                            std::string phase) {
  tensorrt_profile p;
  p.phase = std::move(phase);
  bounds b;
  for (const tensor_input& t : inputs) b.min.push_back(t.min_shape), b.max.push_back(t.max_shape);
  std::vector<bool> given(inputs.size(), false);  // observed in some row of the phase
  for (const joint_row* r : rows) {
    for (std::size_t i = 0; i < inputs.size(); ++i) given[i] = given[i] || r->shapes[i].has_value();
  }
  // min/max: over the observed values; an input no call of the phase gives takes its placeholders' shapes.
  std::vector<bool> seen(inputs.size(), false);
  for (const joint_row* r : rows) {
    p.calls += r->count;
    for (std::size_t i = 0; i < inputs.size(); ++i) {
      const std::optional<shape_t>& shape = given[i] ? r->shapes[i] : r->filled[i];
      if (!shape) continue;
      for (std::size_t d = 0; d < shape->size(); ++d) {
        b.min[i][d] = seen[i] ? std::min(b.min[i][d], (*shape)[d]) : (*shape)[d];
        b.max[i][d] = seen[i] ? std::max(b.max[i][d], (*shape)[d]) : (*shape)[d];
      }
      seen[i] = true;
    }
  }
  // opt: among the calls giving every input the phase gives (all calls if none does), the most frequent; on a tie
  // the one agreeing with the most per-dim modes, then the earliest.
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
      if (!r->shapes[i]) continue;
      for (std::size_t d = 0; d < inputs[i].rank; ++d) agree += (*r->shapes[i])[d] == opts[i][d];
    }
    const bool better =
        !best || r->count > best->count ||
        (r->count == best->count && (agree > best_agree || (agree == best_agree && r->first_call < best->first_call)));
    if (better) best = r, best_agree = agree;
  }
  for (std::size_t i = 0; i < inputs.size(); ++i) {
    const std::optional<shape_t>* shape = nullptr;
    if (best && best->shapes[i]) shape = &best->shapes[i];
    if (best && !shape && !given[i] && best->filled[i]) shape = &best->filled[i];
    b.opt.push_back(shape ? **shape : opts[i]);
  }
  // Widening, so that every relation holds at the min and at the max point: the target moves outwards; where
  // it cannot (the target is already the outer value), a term does (the larger one, by what is missing). Every
  // dim equal to one moved (its class) follows it.
  const auto class_of = [&](std::size_t i, std::size_t d) -> const value_class* {
    for (const value_class& c : cls) {
      for (const var& m : c.members) {
        if (m.input == i && m.dim == d) return &c;
      }
    }
    return nullptr;
  };
  const auto set = [&](std::vector<std::vector<std::int64_t>>& side, std::size_t i, std::size_t d, std::int64_t v,
                       const char* what, const dim_relation& r) {
    const std::int64_t old = side[i][d];
    if (old == v) return false;
    p.widened.push_back(std::string(what) + " of " + inputs[i].name + " dim " + std::to_string(d) + " widened from " +
                        std::to_string(old) + " to " + std::to_string(v) + " so that " + r.text + " holds at the " +
                        what + " point");
    const value_class* c = class_of(i, d);
    if (!c) {
      side[i][d] = v;
      return true;
    }
    for (const var& m : c->members) side[m.input][m.dim] = v;
    return true;
  };
  for (int pass = 0; pass < 8; ++pass) {
    bool changed = false;
    for (const dim_relation& r : relations) {
      const std::size_t ti = input_index(inputs, r.target.input);
      std::vector<std::size_t> xi;
      for (const auto& t : r.terms) xi.push_back(input_index(inputs, t.input));
      if (ti == inputs.size() || std::find(xi.begin(), xi.end(), inputs.size()) != xi.end()) continue;
      const auto term = [&](const std::vector<std::vector<std::int64_t>>& side, std::size_t t) {
        return side[xi[t]][r.terms[t].dim];
      };
      const auto combine = [&](const std::vector<std::vector<std::int64_t>>& side) {
        return r.k * term(side, 0) + r.c + (r.terms.size() > 1 ? term(side, 1) : 0);
      };
      // The term moved when the target cannot: the only one, or the larger of two at that point.
      const auto mover = [&](const std::vector<std::vector<std::int64_t>>& side) -> std::size_t {
        return r.terms.size() > 1 && term(side, 1) > term(side, 0) ? 1 : 0;
      };
      const std::int64_t lo = std::max<std::int64_t>(0, combine(b.min));
      const std::int64_t min_t = b.min[ti][r.target.dim];
      if (min_t > lo) changed = set(b.min, ti, r.target.dim, lo, "min", r) || changed;
      if (min_t < lo) {  // lower a term by the difference (divided by k, rounded down)
        const std::size_t m = mover(b.min);
        const std::int64_t v = std::max<std::int64_t>(0, term(b.min, m) - (lo - min_t + r.k - 1) / (m == 0 ? r.k : 1));
        changed = set(b.min, xi[m], r.terms[m].dim, v, "min", r) || changed;
      }
      const std::int64_t hi = combine(b.max);
      const std::int64_t max_t = b.max[ti][r.target.dim];
      if (max_t < hi) changed = set(b.max, ti, r.target.dim, hi, "max", r) || changed;
      if (max_t > hi) {  // raise a term by the difference (divided by k, rounded up)
        const std::size_t m = mover(b.max);
        const std::int64_t step = m == 0 ? r.k : 1;
        changed =
            set(b.max, xi[m], r.terms[m].dim, term(b.max, m) + (max_t - hi + step - 1) / step, "max", r) || changed;
      }
    }
    if (!changed) break;
  }
  for (std::size_t i = 0; i < inputs.size(); ++i) {
    if (inputs[i].rank == 0) continue;
    p.shapes.push_back({inputs[i].name, b.min[i], b.opt[i], b.max[i]});
  }
  return p;
}

}  // namespace

std::vector<tensorrt_profile> make_profiles(const std::vector<tensor_input>& inputs, const std::vector<joint_row>& rows,
                                            const std::vector<dim_relation>& relations, bool phases) {
  const std::vector<value_class> cls = classes(inputs, rows);
  std::vector<const joint_row*> all;
  for (const joint_row& r : rows) all.push_back(&r);
  std::optional<std::size_t> split;  // the class whose "= 1" / "!= 1" splits the calls best
  if (phases) {
    std::size_t best_score = 0;
    for (std::size_t p = 0; p < cls.size(); ++p) {
      const auto& v = cls[p].values;
      const std::size_t given =
          static_cast<std::size_t>(std::count_if(v.begin(), v.end(), [](const auto& x) { return x.has_value(); }));
      const std::size_t ones = static_cast<std::size_t>(std::count(v.begin(), v.end(), std::optional<std::int64_t>(1)));
      if (given != v.size() || cls[p].constant || ones < 2 || v.size() - ones < 2) continue;
      std::size_t score = 0;  // dims constant within a phase, weighted by the phase's distinct calls
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
  }
  if (!split) return {profile_of(inputs, all, relations, cls, "all calls")};
  const value_class& c = cls[*split];
  const std::string label = ref(inputs, c.members.front()).label;
  std::vector<const joint_row*> one, other;
  bool zero = false;
  for (std::size_t i = 0; i < rows.size(); ++i) {
    (*c.values[i] == 1 ? one : other).push_back(&rows[i]);
    zero = zero || *c.values[i] < 1;
  }
  std::vector<tensorrt_profile> out;
  const bool one_first = one.front()->first_call < other.front()->first_call;
  const std::string other_text = label + (zero ? " != 1" : " > 1");
  if (one_first) out.push_back(profile_of(inputs, one, relations, cls, label + " = 1"));
  out.push_back(profile_of(inputs, other, relations, cls, other_text));
  if (!one_first) out.push_back(profile_of(inputs, one, relations, cls, label + " = 1"));
  return out;
}

}  // namespace detail::shapes
HOOKSCOPE_DETAIL_END_NAMESPACE
