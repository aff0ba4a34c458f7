// The shape engine: records calls as constant-size summaries (per argument, per flattened leaf, per dimension) and
// infers from them the dynamic shapes and representative arguments, following yobx's InputObserver rule by rule
// (yobx/torch/input_observer.py; the rules are grouped as A recording, B alignment, C dynamic dimensions,
// D arguments, the letters the comments below cite).
//
// Why summaries rather than calls: the command line folds millions of records, so every rule is evaluated on data
// whose size does not grow with the number of calls. The summaries are keyed by ARGUMENT (a parameter name, or a
// position without a parameter), not by the best candidate's flattened slots, because the best candidate may change
// with every call; a slot of the best candidate is mapped to its argument's summary only when inferring. The same
// code runs whether calls are kept or not (engine_options::keep_calls), so both give identical results.
#include "hookscope/shapes.hpp"

#include <algorithm>
#include <charconv>
#include <string_view>
#include <utility>

HOOKSCOPE_DETAIL_BEGIN_NAMESPACE

//=== input_key ===//

input_key::input_key(int position) : key_(std::size_t{0}) {
  if (position < 0) {
    throw inference_error("hookscope: input_key: position " + std::to_string(position) + " is negative");
  }
  key_ = static_cast<std::size_t>(position);
}

input_key input_key::parse(std::string_view text) {
  std::size_t position = 0;
  const char* end = text.data() + text.size();
  auto [ptr, ec] = std::from_chars(text.data(), end, position);
  if (!text.empty() && ec == std::errc() && ptr == end) return input_key(position);
  return input_key(std::string(text));
}

std::string input_key::to_string() const { return is_position() ? std::to_string(position()) : name(); }

namespace {

//=== limits of the summaries (memory stays constant whatever the number of calls) ===//

constexpr std::size_t max_shapes_seen = 16;       // distinct shapes kept per tensor input
constexpr std::size_t max_distinct_values = 4096; // distinct sizes counted per dimension (for opt)
constexpr std::size_t max_constant_sets = 16;     // distinct sets of constant keyword values
constexpr std::size_t max_count_pairs = 64;       // (positional, keyword) argument counts with a kept first call

using shape_t = std::vector<std::int64_t>;

constexpr std::size_t no_tensor = static_cast<std::size_t>(-1);  // a flattened leaf no call gave a tensor for

//=== value helpers ===//

bool is_scalar(const value& v) noexcept {
  const auto k = v.type();
  return k == value::kind::integer || k == value::kind::floating || k == value::kind::boolean ||
         k == value::kind::string;
}

// Python's truthiness, which decides whether a call "gives" an argument (rule B4): None, 0, "", empty containers
// and empty custom classes (a cache without layers) are absent; a tensor always counts.
bool truthy(const value& v) {
  switch (v.type()) {
    case value::kind::none: return false;
    case value::kind::tensor: return true;
    case value::kind::integer: return v.as_int() != 0;
    case value::kind::floating: return v.as_float() != 0.0;
    case value::kind::boolean: return v.as_bool();
    case value::kind::string: return !v.as_string().empty();
    case value::kind::tuple:
    case value::kind::list: return !v.items().empty();
    case value::kind::dict:
    case value::kind::structure: return !v.fields().empty();
  }
  return false;
}

double numeric(const value& v) {
  switch (v.type()) {
    case value::kind::integer: return static_cast<double>(v.as_int());
    case value::kind::boolean: return v.as_bool() ? 1.0 : 0.0;
    default: return v.as_float();
  }
}

// Python's == on scalars: 1 == 1.0 == True, strings only equal strings.
bool scalar_equal(const value& a, const value& b) {
  const bool a_str = a.type() == value::kind::string, b_str = b.type() == value::kind::string;
  if (a_str || b_str) return a_str && b_str && a.as_string() == b.as_string();
  if (a.type() != value::kind::floating && b.type() != value::kind::floating) {
    const auto as_i = [](const value& v) { return v.type() == value::kind::integer ? v.as_int() : std::int64_t{v.as_bool()}; };
    return as_i(a) == as_i(b);
  }
  return numeric(a) == numeric(b);
}

// Constant sets are ordered by signature position when built, so equality is the dict equality of the reference.
bool constants_equal(const value_fields& a, const value_fields& b) {
  if (a.size() != b.size()) return false;
  for (std::size_t i = 0; i < a.size(); ++i) {
    if (a[i].first != b[i].first || !scalar_equal(a[i].second, b[i].second)) return false;
  }
  return true;
}

template <class F>
void for_each_leaf(const value& v, F&& f) {
  switch (v.type()) {
    case value::kind::tuple:
    case value::kind::list:
      for (const value& item : v.items()) for_each_leaf(item, f);
      return;
    case value::kind::dict:
    case value::kind::structure:
      for (const auto& field : v.fields()) for_each_leaf(field.second, f);
      return;
    default: f(v);
  }
}

std::string shape_text(const shape_t& shape) {
  if (shape.empty()) return "[]";
  std::string out;
  for (std::size_t d = 0; d < shape.size(); ++d) {
    if (d) out += 'x';
    out += std::to_string(shape[d]);
  }
  return out;
}

std::string scalar_text(const value& v) {
  switch (v.type()) {
    case value::kind::string: return "'" + v.as_string() + "'";
    case value::kind::boolean: return v.as_bool() ? "true" : "false";
    case value::kind::integer: return std::to_string(v.as_int());
    default: return to_json(v);
  }
}

std::string constants_text(const value_fields& constants) {
  std::string out = "{";
  for (std::size_t i = 0; i < constants.size(); ++i) {
    if (i) out += ", ";
    out += constants[i].first + ": " + scalar_text(constants[i].second);
  }
  return out + "}";
}

std::uint64_t mix(std::uint64_t h) noexcept {  // splitmix64's finaliser
  h ^= h >> 30;
  h *= 0xbf58476d1ce4e5b9ULL;
  h ^= h >> 27;
  h *= 0x94d049bb133111ebULL;
  return h ^ (h >> 31);
}

//=== summaries ===//

struct dim_summary {
  std::int64_t first = 0;
  std::int64_t min = 0;
  std::int64_t max = 0;
  bool varies = false;
  bool counts_truncated = false;
  std::uint64_t sequence_hash = 0;  // of the values in call order: equal sequences share a name (rule C3)
  std::vector<std::pair<std::int64_t, std::uint64_t>> counts;  // value -> calls, ascending value

