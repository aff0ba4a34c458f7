// Relations between dynamic dimensions (rule C6, docs/input_observer_rules.md), from the distinct calls the engine
// counted (recorded_state::combos), each aligned on the best candidate with its placeholders filled (rule D2): a
// relation is listed only when those calls determine it (more distinct points than its free parameters), the
// simplest form first, and never one that would define a dim through itself (profiles.cpp solves the relations as
// a system, so they must form one without cycles).
#include "engine_state.hpp"

#include <algorithm>
#include <array>
#include <cstdlib>
#include <unordered_map>

HOOKSCOPE_DETAIL_BEGIN_NAMESPACE
namespace detail::shapes {

namespace {

inline constexpr std::int64_t max_k = 8;            // a = k*b + c: 1 <= k <= max_k
inline constexpr std::int64_t max_c = 64;           // |c| <= max_c
inline constexpr std::size_t max_sum_classes = 64;  // a = b + e is searched among the first classes only

const dynamic_dim* find_dim(const tensor_input& t, std::size_t d) {
  for (const dynamic_dim& dd : t.dynamic_dims) {
    if (dd.dim == d) return &dd;
  }
  return nullptr;
}

dim_relation::dim_ref ref(const std::vector<tensor_input>& inputs, const dim_var& v) {
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

// How many distinct values `c` takes in `rows`.
std::size_t distinct_values(const value_class& c, const std::vector<std::size_t>& rows) {
  std::vector<std::int64_t> v;
  v.reserve(rows.size());
  for (const std::size_t i : rows) v.push_back(*c.values[i]);
  std::sort(v.begin(), v.end());
  return static_cast<std::size_t>(std::unique(v.begin(), v.end()) - v.begin());
}

std::uint64_t calls_in(const std::vector<joint_row>& rows, const std::vector<std::size_t>& which) {
  std::uint64_t n = 0;
  for (const std::size_t i : which) n += rows[i].count;
  return n;
}

// a = k*b + c in every row giving both, with 1 <= k <= max_k, |c| <= max_c; `equal` asks for k = 1, c = 0 (two
// classes equal where both are present), else k = 1 needs c > 0 (one direction of a shift is listed, not both).
std::optional<std::pair<std::int64_t, std::int64_t>> affine(const value_class& a, const value_class& b,
                                                            const std::vector<std::size_t>& rows, bool equal) {
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

// Whether a = k*b + c can hold (affine's conditions) in the rows giving both, read once with an early exit: most
// pairs of classes fail within a few rows, so trying every pair costs about one pass over the pairs, not over the
// pairs times the rows (inputs with many dims); affine then decides on the common rows.
bool may_be_affine(const value_class& a, const value_class& b, bool equal) {
  std::optional<std::int64_t> a0, b0, k, c;
  for (std::size_t i = 0; i < a.values.size(); ++i) {
    if (!a.values[i] || !b.values[i]) continue;
    const std::int64_t va = *a.values[i], vb = *b.values[i];
    if (!a0) {
      a0 = va, b0 = vb;
    } else if (k) {
      if (va != *k * vb + *c) return false;
    } else if (vb == *b0) {
      if (va != *a0) return false;
    } else {
      const std::int64_t dv = va - *a0, db = vb - *b0;
      if (dv % db != 0) return false;
      k = dv / db;
      if (*k < 1 || *k > max_k) return false;  // before k * b0, which it keeps from overflowing
      c = *a0 - *k * *b0;
      if (std::llabs(*c) > max_c || (equal ? *k != 1 || *c != 0 : *k == 1 && *c <= 0)) return false;
    }
  }
  return k.has_value();
}

// Whether a = b + e in every row giving all three, read once with an early exit (the sums are tried for every triple
// of the first max_sum_classes classes, so a full pass per triple would dominate).
bool may_be_sum(const value_class& a, const value_class& b, const value_class& e) {
  bool any = false;
  for (std::size_t i = 0; i < a.values.size(); ++i) {
    if (!a.values[i] || !b.values[i] || !e.values[i]) continue;
    if (*a.values[i] != *b.values[i] + *e.values[i]) return false;
    any = true;
  }
  return any;
}

std::uint64_t values_hash(const std::vector<std::optional<std::int64_t>>& values) {
  std::uint64_t h = 1469598103934665603ULL;
  for (const auto& v : values) {
    h = (h ^ (v ? static_cast<std::uint64_t>(*v) : 0x9e3779b97f4a7c15ULL)) * 1099511628211ULL;
    h ^= h >> 29;
  }
  return h;
}

}  // namespace

std::vector<value_class> value_classes(const std::vector<tensor_input>& inputs, const std::vector<joint_row>& rows) {
  std::vector<value_class> out;
  if (rows.empty()) return out;
  std::unordered_map<std::uint64_t, std::vector<std::size_t>> by_hash;
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
      // Classes found by the hash of their values (a linear search would be quadratic in the dims).
      std::vector<std::size_t>& bucket = by_hash[values_hash(values)];
      const auto same =
          std::find_if(bucket.begin(), bucket.end(), [&](std::size_t c) { return out[c].values == values; });
      if (same != bucket.end()) {
        out[*same].members.push_back({i, dd.dim});
        continue;
      }
      bucket.push_back(out.size());
      value_class c;
      c.members.push_back({i, dd.dim});
      std::optional<std::int64_t> first;
      c.constant = true;
      for (const auto& v : values) {
        if (!v) continue;
        if (!first) first = v;
        c.constant = c.constant && *v == *first;
        c.usable = c.usable && *v >= 0 && *v <= max_relation_value;
      }
      c.values = std::move(values);
      out.push_back(std::move(c));
    }
  }
  return out;
}

std::vector<std::vector<std::size_t>> class_index(const std::vector<tensor_input>& inputs,
                                                  const std::vector<value_class>& cls) {
  std::vector<std::vector<std::size_t>> out;
  for (const tensor_input& t : inputs) out.emplace_back(t.rank, no_class);
  for (std::size_t c = 0; c < cls.size(); ++c) {
    for (const dim_var& m : cls[c].members) out[m.input][m.dim] = c;
  }
  return out;
}

std::vector<dim_relation> find_relations(const std::vector<tensor_input>& inputs, const std::vector<joint_row>& rows,
                                         const std::function<bool(const dim_var&, const dim_var&)>& differ,
                                         std::vector<inference_warning>& warnings) {
  std::vector<dim_relation> out;
  const std::vector<value_class> cls = value_classes(inputs, rows);
  std::vector<bool> defined(cls.size(), false);            // the target of a listed relation between classes
  std::vector<std::vector<std::size_t>> deps(cls.size());  // the classes a defined class is computed from
  // Whether class x is computed (directly or not) from class a: a relation defining a from x would be a cycle.
  const auto depends_on = [&](std::size_t x, std::size_t a) {
    std::vector<std::size_t> todo{x};
    std::vector<bool> seen(cls.size(), false);
    while (!todo.empty()) {
      const std::size_t y = todo.back();
      todo.pop_back();
      if (y == a) return true;
      if (seen[y]) continue;
      seen[y] = true;
      todo.insert(todo.end(), deps[y].begin(), deps[y].end());
    }
    return false;
  };
  const auto varying = [&](std::size_t c) { return !cls[c].constant && cls[c].usable; };
  const auto add = [&](dim_relation r, std::size_t target, std::vector<std::size_t> terms,
                       const std::vector<std::size_t>& common, std::size_t points) {
    r.supporting_calls = calls_in(rows, common);
    r.distinct_points = points;
    r.text = relation_text(r);
    out.push_back(std::move(r));
    defined[target] = true;
    deps[target] = std::move(terms);
  };
  // An equality the kept calls satisfy but a call not kept (beyond max_combinations) broke: the pair state over every
  // call says so, even where the breaking sizes lie inside both dims' extremes.
  const auto broken = [&](const dim_relation& r, const dim_var& a, const dim_var& b) {
    if (!differ(a, b)) return false;
    warnings.push_back(inference_warning{
        .type = inference_warning::kind::relation_not_listed,
        .sentence = relation_text(r) + " held in every kept distinct call but is not listed: a " +
                    "call not kept gave " + r.target.input + " dim " + std::to_string(r.target.dim) + " and " +
                    r.terms[0].input + " dim " + std::to_string(r.terms[0].dim) + " different sizes"});
    return true;
  };
  const auto cyclic = [&](const dim_relation& r) {
    warnings.push_back(inference_warning{
        .type = inference_warning::kind::relation_not_listed,
        .sentence = relation_text(r) + " held in every kept distinct call but is not listed: " +
                    "the dims it names are already computed from " + r.target.label + " (" + r.target.input + " dim " +
                    std::to_string(r.target.dim) +
                    "), so listing it would define that dim through itself, which no profile can be solved for"});
  };

  // 1. Dims of one class (equal in every row) under different labels: one free parameter, so two distinct values.
  for (const value_class& c : cls) {
    if (!varying(static_cast<std::size_t>(&c - cls.data()))) continue;
    const std::vector<std::size_t> common = common_rows({&c});
    const std::size_t points = distinct_values(c, common);
    if (points < 2) continue;
    const dim_relation::dim_ref first = ref(inputs, c.members.front());
    for (std::size_t m = 1; m < c.members.size(); ++m) {
      dim_relation r;
      r.target = ref(inputs, c.members[m]);
      if (r.target.label == first.label) continue;
      r.terms = {first};
      r.torch_derived = true;
      if (broken(r, c.members[m], c.members.front())) continue;
      r.supporting_calls = calls_in(rows, common);
      r.distinct_points = points;
      r.text = relation_text(r);
      out.push_back(std::move(r));
    }
  }
  const std::size_t n = std::min(cls.size(), max_sum_classes);
  // 2. Equal where both are given (an input some calls leave out), under different labels.
  for (std::size_t a = 0; a < n; ++a) {
    if (!varying(a)) continue;
    for (std::size_t b = 0; b < a && !defined[a]; ++b) {
      if (!varying(b) || !may_be_affine(cls[a], cls[b], true)) continue;
      const std::vector<std::size_t> common = common_rows({&cls[a], &cls[b]});
      if (!affine(cls[a], cls[b], common, true)) continue;
      const std::size_t points = distinct_values(cls[b], common);
      if (points < 2) continue;
      dim_relation r;
      r.target = ref(inputs, cls[a].members.front());
      r.terms = {ref(inputs, cls[b].members.front())};
      if (r.target.label == r.terms[0].label) continue;
      r.torch_derived = true;
      if (broken(r, cls[a].members.front(), cls[b].members.front())) continue;
      if (depends_on(b, a)) {
        cyclic(r);
        continue;
      }
      add(std::move(r), a, {b}, common, points);
    }
  }
  // 3. a = b + e: no free parameter, but two distinct points where both terms vary, so that one point's coincidence
  // is not taken for a law.
  for (std::size_t a = 0; a < n; ++a) {
    if (defined[a] || !varying(a)) continue;
    for (std::size_t b = 0; b < n && !defined[a]; ++b) {
      if (b == a || !varying(b)) continue;
      for (std::size_t e = b + 1; e < n; ++e) {
        if (e == a || !varying(e) || !may_be_sum(cls[a], cls[b], cls[e])) continue;
        const std::vector<std::size_t> common = common_rows({&cls[a], &cls[b], &cls[e]});
        bool holds = !common.empty();
        for (std::size_t i = 0; holds && i < common.size(); ++i) {
          const std::size_t row = common[i];
          holds = *cls[a].values[row] == *cls[b].values[row] + *cls[e].values[row];
        }
        if (!holds || distinct_values(cls[b], common) < 2 || distinct_values(cls[e], common) < 2) continue;
        std::vector<std::array<std::int64_t, 2>> pts;
        for (const std::size_t i : common) pts.push_back({*cls[b].values[i], *cls[e].values[i]});
        std::sort(pts.begin(), pts.end());
        const auto points = static_cast<std::size_t>(std::unique(pts.begin(), pts.end()) - pts.begin());
        dim_relation r;
        r.target = ref(inputs, cls[a].members.front());
        r.terms = {ref(inputs, cls[b].members.front()), ref(inputs, cls[e].members.front())};
        if (depends_on(b, a) || depends_on(e, a)) {
          cyclic(r);
          continue;
        }
        add(std::move(r), a, {b, e}, common, points);
        break;
      }
    }
  }
  // 4. a = k*b + c, fitted: two free parameters, so three distinct points; only for dims no simpler relation defines.
  for (std::size_t a = 0; a < cls.size(); ++a) {
    if (defined[a] || !varying(a)) continue;
    for (std::size_t b = 0; b < cls.size(); ++b) {
      if (a == b || !varying(b) || !may_be_affine(cls[a], cls[b], false)) continue;
      const std::vector<std::size_t> common = common_rows({&cls[a], &cls[b]});
      const auto kc = affine(cls[a], cls[b], common, false);
      if (!kc) continue;
      const std::size_t points = distinct_values(cls[b], common);
      if (points < 3) continue;
      dim_relation r;
      r.target = ref(inputs, cls[a].members.front());
      r.terms = {ref(inputs, cls[b].members.front())};
      r.k = kc->first;
      r.c = kc->second;
      r.torch_derived = true;
      if (depends_on(b, a)) {
        cyclic(r);
        continue;
      }
      add(std::move(r), a, {b}, common, points);
      break;
    }
  }
  return out;
}

}  // namespace detail::shapes
HOOKSCOPE_DETAIL_END_NAMESPACE
