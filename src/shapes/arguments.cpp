// Representative arguments (rules D1-D3, docs/input_observer_rules.md): a candidate call aligned on the best
// candidate, its missing leaves filled with placeholders, returned in the structure the exporter takes.
#include "engine_state.hpp"

#include <algorithm>

HOOKSCOPE_DETAIL_BEGIN_NAMESPACE
namespace detail::shapes {

namespace {

// D1: new inputs; keywords with a scalar default become constants, which must match the best candidate's (B2).
call_ptr new_candidate(const recorded_state& s, const call_inputs& inputs) {
  auto c = std::make_shared<stored_call>();
  c->index = s.n_calls;
  c->inputs.args = inputs.args;
  for (const auto& kw : inputs.kwargs) {
    if (s.scalar_default(kw.first)) {
      c->constants.push_back(kw);
    } else {
      c->inputs.kwargs.push_back(kw);
    }
  }
  s.sort_by_signature(c->constants);
  if (!constants_equal(c->constants, s.best->constants)) {
    // Facts: constants, best_constants, best_call (no call: these are new inputs).
    throw inference_error(inference_error_kind::constants_differ,
                          "two calls were made with different constant values, " + constants_text(c->constants) +
                              " (new inputs) != " + constants_text(s.best->constants) + " (best candidate, call " +
                              std::to_string(s.best->index) + ")",
                          {{"constants", constants_text(c->constants)},
                           {"best_constants", constants_text(s.best->constants)},
                           {"best_call", s.best->index}});
  }
  return c;
}

// D1: a stored call by index, new inputs, or the first call with the best candidate's argument counts.
call_ptr pick_candidate(const recorded_state& s, const argument_options& o) {
  if (const auto* index = std::get_if<std::size_t>(&o.candidate)) {
    if (!s.options.keep_calls) {
      throw inference_error(
          "infer_arguments: calls are not kept (engine_options::keep_calls is false), "
          "so no call can be chosen by index");
    }
    if (*index >= s.calls.size()) {
      throw inference_error("infer_arguments: no stored call at index " + std::to_string(*index) + " (" +
                            std::to_string(s.calls.size()) + " stored)");
    }
    return s.calls[*index];
  }
  if (const auto* inputs = std::get_if<call_inputs>(&o.candidate)) return new_candidate(s, *inputs);
  const count_pair counts{s.best->inputs.args.size(), s.best->inputs.kwargs.size()};
  for (const auto& [c, call] : s.first_by_counts) {
    if (c == counts) return call;
  }
  return s.best;  // more distinct argument counts than kept: the best candidate has them by definition
}

}  // namespace

std::vector<std::vector<value>> observed_calls(const recorded_state& s, const std::vector<slot>& slots) {
  std::vector<std::vector<value>> out;
  out.reserve(s.combos.size());
  for (const combination& c : s.combos) out.push_back(align(s, *c.call, slots, false));
  return out;
}

namespace {

// How many varying dims of the leaves both give (other than `f`) `row` has equal to `leaves`.
std::size_t agreement(const std::vector<value>& leaves, const std::vector<value>& row, std::size_t f,
                      const std::vector<flat_leaf>& flat) {
  std::size_t n = 0;
  for (std::size_t g = 0; g < leaves.size() && g < row.size(); ++g) {
    const leaf_summary* l = flat[g].summary;
    if (g == f || !l || !leaves[g].is_tensor() || !row[g].is_tensor()) continue;
    const auto& a = leaves[g].as_tensor().shape;
    const auto& b = row[g].as_tensor().shape;
    if (a.size() != l->rank || b.size() != l->rank) continue;
    for (std::size_t d = 0; d < l->rank; ++d) n += l->dims[d].varies && a[d] == b[d];
  }
  return n;
}

// D2's source for leaf f: the last tensor seen there (the reference's rule), unless an observed call that gives f
// agrees with the candidate on more varying dims (e.g. a prefill's empty cache takes the batch of the candidate's
// input_ids from a decode step of the same batch, not the batch of the last call). The calls compared are the
// leaf's sources (placeholder_sources), a bounded number, so that filling every distinct call stays linear.
tensor_spec placeholder_source(const std::vector<value>& leaves, std::size_t f, const std::vector<flat_leaf>& flat,
                               const std::vector<std::vector<value>>& observed, const std::vector<std::size_t>& rows) {
  const leaf_summary* l = flat[f].summary;
  const value* chosen = nullptr;
  std::size_t best = 0;
  std::optional<std::size_t> last_score;  // the best agreement of a call whose tensor there is the last one seen
  for (const std::size_t i : rows) {
    const std::vector<value>& row = observed[i];
    const std::size_t score = agreement(leaves, row, f, flat);
    if (!chosen || score >= best) chosen = &row[f], best = score;
    if (row[f].as_tensor().shape == l->last_tensor.shape && score >= last_score.value_or(0)) last_score = score;
  }
  if (!chosen || (last_score && *last_score >= best)) return l->last_tensor;
  return chosen->as_tensor();
}

}  // namespace

placeholder_sources::placeholder_sources(const std::vector<flat_leaf>& flat,
                                         const std::vector<std::vector<value>>& observed_rows)
    : observed(observed_rows), rows(flat.size()) {
  // Per leaf, the last call of each distinct shape there, the latest max_placeholder_sources shapes: one pass from
  // the last call backwards.
  std::vector<std::vector<const std::vector<std::int64_t>*>> shapes(flat.size());
  for (std::size_t i = observed.size(); i-- > 0;) {
    const std::vector<value>& row = observed[i];
    for (std::size_t f = 0; f < flat.size() && f < row.size(); ++f) {
      const leaf_summary* l = flat[f].summary;
      if (!l || rows[f].size() >= max_placeholder_sources || !row[f].is_tensor()) continue;
      const auto& shape = row[f].as_tensor().shape;
      if (shape.size() != l->rank) continue;
      const bool seen = std::any_of(shapes[f].begin(), shapes[f].end(),
                                    [&](const std::vector<std::int64_t>* x) { return *x == shape; });
      if (seen) continue;
      shapes[f].push_back(&shape);
      rows[f].push_back(i);
    }
  }
  for (auto& r : rows) std::reverse(r.begin(), r.end());  // call order: on equal agreement the later call wins
}

// D2: a placeholder from the last call with a tensor there (or the observed call agreeing best with the candidate,
// see placeholder_source): reused when empty, zeros of its shape when no dim varies, else its highest varying dim
// set to 0 (batch forcing plays no part here).
void fill_placeholders(std::vector<value>& leaves, const std::vector<flat_leaf>& flat,
                       const placeholder_sources& sources) {
  const std::vector<value> given = leaves;  // the candidate's own leaves, before any placeholder
  for (std::size_t f = 0; f < leaves.size(); ++f) {
    if (!leaves[f].is_none()) continue;
    const leaf_summary* l = flat[f].summary;
    if (l && l->has_tensor) {
      check_rank(flat[f]);
      tensor_spec t = placeholder_source(given, f, flat, sources.observed, sources.rows[f]);
      std::optional<std::size_t> highest;
      for (std::size_t d = 0; d < l->rank; ++d) {
        if (l->dims[d].varies) highest = d;
      }
      // "empty" is a zero among the dims (not numel() == 0: a product of huge dims overflows).
      const bool empty = std::find(t.shape.begin(), t.shape.end(), 0) != t.shape.end();
      if (!empty && highest) t.shape[*highest] = 0;
      leaves[f] = value(std::move(t));
    } else if (l && l->last_other) {
      leaves[f] = *l->last_other;
    }  // else None in every call: the model was given None there, and None it gets
  }
}

namespace {

// After D2: a placeholder's varying dim that every call giving both had equal to a varying dim the candidate gives
// takes the candidate's value there (a call of batch 4, which no observed call had, gets a cache placeholder of batch
// 4, not D2's source's batch the model would refuse). A dim D2 left 0 stays 0: that zero says "absent".
void follow_candidate(std::vector<value>& leaves, const std::vector<value>& given, const std::vector<flat_leaf>& flat,
                      const dim_pairs& pairs) {
  const auto tensor_of = [&](const value& v, const leaf_summary* l) {
    return l && v.is_tensor() && v.as_tensor().shape.size() == l->rank;
  };
  for (std::size_t f = 0; f < leaves.size() && f < given.size(); ++f) {
    const leaf_summary* l = flat[f].summary;
    if (!given[f].is_none() || !tensor_of(leaves[f], l)) continue;
    tensor_spec t = leaves[f].as_tensor();
    bool changed = false;
    for (std::size_t d = 0; d < l->rank; ++d) {
      const std::uint32_t i = l->dims[d].pair_slot;
      if (!l->dims[d].varies || t.shape[d] == 0 || i == untracked_dim) continue;
      bool found = false;
      for (std::size_t g = 0; g < given.size() && !found; ++g) {
        const leaf_summary* m = flat[g].summary;
        if (g == f || !tensor_of(given[g], m)) continue;
        for (std::size_t e = 0; e < m->rank && !found; ++e) {
          const std::uint32_t j = m->dims[e].pair_slot;
          if (!m->dims[e].varies || j == untracked_dim || !pairs.equal_where_both(i, j)) continue;
          const std::int64_t x = given[g].as_tensor().shape[e];
          changed = changed || x != t.shape[d];
          t.shape[d] = x;
          found = true;
        }
      }
    }
    if (changed) leaves[f] = value(std::move(t));
  }
}

// avoid_specialization: the stored call with the most varying dims >= 2 (the first on a tie); the dims still
// below 2 are named in `warnings`.
call_ptr least_specialising(const recorded_state& s, const std::vector<slot>& slots,
                            std::vector<inference_warning>& warnings) {
  if (!s.options.keep_calls) {
    throw inference_error(
        "infer_arguments: avoid_specialization needs stored calls (keep_calls is false: the engine keeps the "
        "summaries of every call, no call itself)");
  }
  const std::vector<flat_leaf> flat = flatten_slots(s, slots);
  const std::vector<std::vector<value>> observed = observed_calls(s, slots);
  const placeholder_sources sources(flat, observed);
  call_ptr best;
  std::size_t best_score = 0;
  std::vector<std::string> best_low;
  for (const call_ptr& c : s.calls) {
    std::vector<value> leaves = align(s, *c, slots, false);
    fill_placeholders(leaves, flat, sources);
    std::size_t score = 0;
    std::vector<std::string> low;
    for (std::size_t f = 0; f < flat.size(); ++f) {
      const leaf_summary* l = flat[f].summary;
      if (!l || !leaves[f].is_tensor() || leaves[f].as_tensor().shape.size() != l->rank) continue;
      for (std::size_t d = 0; d < l->rank; ++d) {
        if (!l->dims[d].varies) continue;
        const std::int64_t v = leaves[f].as_tensor().shape[d];
        if (v >= 2) {
          ++score;
        } else {
          low.push_back("dimension " + std::to_string(d) + " of '" + join_path(flat[f].path) + "' is " +
                        std::to_string(v));
        }
      }
    }
    if (!best || score > best_score) best = c, best_score = score, best_low = std::move(low);
  }
  if (best && !best_low.empty()) {
    std::string list;
    for (const std::string& x : best_low) list += (list.empty() ? "" : ", ") + x;
    warnings.push_back(
        inference_warning{.type = inference_warning::kind::specialization_not_avoided,
                          .sentence = "avoid_specialization: no stored call has every dynamic dimension >= 2; call " +
                                      std::to_string(best->index) + " has the most, but there " + list +
                                      ": torch.export specialises sizes 0 and 1"});
  }
  return best ? best : s.best;
}

// The tree of `shape_of` with its leaves taken in order from `leaves`.
value rebuild(const value& shape_of, const std::vector<value>& leaves, std::size_t& next) {
  if (!is_container(shape_of)) return leaves[next++];
  std::vector<value> children;
  for_each_child(shape_of, [&](std::size_t, const std::string*, const value& child) {
    children.push_back(rebuild(child, leaves, next));
  });
  return with_children(shape_of, std::move(children));
}

// D3: a tuple without keywords, a dict without positional arguments, else a dict renamed by the signature.
value arrange_arguments(const recorded_state& s, const std::vector<slot>& slots, std::vector<value> leaves,
                        bool as_args_kwargs) {
  std::size_t next = 0;
  std::vector<value> args;
  value_fields kwargs;
  for (const slot& sl : slots) {
    value v = rebuild(*sl.best_value, leaves, next);
    if (sl.positional) {
      args.push_back(std::move(v));
    } else {
      kwargs.emplace_back(sl.name, std::move(v));
    }
  }
  for (const auto& c : s.best->constants) kwargs.push_back(c);
  if (as_args_kwargs) return value::tuple({value::tuple(std::move(args)), value::dict(std::move(kwargs))});
  if (kwargs.empty()) return value::tuple(std::move(args));
  if (args.empty()) return value::dict(std::move(kwargs));
  if (s.variadic(parameter_kind::var_positional)) {
    throw inference_error(
        "cannot return arguments as a single tuple or a single dictionary because of "
        "'*args' in the function signature; set argument_options::as_args_kwargs = true");
  }
  value_fields named;
  for (std::size_t i = 0; i < args.size(); ++i) named.emplace_back(slots[i].name, std::move(args[i]));
  for (auto& kw : kwargs) named.push_back(std::move(kw));
  return value::dict(std::move(named));
}

}  // namespace

inferred_arguments infer_arguments(const recorded_state& s, const argument_options& o) {
  require_calls(s, "infer_arguments");
  const std::vector<slot> slots = best_slots(s);
  check_alignment(s, slots);
  inferred_arguments out;
  const call_ptr candidate = o.avoid_specialization ? least_specialising(s, slots, out.warnings) : pick_candidate(s, o);
  if (!std::holds_alternative<call_inputs>(o.candidate)) out.call = candidate->index;
  std::vector<value> leaves = align(s, *candidate, slots, true);
  const std::vector<value> given = leaves;
  const std::vector<flat_leaf> flat = flatten_slots(s, slots);
  const std::vector<std::vector<value>> observed = observed_calls(s, slots);
  fill_placeholders(leaves, flat, placeholder_sources(flat, observed));
  follow_candidate(leaves, given, flat, s.pairs);
  out.arguments =
      o.flat ? value::list(std::move(leaves)) : arrange_arguments(s, slots, std::move(leaves), o.as_args_kwargs);
  return out;
}

}  // namespace detail::shapes
HOOKSCOPE_DETAIL_END_NAMESPACE