  void observe(std::int64_t v, bool first_time) {
    if (first_time) {
      first = min = max = v;
    } else {
      varies = varies || v != first;
      min = std::min(min, v);
      max = std::max(max, v);
    }
    sequence_hash = mix(sequence_hash + static_cast<std::uint64_t>(v) + 0x9e3779b97f4a7c15ULL);
    auto it = std::lower_bound(counts.begin(), counts.end(), v,
                               [](const auto& entry, std::int64_t x) { return entry.first < x; });
    if (it != counts.end() && it->first == v) {
      ++it->second;
    } else if (counts.size() < max_distinct_values) {
      counts.insert(it, {v, 1});
    } else {
      counts_truncated = true;
    }
  }

  // The most frequent value, the smallest on a tie (counts are in ascending value order).
  std::int64_t opt() const noexcept {
    std::int64_t best = first;
    std::uint64_t best_count = 0;
    for (const auto& [v, n] : counts) {
      if (n > best_count) best = v, best_count = n;
    }
    return best;
  }
};

// One flattened leaf of an argument, over the calls that give the argument.
struct leaf_summary {
  std::uint64_t observed = 0;  // tensors of the first rank seen
  std::size_t rank = 0;
  hookscope::dtype dtype = hookscope::dtype::float32;
  std::vector<dim_summary> dims;
  std::vector<shape_t> shapes_seen;
  bool shapes_truncated = false;
  std::optional<std::size_t> rank_conflict_call;  // first call with another rank (rule C1)
  shape_t rank_conflict_shape;
  bool has_tensor = false;
  tensor_spec last_tensor;          // for the placeholders of infer_arguments (rule D2)
  std::optional<value> last_other;  // last non-tensor, non-none value

  void observe(const value& leaf, std::size_t call) {
    if (!leaf.is_tensor()) {
      if (!leaf.is_none()) last_other = leaf;
      return;
    }
    const shape_t& shape = leaf.as_tensor().shape;
    remember_shape(shape);
    has_tensor = true;
    last_tensor.shape.assign(shape.begin(), shape.end());  // reuses the capacity: no allocation per call
    last_tensor.dtype = leaf.as_tensor().dtype;
    if (observed == 0) {
      rank = shape.size();
      dtype = leaf.as_tensor().dtype;
      dims.resize(rank);
    } else if (shape.size() != rank) {
      if (!rank_conflict_call) rank_conflict_call = call, rank_conflict_shape = shape;
      return;
    }
    for (std::size_t d = 0; d < rank; ++d) dims[d].observe(shape[d], observed == 0);
    ++observed;
  }

  void remember_shape(const shape_t& shape) {
    if (!shapes_seen.empty() && shapes_seen.back() == shape) return;  // the usual case: same as last time
    if (std::find(shapes_seen.begin(), shapes_seen.end(), shape) != shapes_seen.end()) return;
    if (shapes_seen.size() < max_shapes_seen) {
      shapes_seen.push_back(shape);
    } else {
      shapes_truncated = true;
    }
  }
};

// One top-level argument: a parameter name (given by position or by keyword), or a position without a parameter.
struct key_summary {
  std::string name;                      // empty for a position
  std::optional<std::size_t> position;   // set for a position without a parameter of its own
  std::uint64_t present = 0;             // calls giving it at all (remove_inputs counts them)
  std::uint64_t constant_present = 0;    // calls giving it as a constant keyword value
  std::uint64_t provided = 0;            // calls giving it with a truthy value (rule B4)
  std::size_t leaf_count = 0;            // of the first call providing it
  std::optional<std::pair<std::size_t, std::size_t>> count_conflict;  // (call, leaves) of the first mismatch
  std::optional<std::size_t> first_kwarg_call;                        // first call naming it as a keyword (B1)
  std::vector<leaf_summary> leaves;
  std::size_t stamp = 0;  // call number + 1 when last seen in a call: catches an argument given twice

  void observe(const value& v, std::size_t call) {
    ++present;
    if (!truthy(v)) return;
    ++provided;
    const std::size_t n = v.leaf_count();
    if (provided == 1) {
      leaf_count = n;
      leaves.resize(n);
    } else if (n != leaf_count) {
      if (!count_conflict) count_conflict = std::pair{call, n};
      return;
    }
    std::size_t j = 0;
    for_each_leaf(v, [&](const value& leaf) { leaves[j++].observe(leaf, call); });
  }
};

struct stored_call {
  std::size_t index = 0;  // among the recorded calls
  call_inputs inputs;
  value_fields constants;
  std::size_t leaf_count = 0;
};
using call_ptr = std::shared_ptr<stored_call>;

struct constant_set {
  value_fields values;
  std::size_t first_call = 0;
};

// A top-level argument of the best candidate, as the inference sees it.
struct slot {
  std::size_t key = 0;
  bool positional = false;
  std::size_t position = 0;                     // in the best candidate's positional arguments
  std::optional<std::size_t> signature_index;  // a position a key "2" matches (named positional parameters)
  std::string name;        // the parameter / keyword name; "arg<i>" for positions without a parameter
  std::string label_name;  // the name labels are built from ("<label_name>_dim_<d>")
  std::vector<std::string> path;  // the tensor names' first components
  const value* best_value = nullptr;
};

struct flat_leaf {
  std::size_t slot = 0;
  const leaf_summary* summary = nullptr;  // null: no call gave this argument
  std::vector<std::string> path;
};

struct known_dim {
  std::string_view input;
  std::size_t dim;
  std::string_view label;
};

// The well-known LLM input names seeded before automatic sharing (rule C3).
constexpr known_dim known_dims[] = {
    {"input_ids", 0, "batch_size"},          {"input_ids", 1, "sequence_length"},
    {"position_ids", 0, "batch_size"},       {"position_ids", 1, "sequence_length"},
    {"token_type_ids", 0, "batch_size"},     {"token_type_ids", 1, "sequence_length"},
    {"attention_mask", 0, "batch_size"},     {"attention_mask", 1, "total_sequence_length"},
    {"past_key_values", 0, "batch_size"},    {"past_key_values", 2, "past_sequence_length"},
    {"cache_position", 0, "sequence_length"}, {"pixel_values", 0, "batch_size"},
    {"decoder_input_ids", 0, "batch_size"},  {"decoder_input_ids", 1, "decoder_sequence_length"},
    {"decoder_attention_mask", 0, "batch_size"}, {"decoder_attention_mask", 1, "decoder_sequence_length"},
};

std::optional<std::string_view> known_label(std::string_view input, std::size_t dim) {
  for (const known_dim& k : known_dims) {
    if (k.input == input && k.dim == dim) return k.label;
  }
  return std::nullopt;
}

std::string join_path(const std::vector<std::string>& path) {
  std::string out;
  for (std::size_t i = 0; i < path.size(); ++i) {
    if (i) out += '.';
    out += path[i];
  }
  return out;
}

// What infer_dynamic_shapes computes; shape_engine (a friend of dynamic_shapes) moves it in.
struct shapes_result {
  dynamic_shapes::node root;
  std::vector<tensor_input> inputs;
  std::vector<std::string> warnings;
};

}  // namespace

//=== the engine ===//

struct shape_engine::impl {
  engine_options options;
  parameter_list sig;
  bool sig_set = false;
  std::size_t n_named = 0;  // leading positional-or-keyword parameters: what positions name
  std::vector<std::pair<input_key, value>> if_missing;

  std::size_t n_calls = 0;
  std::size_t limit = 0;

  std::vector<key_summary> keys;
  std::vector<std::size_t> position_keys;  // key of positional argument i (a cache)
  std::vector<constant_set> constant_sets;
  call_ptr best;
  std::vector<std::pair<std::pair<std::size_t, std::size_t>, call_ptr>> first_by_counts;
  std::vector<call_ptr> calls;  // keep_calls only
  std::vector<std::size_t> kwarg_keys;  // scratch, reused by every call

  explicit impl(engine_options o) : options(o), limit(o.store_n_calls) {}

  //--- signature ---//

  void on_signature() {
    n_named = 0;
    while (n_named < sig.size() && sig[n_named].kind == parameter_kind::positional_or_keyword) ++n_named;
    position_keys.clear();
  }

  std::optional<std::size_t> signature_index(std::string_view name) const {
    for (std::size_t i = 0; i < sig.size(); ++i) {
      if (sig[i].name == name) return i;
    }
    return std::nullopt;
  }

  const parameter* variadic(parameter_kind kind) const {
    for (const parameter& p : sig) {
      if (p.kind == kind) return &p;
    }
    return nullptr;
  }

  // The scalar default of a parameter (A2: None and non-scalar defaults are not kept).
  const value* scalar_default(std::string_view name) const {
    for (const parameter& p : sig) {
      if (p.name == name && p.default_value && is_scalar(*p.default_value)) return &*p.default_value;
    }
    return nullptr;
  }

  std::string signature_text() const {
    std::string out = "(";
    for (std::size_t i = 0; i < sig.size(); ++i) {
      if (i) out += ", ";
      out += sig[i].name;
    }
    return out + ")";
  }

  //--- keys ---//

  std::size_t intern_name(std::string_view name) {
    for (std::size_t i = 0; i < keys.size(); ++i) {
      if (!keys[i].position && keys[i].name == name) return i;
    }
    keys.emplace_back().name = std::string(name);
    return keys.size() - 1;
  }

  std::optional<std::size_t> find_name(std::string_view name) const {
    for (std::size_t i = 0; i < keys.size(); ++i) {
      if (!keys[i].position && keys[i].name == name) return i;
    }
    return std::nullopt;
  }

  std::size_t position_key(std::size_t i) {
    while (position_keys.size() <= i) {
      const std::size_t p = position_keys.size();
      if (p < n_named) {
        position_keys.push_back(intern_name(sig[p].name));
        continue;
      }
      std::size_t k = keys.size();
      for (std::size_t j = 0; j < keys.size(); ++j) {
        if (keys[j].position == p) k = j;
      }
      if (k == keys.size()) keys.emplace_back().position = p;
      position_keys.push_back(k);
    }
    return position_keys[i];
  }

  //--- recording (rules A1-A7) ---//

  bool add_call(call_inputs&& in) {
    if (n_calls >= limit) return false;
    value_fields constants = split_kwargs(in);
    apply_if_missing(in);
    order_kwargs(in);
    check_names(in);
    const std::size_t leaves = count_leaves(in);
    summarise(in, constants);
    keep(std::move(in), std::move(constants), leaves);
    ++n_calls;
    return true;
  }

  // A3: constant scalar keyword values apart (those equal to their default dropped), None and scalars dropped.
  value_fields split_kwargs(call_inputs& in) const {
    value_fields constants;
    auto& kw = in.kwargs;
    std::size_t out = 0;
    for (std::size_t i = 0; i < kw.size(); ++i) {
      value& v = kw[i].second;
      if (v.is_none()) continue;
      if (is_scalar(v)) {
        const value* d = scalar_default(kw[i].first);
        if (d && !scalar_equal(v, *d)) constants.push_back(std::move(kw[i]));
        continue;
      }
      if (out != i) kw[out] = std::move(kw[i]);
      ++out;
    }
    kw.resize(out, {std::string(), value()});
    if (constants.size() > 1) sort_by_signature(constants);
    return constants;
  }

  void sort_by_signature(value_fields& fields) const {
    std::stable_sort(fields.begin(), fields.end(), [&](const auto& a, const auto& b) {
      return signature_index(a.first).value_or(sig.size()) < signature_index(b.first).value_or(sig.size());
    });
  }

  bool given_by_position(const call_inputs& in, std::string_view name) const {
    const auto i = signature_index(name);
    return i && *i < n_named && *i < in.args.size();
  }

  // A4: by name, inserted when absent (and not given by position); by position, replaced unconditionally.
  void apply_if_missing(call_inputs& in) const {
    for (const auto& [key, v] : if_missing) {
      if (key.is_position()) {
        apply_missing_position(in, key.position(), v);
        continue;
      }
      const std::string& name = key.name();
      const bool given = std::any_of(in.kwargs.begin(), in.kwargs.end(), [&](const auto& f) { return f.first == name; });
      if (given || given_by_position(in, name)) continue;
      if (!signature_index(name) && !variadic(parameter_kind::var_keyword)) {
        throw inference_error("hookscope: unexpected keyword argument '" + name +
                              "' provided as a value_if_missing input for a function that does not accept it; every "
                              "value_if_missing key must be in the observed signature " + signature_text());
      }
      in.kwargs.emplace_back(name, v);
    }
  }

  void apply_missing_position(call_inputs& in, std::size_t k, const value& v) const {
    if (k >= sig.size()) {
      throw inference_error("hookscope: value_if_missing position " + std::to_string(k) +
                            " is beyond the observed signature " + signature_text());
    }
    if (k >= in.args.size()) {
      throw inference_error("hookscope: value_if_missing position " + std::to_string(k) +
                            " is not given in this call: only " + std::to_string(in.args.size()) +
                            " positional arguments were given (signature " + signature_text() + ")");
    }
    in.args[k] = v;
  }

  // A5: keyword arguments in signature order, the others (absorbed by **kwargs) after them in call order.
  void order_kwargs(call_inputs& in) {
    kwarg_keys.clear();
    bool sorted = true;
    std::size_t previous = 0;
    for (const auto& [name, v] : in.kwargs) {
      const std::size_t k = signature_index(name).value_or(sig.size());
      sorted = sorted && k >= previous;
      previous = k;
    }
    if (!sorted) sort_by_signature(in.kwargs);
    for (const auto& [name, v] : in.kwargs) kwarg_keys.push_back(intern_name(name));
  }

  void check_names(const call_inputs& in) {
    const std::size_t stamp = n_calls + 1;
    for (std::size_t i = 0; i < in.args.size(); ++i) keys[position_key(i)].stamp = stamp;
    for (std::size_t j = 0; j < in.kwargs.size(); ++j) {
      key_summary& k = keys[kwarg_keys[j]];
      if (k.stamp == stamp) {
        throw inference_error("hookscope: argument '" + k.name +
                              "' is given twice in one call (by position and by name, or twice by name)");
      }
      k.stamp = stamp;
    }
  }

  static std::size_t count_leaves(const call_inputs& in) {
    std::size_t n = 0;
    for (const value& a : in.args) n += a.leaf_count();
    for (const auto& kw : in.kwargs) n += kw.second.leaf_count();
    return n;
  }

  void summarise(const call_inputs& in, const value_fields& constants) {
    const std::size_t call = n_calls;
    for (std::size_t i = 0; i < in.args.size(); ++i) keys[position_key(i)].observe(in.args[i], call);
    for (std::size_t j = 0; j < in.kwargs.size(); ++j) {
      key_summary& k = keys[kwarg_keys[j]];
      if (!k.first_kwarg_call) k.first_kwarg_call = call;
      k.observe(in.kwargs[j].second, call);
    }
    for (const auto& c : constants) ++keys[intern_name(c.first)].constant_present;
    for (const constant_set& s : constant_sets) {
      if (constants_equal(s.values, constants)) return;
    }
    if (constant_sets.size() < max_constant_sets) constant_sets.push_back({constants, call});
    // Beyond the bound, two distinct sets are already known: the error is reported from those (earlier) calls.
  }

  // A7 (first call with the strictly largest leaf count) and D1 (first call with the best's argument counts).
  void keep(call_inputs&& in, value_fields&& constants, std::size_t leaves) {
    const bool new_best = !best || leaves > best->leaf_count;
    const std::pair counts{in.args.size(), in.kwargs.size()};
    const bool new_counts =
        first_by_counts.size() < max_count_pairs &&
        std::none_of(first_by_counts.begin(), first_by_counts.end(), [&](const auto& e) { return e.first == counts; });
    if (!new_best && !new_counts && !options.keep_calls) return;
    auto call = std::make_shared<stored_call>(stored_call{n_calls, std::move(in), std::move(constants), leaves});
    if (new_best) best = call;
    if (new_counts) first_by_counts.emplace_back(counts, call);
    if (options.keep_calls) calls.push_back(std::move(call));
  }

  //--- alignment (rules B1-B5) ---//

  void require_calls(std::string_view what) const {
    if (n_calls == 0 || !best) {
      throw inference_error("hookscope: " + std::string(what) +
                            ": no call was recorded (num_obs() is 0); record calls with begin_recording() and "
                            "add_call() first");
    }
  }

  std::vector<slot> best_slots() {
    std::vector<slot> slots;
    const parameter* var_pos = variadic(parameter_kind::var_positional);
    const auto& args = best->inputs.args;
    for (std::size_t i = 0; i < args.size(); ++i) {
      slot s;
      s.key = position_key(i);
      s.positional = true;
      s.position = i;
      s.best_value = &args[i];
      if (i < n_named) {
        s.name = s.label_name = sig[i].name;
        s.signature_index = i;
        s.path = {sig[i].name};
      } else {
        s.name = s.label_name = "arg" + std::to_string(i);
        s.path = var_pos ? std::vector<std::string>{var_pos->name, std::to_string(i - n_named)}
                         : std::vector<std::string>{s.name};
      }
      slots.push_back(std::move(s));
    }
    for (const auto& [name, v] : best->inputs.kwargs) {
      slot s;
      s.key = intern_name(name);
      s.best_value = &v;
      s.name = s.label_name = name;
      s.path = {name};
      const auto index = signature_index(name);
      if (index && *index < n_named) s.signature_index = index;
      slots.push_back(std::move(s));
    }
    return slots;
  }

  std::string slot_text(const slot& s) const {
    if (s.positional) return "positional argument " + std::to_string(s.position) + " ('" + s.name + "')";
    return "named argument '" + s.name + "'";
  }

  std::string best_kwargs_text() const {
    std::string out;
    for (const auto& kw : best->inputs.kwargs) out += (out.empty() ? "" : ", ") + kw.first;
    return out.empty() ? "none" : out;
  }

  // Raises the error the reference raises first: it checks the calls in order, each for B1, B2 then B4.
  void check_alignment(const std::vector<slot>& slots) {
    struct failure {
      std::size_t call;
      int rule;
      std::string message;
    };
    std::optional<failure> first;
    const auto consider = [&](std::size_t call, int rule, auto make_message) {
      if (!first || call < first->call || (call == first->call && rule < first->rule)) {
        first = failure{call, rule, make_message()};
      }
    };
    for (const key_summary& k : keys) {  // B1
      if (!k.first_kwarg_call || k.position) continue;
      const bool in_best = std::any_of(best->inputs.kwargs.begin(), best->inputs.kwargs.end(),
                                       [&](const auto& kw) { return kw.first == k.name; });
      if (in_best) continue;
      consider(*k.first_kwarg_call, 0, [&] {
        return "hookscope: at least one call to the observed function must contain all the named arguments: call " +
               std::to_string(*k.first_kwarg_call) + " names '" + k.name + "' but the best candidate (call " +
               std::to_string(best->index) + ") names only: " + best_kwargs_text();
      });
    }
    for (const constant_set& s : constant_sets) {  // B2
      if (constants_equal(s.values, best->constants)) continue;
      consider(s.first_call, 1, [&] {
        return "hookscope: two calls were made with different constant values, " + constants_text(s.values) +
               " (call " + std::to_string(s.first_call) + ") != " + constants_text(best->constants) +
               " (best candidate, call " + std::to_string(best->index) + ")";
      });
    }
    for (const slot& s : slots) {  // B4
      const key_summary& k = keys[s.key];
      if (!k.count_conflict) continue;
      consider(k.count_conflict->first, 2, [&] {
        return "hookscope: " + slot_text(s) + " has " + std::to_string(k.count_conflict->second) +
               " flattened leaves in call " + std::to_string(k.count_conflict->first) + " but previously got " +
               std::to_string(k.leaf_count) + "; inference is impossible in that case";
      });
    }
    if (first) throw inference_error(first->message);
    for (const slot& s : slots) {  // B5
      const key_summary& k = keys[s.key];
      const std::size_t best_count = s.best_value->leaf_count();
      if (k.provided == 0 || k.leaf_count == best_count) continue;
      throw inference_error("hookscope: the calls do not align on the best candidate (call " +
                            std::to_string(best->index) + "): " + slot_text(s) + " has " +
                            std::to_string(k.leaf_count) + " flattened leaves in the calls that give it but " +
                            std::to_string(best_count) + " in the best candidate, which leaves it out");
    }
  }

  std::vector<flat_leaf> flatten_slots(const std::vector<slot>& slots) const {
    std::vector<flat_leaf> flat;
    for (std::size_t i = 0; i < slots.size(); ++i) {
      const key_summary& k = keys[slots[i].key];
      std::vector<std::string> path = slots[i].path;
      std::size_t j = 0;
      walk_paths(*slots[i].best_value, path, [&](const std::vector<std::string>& p) {
        flat.push_back({i, k.provided > 0 ? &k.leaves[j] : nullptr, p});
        ++j;
      });
    }
    return flat;
  }

  template <class F>
  static void walk_paths(const value& v, std::vector<std::string>& path, F&& f) {
    switch (v.type()) {
      case value::kind::tuple:
      case value::kind::list:
        for (std::size_t i = 0; i < v.items().size(); ++i) {
          path.push_back(std::to_string(i));
          walk_paths(v.items()[i], path, f);
          path.pop_back();
        }
        return;
      case value::kind::dict:
      case value::kind::structure:
        for (const auto& [name, field] : v.fields()) {
          path.push_back(name);
          walk_paths(field, path, f);
          path.pop_back();
        }
        return;
      default: f(path);
    }
  }

  //--- dynamic shapes (rules C1-C5) ---//

  shapes_result infer_dynamic_shapes(const dynamic_shapes_options& o) {
    require_calls("infer_dynamic_shapes");
    const std::vector<slot> slots = best_slots();
    check_alignment(slots);
    const std::vector<flat_leaf> flat = flatten_slots(slots);
    check_ranks(flat);

    std::vector<input_key> batch;
    for (const std::string& b : o.batch_dimension_for) batch.push_back(input_key::parse(b));
    const auto forced = [&](const slot& s) {
      return o.batch_dimension_for_all ||
             std::any_of(batch.begin(), batch.end(), [&](const input_key& k) { return matches(k, s); });
    };

    shapes_result r;
    std::vector<std::size_t> tensor_of(flat.size(), no_tensor);
    for (std::size_t f = 0; f < flat.size(); ++f) {
      const leaf_summary* l = flat[f].summary;
      if (!l || l->observed == 0) continue;
      tensor_of[f] = r.inputs.size();
      r.inputs.push_back(describe(flat[f], *l, forced(slots[flat[f].slot])));
    }
    name_dims(r.inputs, flat, tensor_of, slots, o);
    r.warnings = warnings(r.inputs, flat, tensor_of);
    r.root = build_root(slots, tensor_of);
    return r;
  }

  void check_ranks(const std::vector<flat_leaf>& flat) const {
    for (const flat_leaf& f : flat) {
      const leaf_summary* l = f.summary;
      if (!l || !l->rank_conflict_call) continue;
      std::string seen;
      for (const shape_t& s : l->shapes_seen) seen += (seen.empty() ? "" : ", ") + shape_text(s);
      throw inference_error("hookscope: all the shapes of '" + join_path(f.path) +
                            "' must have the same rank, but call " + std::to_string(*l->rank_conflict_call) +
                            " gave " + shape_text(l->rank_conflict_shape) + " after rank " +
                            std::to_string(l->rank) + "; shapes seen: " + seen +
                            (l->shapes_truncated ? ", ..." : ""));
    }
  }

  static bool matches(const input_key& k, const slot& s) {
    if (k.is_position()) return (s.positional && s.position == k.position()) || s.signature_index == k.position();
    return k.name() == s.name || (!s.path.empty() && k.name() == s.path.front());
  }

  static tensor_input describe(const flat_leaf& f, const leaf_summary& l, bool forced) {
    tensor_input t;
    t.name = join_path(f.path);
    t.path = f.path;
    t.dtype = l.dtype;
    t.rank = l.rank;
    t.shapes_seen = l.shapes_seen;
    t.shapes_seen_truncated = l.shapes_truncated;
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

  // C3. shared_name: the automatic algorithm, always; label: explicit, automatic or "DYNAMIC" per the options.
  void name_dims(std::vector<tensor_input>& inputs, const std::vector<flat_leaf>& flat,
                 const std::vector<std::size_t>& tensor_of, const std::vector<slot>& slots,
                 const dynamic_shapes_options& o) const {
    std::vector<std::pair<std::pair<std::uint64_t, std::uint64_t>, std::string>> names;  // sequence -> name
    const auto sequence = [&](std::size_t f, std::size_t d) {
      const leaf_summary& l = *flat[f].summary;
      return std::pair{l.dims[d].sequence_hash, l.observed};
    };
    const auto lookup = [&](std::pair<std::uint64_t, std::uint64_t> seq) -> const std::string* {
      for (const auto& [s, n] : names) {
        if (s == seq) return &n;
      }
      return nullptr;
    };
    for (int pass = 0; pass < 2; ++pass) {  // well-known names are seeded first
      for (std::size_t f = 0; f < flat.size(); ++f) {
        if (tensor_of[f] == no_tensor) continue;
        const slot& s = slots[flat[f].slot];
        for (dynamic_dim& dd : inputs[tensor_of[f]].dynamic_dims) {
          const auto known = known_label(s.label_name, dd.dim);
          if (known.has_value() != (pass == 0)) continue;
          const auto seq = sequence(f, dd.dim);
          const std::string* shared = lookup(seq);
          if (known) {
            dd.shared_name = std::string(*known);
          } else {
            dd.shared_name = shared ? *shared : s.label_name + "_dim_" + std::to_string(dd.dim);
          }
          if (!shared) names.emplace_back(seq, dd.shared_name);
        }
      }
    }
    for (std::size_t f = 0; f < flat.size(); ++f) {
      if (tensor_of[f] == no_tensor) continue;
      const slot& s = slots[flat[f].slot];
      for (dynamic_dim& dd : inputs[tensor_of[f]].dynamic_dims) dd.label = label_for(s, dd, o);
    }
  }

  static std::string label_for(const slot& s, const dynamic_dim& dd, const dynamic_shapes_options& o) {
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

  static std::vector<std::string> warnings(const std::vector<tensor_input>& inputs, const std::vector<flat_leaf>& flat,
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
                        std::to_string(max_distinct_values) + " distinct values: its opt counts the first ones only");
        }
      }
      if (t.shapes_seen_truncated) {
        out.push_back("hookscope: '" + t.name + "' took more than " + std::to_string(max_shapes_seen) +
                      " distinct shapes: shapes_seen lists the first ones only");
      }
    }
    return out;
  }

  //--- the torch.export structure (rule C4) ---//

  dynamic_shapes::node build_root(const std::vector<slot>& slots, const std::vector<std::size_t>& tensor_of) const {
    std::size_t next = 0;
    std::vector<dynamic_shapes::node> nodes;
    for (const slot& s : slots) nodes.push_back(build_node(*s.best_value, tensor_of, next));
    return arrange(slots, std::move(nodes));
  }

  static dynamic_shapes::node build_node(const value& v, const std::vector<std::size_t>& tensor_of, std::size_t& next) {
    using node = dynamic_shapes::node;
    node n;
    switch (v.type()) {
      case value::kind::tuple:
      case value::kind::list:
        n.type = v.type() == value::kind::tuple ? node::kind::tuple : node::kind::list;
        for (const value& item : v.items()) n.children.emplace_back("", build_node(item, tensor_of, next));
        return n;
      case value::kind::structure:  // a custom class is described by the list of its flattened children
        n.type = node::kind::list;
        for (const auto& field : v.fields()) n.children.emplace_back("", build_node(field.second, tensor_of, next));
        return n;
      case value::kind::dict:
        n.type = node::kind::dict;
        for (const auto& [name, field] : v.fields()) n.children.emplace_back(name, build_node(field, tensor_of, next));
        return n;
      default: {
        const std::size_t t = tensor_of[next++];
        if (t != no_tensor) n.type = node::kind::tensor, n.tensor = t;
        return n;
      }
    }
  }

  // A tuple when every argument is positional (and there is neither a constant nor a *args parameter); otherwise
  // a dict: positional arguments named by the signature, *args grouped in a tuple under its name, constants null,
  // extra keywords nested under the **kwargs name.
  dynamic_shapes::node arrange(const std::vector<slot>& slots, std::vector<dynamic_shapes::node> nodes) const {
    using node = dynamic_shapes::node;
    const parameter* var_pos = variadic(parameter_kind::var_positional);
    const std::size_t n_args = best->inputs.args.size();
    node root;
    if (best->inputs.kwargs.empty() && best->constants.empty() && !var_pos) {
      root.type = node::kind::tuple;
      for (node& n : nodes) root.children.emplace_back("", std::move(n));
      return root;
    }
    root.type = node::kind::dict;
    std::vector<std::pair<std::string, node>> entries;
    const std::size_t n_named_args = var_pos ? std::min(n_args, n_named) : n_args;
    for (std::size_t i = 0; i < n_named_args; ++i) entries.emplace_back(slots[i].name, std::move(nodes[i]));
    if (var_pos && n_args > 0) {
      node extra;
      extra.type = node::kind::tuple;
      for (std::size_t i = n_named_args; i < n_args; ++i) extra.children.emplace_back("", std::move(nodes[i]));
      entries.emplace_back(var_pos->name, std::move(extra));
    }
    for (std::size_t i = n_args; i < slots.size(); ++i) entries.emplace_back(slots[i].name, std::move(nodes[i]));
    for (const auto& c : best->constants) entries.emplace_back(c.first, node{});
    nest_extra_keywords(entries);
    root.children = std::move(entries);
    return root;
  }

  void nest_extra_keywords(std::vector<std::pair<std::string, dynamic_shapes::node>>& entries) const {
    const parameter* var_kw = variadic(parameter_kind::var_keyword);
    if (!var_kw) return;
    const auto extra = [&](const auto& e) { return !signature_index(e.first); };
    if (std::none_of(entries.begin(), entries.end(), extra)) return;
    if (std::any_of(entries.begin(), entries.end(), [&](const auto& e) { return e.first == var_kw->name; })) {
      throw inference_error("hookscope: keyword argument name collision: a keyword argument named '" + var_kw->name +
                            "' conflicts with the **" + var_kw->name +
                            " parameter collecting the extra keyword arguments; passing it is not supported");
    }
    dynamic_shapes::node nested;
    nested.type = dynamic_shapes::node::kind::dict;
    std::vector<std::pair<std::string, dynamic_shapes::node>> kept;
    for (auto& e : entries) {
      if (extra(e)) {
        nested.children.push_back(std::move(e));
      } else {
        kept.push_back(std::move(e));
      }
    }
    kept.emplace_back(var_kw->name, std::move(nested));
    entries = std::move(kept);
  }

  //--- representative arguments (rules D1-D3) ---//

  // The value a call gives to a slot of the best candidate (B3: extra positional arguments count as keywords).
  const value* find_value(const stored_call& c, const slot& s) {
    if (s.positional) return s.position < c.inputs.args.size() ? &c.inputs.args[s.position] : nullptr;
    for (const auto& kw : c.inputs.kwargs) {
      if (kw.first == s.name) return &kw.second;
    }
    for (std::size_t i = best->inputs.args.size(); i < c.inputs.args.size(); ++i) {
      if (position_key(i) == s.key) return &c.inputs.args[i];
    }
    return nullptr;
  }

  // The call's leaves aligned on the best candidate, none where it leaves an argument out. `strict`: a leaf count
  // that differs from the earlier calls' is an error (B4) rather than placeholders (info() never throws).
  std::vector<value> align(const stored_call& c, const std::vector<slot>& slots, bool strict) {
    std::vector<value> out;
    for (const slot& s : slots) {
      const value* v = find_value(c, s);
      const std::size_t expected = s.best_value->leaf_count();
      if (v && truthy(*v)) {
        const std::size_t n = v->leaf_count();
        const key_summary& k = keys[s.key];
        if (n == expected) {
          for_each_leaf(*v, [&](const value& leaf) { out.push_back(leaf); });
          continue;
        }
        if (strict) {
          throw inference_error("hookscope: " + slot_text(s) + " has " + std::to_string(n) +
                                " flattened leaves but previously got " +
                                std::to_string(k.provided ? k.leaf_count : expected) +
                                "; inference is impossible in that case");
        }
      }
      out.resize(out.size() + expected);
    }
    return out;
  }

  value infer_arguments(const argument_options& o) {
    require_calls("infer_arguments");
    const std::vector<slot> slots = best_slots();
    check_alignment(slots);
    const call_ptr candidate = pick_candidate(o);
    std::vector<value> leaves = align(*candidate, slots, true);
    fill_placeholders(leaves, flatten_slots(slots));
    if (o.flat) return value::list(std::move(leaves));
    return arrange_arguments(slots, std::move(leaves), o.as_args_kwargs);
  }

  call_ptr pick_candidate(const argument_options& o) {
    if (const auto* index = std::get_if<std::size_t>(&o.candidate)) {
      if (!options.keep_calls) {
        throw inference_error("hookscope: infer_arguments: calls are not kept (engine_options::keep_calls is false), "
                              "so no call can be chosen by index");
      }
      if (*index >= calls.size()) {
        throw inference_error("hookscope: infer_arguments: no stored call at index " + std::to_string(*index) +
                              " (" + std::to_string(calls.size()) + " stored)");
      }
      return calls[*index];
    }
    if (const auto* inputs = std::get_if<call_inputs>(&o.candidate)) return new_candidate(*inputs);
    const std::pair counts{best->inputs.args.size(), best->inputs.kwargs.size()};
    for (const auto& [c, call] : first_by_counts) {
      if (c == counts) return call;
    }
    return best;  // more distinct argument counts than kept: the best candidate has them by definition
  }

  // D1: new inputs; keywords with a scalar default become constants, which must match the best candidate's (B2).
  call_ptr new_candidate(const call_inputs& inputs) const {
    auto c = std::make_shared<stored_call>();
    c->index = n_calls;
    c->inputs.args = inputs.args;
    for (const auto& kw : inputs.kwargs) {
      if (scalar_default(kw.first)) {
        c->constants.push_back(kw);
      } else {
        c->inputs.kwargs.push_back(kw);
      }
    }
    sort_by_signature(c->constants);
    if (!constants_equal(c->constants, best->constants)) {
      throw inference_error("hookscope: two calls were made with different constant values, " +
                            constants_text(c->constants) + " (new inputs) != " + constants_text(best->constants) +
                            " (best candidate, call " + std::to_string(best->index) + ")");
    }
    return c;
  }

  // D2: a placeholder from the last call with a tensor there: reused when empty, zeros of its shape when no dim
  // varies, else its highest varying dim set to 0 (batch forcing plays no part here).
  void fill_placeholders(std::vector<value>& leaves, const std::vector<flat_leaf>& flat) const {
    for (std::size_t f = 0; f < leaves.size(); ++f) {
      if (!leaves[f].is_none()) continue;
      const leaf_summary* l = flat[f].summary;
      if (l && l->has_tensor) {
        if (l->rank_conflict_call) check_ranks({flat[f]});
        tensor_spec t = l->last_tensor;
        std::optional<std::size_t> highest;
        for (std::size_t d = 0; d < l->rank; ++d) {
          if (l->dims[d].varies) highest = d;
        }
        if (t.numel() != 0 && highest) t.shape[*highest] = 0;
        leaves[f] = value(std::move(t));
      } else if (l && l->last_other) {
        leaves[f] = *l->last_other;
      } else {
        throw inference_error("hookscope: there is no tensor at position " + std::to_string(f) + " ('" +
                              join_path(flat[f].path) +
                              "') in any flattened inputs, so no placeholder can be built; give one with "
                              "value_if_missing");
      }
    }
  }

  static value rebuild(const value& shape_of, const std::vector<value>& leaves, std::size_t& next) {
    switch (shape_of.type()) {
      case value::kind::tuple:
      case value::kind::list: {
        std::vector<value> items;
        for (const value& item : shape_of.items()) items.push_back(rebuild(item, leaves, next));
        return shape_of.type() == value::kind::tuple ? value::tuple(std::move(items)) : value::list(std::move(items));
      }
      case value::kind::dict:
      case value::kind::structure: {
        value_fields fields;
        for (const auto& [name, field] : shape_of.fields()) fields.emplace_back(name, rebuild(field, leaves, next));
        return shape_of.type() == value::kind::dict ? value::dict(std::move(fields))
                                                    : value::structure(shape_of.struct_name(), std::move(fields));
      }
      default: return leaves[next++];
    }
  }

  // D3: a tuple without keywords, a dict without positional arguments, else a dict renamed by the signature.
  value arrange_arguments(const std::vector<slot>& slots, std::vector<value> leaves, bool as_args_kwargs) const {
    std::size_t next = 0;
    std::vector<value> args;
    value_fields kwargs;
    for (const slot& s : slots) {
      value v = rebuild(*s.best_value, leaves, next);
      if (s.positional) {
        args.push_back(std::move(v));
      } else {
        kwargs.emplace_back(s.name, std::move(v));
      }
    }
    for (const auto& c : best->constants) kwargs.push_back(c);
    if (as_args_kwargs) return value::tuple({value::tuple(std::move(args)), value::dict(std::move(kwargs))});
    if (kwargs.empty()) return value::tuple(std::move(args));
    if (args.empty()) return value::dict(std::move(kwargs));
    if (variadic(parameter_kind::var_positional)) {
      throw inference_error("hookscope: cannot return arguments as a single tuple or a single dictionary because of "
                            "'*args' in the function signature; set argument_options::as_args_kwargs = true");
    }
    value_fields named;
    for (std::size_t i = 0; i < args.size(); ++i) named.emplace_back(slots[i].name, std::move(args[i]));
    for (auto& kw : kwargs) named.push_back(std::move(kw));
    return value::dict(std::move(named));
  }

  //--- info, remove_inputs ---//

  engine_info info() {
    engine_info out;
    out.parameters = sig;
    if (!best) return out;
    std::vector<call_ptr> listed = options.keep_calls ? calls : std::vector<call_ptr>{best};
    const std::vector<slot> slots = best_slots();
    for (std::size_t i = 0; i < listed.size(); ++i) {
      if (listed[i] == best) out.best_candidate = i;
      call_info c;
      c.inputs = listed[i]->inputs;
      c.constants = listed[i]->constants;
      c.leaf_count = listed[i]->leaf_count;
      c.aligned = align(*listed[i], slots, false);
      out.calls.push_back(std::move(c));
    }
    return out;
  }

  std::size_t remove_inputs(const std::vector<std::string>& names);
  void remove_from_calls(const std::vector<std::size_t>& positions, const std::vector<std::string>& removed);
  std::vector<call_ptr> unique_calls() const;
};

//=== remove_inputs (rule D4) ===//

std::vector<call_ptr> shape_engine::impl::unique_calls() const {
  std::vector<call_ptr> out = calls;
  if (best) out.push_back(best);
  for (const auto& e : first_by_counts) out.push_back(e.second);
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

std::size_t shape_engine::impl::remove_inputs(const std::vector<std::string>& names) {
  if (n_calls == 0) throw inference_error("hookscope: remove_inputs: no input was captured");
  std::vector<std::size_t> positions;  // of named positional parameters, descending
  std::vector<std::string> removed;    // parameter / keyword names
  for (const std::string& text : names) {
    const input_key k = input_key::parse(text);
    const std::optional<std::size_t> index = k.is_position() ? std::optional(k.position()) : signature_index(text);
    if (index && *index < sig.size() && sig[*index].kind != parameter_kind::positional_or_keyword) {
      throw inference_error("hookscope: remove_inputs: cannot remove the variadic parameter '" + sig[*index].name + "'");
    }
    if (index && *index < n_named) positions.push_back(*index);
    if (!k.is_position()) removed.push_back(text);
    if (k.is_position() && index && *index < sig.size()) removed.push_back(sig[*index].name);
  }
  std::sort(positions.begin(), positions.end(), std::greater<>());
  positions.erase(std::unique(positions.begin(), positions.end()), positions.end());
  std::size_t count = 0;
  for (const std::string& name : removed) {
    const auto k = find_name(name);
    if (k && (keys[*k].present || keys[*k].constant_present)) {
      count += keys[*k].present + keys[*k].constant_present;
      keys[*k] = key_summary{};  // forgotten; the entry stays so that other keys keep their ids
      keys[*k].name = "\x01removed";  // never a real parameter name: no later call maps to it
    }
  }
  remove_from_calls(positions, removed);
  for (const std::size_t p : positions) {  // later positions shift down, as the positional arguments do
    for (key_summary& k : keys) {
      if (k.position && *k.position > p) --*k.position;
    }
  }
  std::erase_if(if_missing, [&](const auto& e) {
    const std::string text = e.first.to_string();
    return std::find(removed.begin(), removed.end(), text) != removed.end() ||
           (e.first.is_position() && std::find(positions.begin(), positions.end(), e.first.position()) != positions.end());
  });
  std::erase_if(sig, [&](const parameter& p) { return std::find(removed.begin(), removed.end(), p.name) != removed.end(); });
  on_signature();
  for (auto& s : constant_sets) {
    std::erase_if(s.values, [&](const auto& c) { return std::find(removed.begin(), removed.end(), c.first) != removed.end(); });
  }
  for (std::size_t i = 0; i < constant_sets.size(); ++i) {  // sets that became equal merge, the earliest first call kept
    for (std::size_t j = i + 1; j < constant_sets.size();) {
      if (!constants_equal(constant_sets[i].values, constant_sets[j].values)) {
        ++j;
        continue;
      }
      constant_sets[i].first_call = std::min(constant_sets[i].first_call, constant_sets[j].first_call);
      constant_sets.erase(constant_sets.begin() + static_cast<std::ptrdiff_t>(j));
    }
  }
  return count;
}

void shape_engine::impl::remove_from_calls(const std::vector<std::size_t>& positions,
                                           const std::vector<std::string>& removed) {
  const auto is_removed = [&](const auto& f) { return std::find(removed.begin(), removed.end(), f.first) != removed.end(); };
  for (const call_ptr& c : unique_calls()) {
    for (const std::size_t p : positions) {
      if (p < c->inputs.args.size()) c->inputs.args.erase(c->inputs.args.begin() + static_cast<std::ptrdiff_t>(p));
    }
    std::erase_if(c->inputs.kwargs, is_removed);
    std::erase_if(c->constants, is_removed);
    c->leaf_count = count_leaves(c->inputs);
  }
  // The first call of each argument count: recounted from the kept calls (the earliest wins a shared count).
  std::vector<std::pair<std::pair<std::size_t, std::size_t>, call_ptr>> recount;
  for (const auto& [counts, c] : first_by_counts) {
    const std::pair now{c->inputs.args.size(), c->inputs.kwargs.size()};
    auto it = std::find_if(recount.begin(), recount.end(), [&](const auto& e) { return e.first == now; });
    if (it == recount.end()) {
      recount.emplace_back(now, c);
    } else if (c->index < it->second->index) {
      it->second = c;
    }
  }
  first_by_counts = std::move(recount);
}

//=== shape_engine ===//

shape_engine::shape_engine(engine_options options) : impl_(std::make_unique<impl>(options)) {}
shape_engine::~shape_engine() = default;
shape_engine::shape_engine(shape_engine&&) noexcept = default;
shape_engine& shape_engine::operator=(shape_engine&&) noexcept = default;

void shape_engine::set_parameters(parameter_list sig) {
  if (impl_->sig_set) {
    if (sig == impl_->sig) return;
    throw inference_error("hookscope: set_signature: the signature is already set to " + impl_->signature_text() +
                          " and cannot change");
  }
  if (impl_->n_calls > 0) {
    throw inference_error("hookscope: set_signature: set the signature before adding calls");
  }
  impl_->sig = std::move(sig);
  impl_->sig_set = true;
  impl_->on_signature();
}

const parameter_list& shape_engine::parameters() const noexcept { return impl_->sig; }

void shape_engine::value_if_missing(input_key key, value v) {
  for (auto& e : impl_->if_missing) {
    if (e.first == key) {
      e.second = std::move(v);
      return;
    }
  }
  impl_->if_missing.emplace_back(std::move(key), std::move(v));
}

void shape_engine::begin_recording() {
  const std::size_t n = impl_->options.store_n_calls;
  impl_->limit = n > unlimited - impl_->n_calls ? unlimited : impl_->n_calls + n;
}

bool shape_engine::add_call(call_inputs inputs) { return impl_->add_call(std::move(inputs)); }

std::size_t shape_engine::num_obs() const noexcept { return impl_->n_calls; }

dynamic_shapes shape_engine::infer_dynamic_shapes(const dynamic_shapes_options& options) const {
  shapes_result r = impl_->infer_dynamic_shapes(options);
  dynamic_shapes ds;
  ds.root_ = std::move(r.root);
  ds.inputs_ = std::move(r.inputs);
  ds.warnings_ = std::move(r.warnings);
  return ds;
}

value shape_engine::infer_arguments(const argument_options& options) const { return impl_->infer_arguments(options); }

std::size_t shape_engine::remove_inputs(const std::vector<std::string>& names) { return impl_->remove_inputs(names); }

engine_info shape_engine::info() const { return impl_->info(); }

HOOKSCOPE_DETAIL_END_NAMESPACE
