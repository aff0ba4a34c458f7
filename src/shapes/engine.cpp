// shape_engine (hookscope/shapes.hpp): a thin facade over the recorded state (engine_state.hpp). Recording forwards to
// recording.cpp and remove_inputs.cpp; inference reads the state through a const reference and changes nothing.
// Also input_key.
#include "call_structures.hpp"
#include "engine_state.hpp"

#include <algorithm>
#include <atomic>
#include <charconv>

HOOKSCOPE_DETAIL_BEGIN_NAMESPACE

//=== input_key ===//

input_key::input_key(int position) : key_(std::size_t{0}) {
  if (position < 0) {
    throw inference_error("input_key: position " + std::to_string(position) + " is negative");
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

bool is_dim_label(std::string_view label) noexcept {
  if (label.empty() || (label[0] >= '0' && label[0] <= '9')) return false;
  for (const char c : label) {
    if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_')) return false;
  }
  return true;
}

//=== shape_engine ===//

namespace {

// A structure's id: its engine's serial (high half) and its index (low half), so that no engine takes another's.
static_assert(sizeof(std::size_t) >= 8, "hookscope: call_structure ids need a 64-bit std::size_t");
constexpr unsigned structure_index_bits = 32;
std::atomic<std::uint32_t> next_engine_serial{1};

// The result of a call, as the one argument of a call of `(result)`.
call_inputs as_result_call(value result) {
  call_inputs r;
  r.kwargs.emplace_back("result", std::move(result));
  return r;
}

}  // namespace

struct shape_engine::impl {
  detail::shapes::recorded_state state;
  // The results of the kept calls, as calls of a function `(result)`: outputs() is inferred from them as inputs are.
  detail::shapes::recorded_state results;
  // Call structures (add_structure): their parts prepared for `state` and `results`, valid while `epoch` is theirs.
  struct structure {
    detail::shapes::structure_part inputs;
    std::optional<detail::shapes::structure_part> result;
  };
  std::vector<std::unique_ptr<structure>> structures;  // by index; null once removed
  std::unique_ptr<structure>& find(call_structure id, const char* who);
  std::uint64_t epoch = 0;  // changes with everything that changes how a call is prepared or renumbers the keys
  std::uint32_t serial = next_engine_serial.fetch_add(1, std::memory_order_relaxed);
  explicit impl(engine_options o) : state(o), results(engine_options{.store_n_calls = unlimited, .keep_calls = false}) {
    detail::shapes::set_parameters(results, {{"result"}});
    detail::shapes::begin_recording(results);
  }
};

namespace {

// The options, once the library's rules have checked them (a recording keeps at least one call).
engine_options checked(engine_options options) {
  check_options(options);
  return options;
}

}  // namespace

shape_engine::shape_engine(engine_options options) : impl_(std::make_unique<impl>(checked(options))) {}
shape_engine::~shape_engine() = default;
shape_engine::shape_engine(shape_engine&&) noexcept = default;
shape_engine& shape_engine::operator=(shape_engine&&) noexcept = default;

void shape_engine::set_parameters(parameter_list parameters) {
  ++impl_->epoch;
  detail::shapes::set_parameters(impl_->state, std::move(parameters));
}

const parameter_list& shape_engine::parameters() const noexcept { return impl_->state.sig; }

void shape_engine::value_if_missing(input_key key, value v) {
  ++impl_->epoch;
  detail::shapes::value_if_missing(impl_->state, std::move(key), std::move(v));
}

void shape_engine::begin_recording() { detail::shapes::begin_recording(impl_->state); }

bool shape_engine::add_call(call_inputs inputs) { return detail::shapes::add_call(impl_->state, std::move(inputs)); }

bool shape_engine::add_call(call_inputs inputs, value result) {
  if (!detail::shapes::add_call(impl_->state, std::move(inputs))) return false;
  detail::shapes::add_call(impl_->results, as_result_call(std::move(result)));
  return true;
}

call_structure shape_engine::add_structure(const call_inputs& inputs, const value* result) {
  const std::size_t index = impl_->structures.size();
  if (index >> structure_index_bits) throw limit_error("add_structure: too many call structures");
  auto& s = *impl_->structures.emplace_back(
      std::make_unique<impl::structure>(impl::structure{detail::shapes::structure_part(inputs), std::nullopt}));
  if (result) s.result.emplace(as_result_call(*result));
  return {(std::size_t{impl_->serial} << structure_index_bits) | index,
          s.inputs.sizes() + (s.result ? s.result->sizes() : 0)};
}

// The structure `structure` names, or argument_error naming `who`. A removed structure's slot stays empty (its
// index is never given again), so that an id never names another structure.
std::unique_ptr<shape_engine::impl::structure>& shape_engine::impl::find(call_structure structure, const char* who) {
  const std::size_t index = structure.id & ((std::size_t{1} << structure_index_bits) - 1);
  if ((structure.id >> structure_index_bits) != serial || index >= structures.size() || !structures[index]) {
    throw argument_error(std::string(who) + ": call structure " + std::to_string(structure.id) +
                         " is not one of this engine's (add_structure), or was removed");
  }
  return structures[index];
}

void shape_engine::remove_structure(call_structure structure) { impl_->find(structure, "remove_structure").reset(); }

bool shape_engine::add_call(call_structure structure, std::span<const std::int64_t> sizes) {
  impl::structure& s = *impl_->find(structure, "add_call");
  const std::size_t inputs = s.inputs.sizes();
  const std::size_t expected = inputs + (s.result ? s.result->sizes() : 0);
  if (sizes.size() != expected) {
    throw argument_error("add_call: " + std::to_string(sizes.size()) + " sizes given for a call structure of " +
                         std::to_string(expected) + " sizes");
  }
  for (std::size_t i = 0; i < sizes.size(); ++i) {
    if (sizes[i] < 0) {
      throw inference_error("add_call: size " + std::to_string(i) + " is negative (" + std::to_string(sizes[i]) +
                            "): a dimension's size is 0 or more");
    }
  }
  if (!s.inputs.add_call(impl_->state, sizes.first(inputs), impl_->epoch)) return false;
  if (s.result) s.result->add_call(impl_->results, sizes.subspan(inputs), impl_->epoch);
  return true;
}

std::size_t shape_engine::num_obs() const noexcept { return impl_->state.n_calls; }

std::size_t shape_engine::remove_inputs(const std::vector<std::string>& names) {
  ++impl_->epoch;
  return detail::shapes::remove_inputs(impl_->state, names);
}

namespace {

// An option naming an input no call gave and no parameter has (a typo) changes nothing: a warning says so, with the
// names there are. Positions are matched against the calls and the signature by the inference itself.
void warn_unknown_inputs(const detail::shapes::recorded_state& s, const dynamic_shapes_options& o,
                         const std::vector<tensor_input>& inputs, std::vector<inference_warning>& warnings) {
  const auto known = [&](const input_key& k) {
    return k.is_position() || s.find_name(k.name()) || s.signature_index(k.name());
  };
  std::string names;
  for (const detail::shapes::key_summary& k : s.keys) {
    if (!k.position) names += (names.empty() ? "" : ", ") + k.name;
  }
  const auto unknown = [&](const std::string& name, std::string_view asked) {
    warnings.push_back(inference_warning{
        .type = inference_warning::kind::unknown_input,
        .input = name,
        .sentence = "'" + name + "' (" + std::string(asked) + ") is no input of the calls (" +
                    (names.empty() ? std::string("none has a name") : names) + "): it changes nothing"});
  };
  for (const std::string& name : o.batch_dimension_for) {
    if (!known(input_key::parse(name))) unknown(name, "given a batch dimension");
  }
  for (std::size_t i = 0; i < o.dim_labels.size(); ++i) {
    const dim_label& l = o.dim_labels[i];
    const std::string key = l.input.to_string();
    if (!known(l.input)) {
      unknown(key, "given the label '" + l.label + "'");
      continue;
    }
    // The first label given to a dimension is the one taken (label_for): a second one is dropped.
    const auto same = [&](const dim_label& m) { return m.input.to_string() == key && m.dim == l.dim; };
    if (const auto first =
            std::find_if(o.dim_labels.begin(), o.dim_labels.begin() + static_cast<std::ptrdiff_t>(i), same);
        first != o.dim_labels.begin() + static_cast<std::ptrdiff_t>(i)) {
      if (first->label != l.label) {
        warnings.push_back(inference_warning{.type = inference_warning::kind::label_given_twice,
                                             .input = key,
                                             .dim = l.dim,
                                             .sentence = "dimension " + std::to_string(l.dim) + " of '" + key +
                                                         "' is given the label '" + first->label + "' and then '" +
                                                         l.label + "': the first is kept"});
      }
      continue;
    }
    // A label goes to a dynamic dimension only: one of a static dimension or past the rank names nothing.
    const bool used = std::any_of(inputs.begin(), inputs.end(), [&](const tensor_input& t) {
      return std::any_of(t.dynamic_dims.begin(), t.dynamic_dims.end(),
                         [&](const dynamic_dim& d) { return d.dim == l.dim && d.label == l.label; });
    });
    if (!used) {
      // Entries by position win over those by name for one argument (label_for): that may be why, too.
      const bool both_kinds = std::any_of(o.dim_labels.begin(), o.dim_labels.end(), [&](const dim_label& m) {
        return m.input.is_position() != l.input.is_position();
      });
      warnings.push_back(inference_warning{
          .type = inference_warning::kind::label_names_no_dim,
          .input = key,
          .dim = l.dim,
          .sentence = "the label '" + l.label + "' names no dimension: dimension " + std::to_string(l.dim) + " of '" +
                      key + "' is static, or past the rank, in every call" +
                      (both_kinds ? " (or the argument's entries by position win over those by name)" : "") +
                      ": it changes nothing"});
    }
  }
}

}  // namespace

dynamic_shapes shape_engine::infer_dynamic_shapes(const dynamic_shapes_options& options) const {
  check_options(options);
  const detail::shapes::recorded_state& state = impl_->state;
  detail::shapes::shapes_result r = detail::shapes::infer_dynamic_shapes(state, options);
  warn_unknown_inputs(state, options, r.inputs, r.warnings);
  const auto sequences = r.sequences;
  dynamic_shapes ds;
  ds.root_ = std::move(r.root);
  ds.inputs_ = std::move(r.inputs);
  ds.warnings_ = std::move(r.warnings);
  ds.relations_ = std::move(r.relations);
  ds.profiles_ = std::move(r.profiles);
  if (impl_->results.n_calls > 0 && impl_->results.best) {
    dynamic_shapes_options ro;
    ro.dim_names = options.dim_names;
    ro.known_dim_names = {};
    try {
      detail::shapes::shapes_result out = detail::shapes::infer_dynamic_shapes(impl_->results, ro);
      // A result dim with the same values as an input dim in every call (every kept call gave a result, so the
      // sequences of dims given in every call are over the same calls) takes that input dim's name: the exported graph's outputs then say
      // which input sizes they follow.
      const bool same_calls = impl_->results.n_calls == state.n_calls;
      for (std::size_t o = 0; same_calls && o < out.inputs.size(); ++o) {
        for (std::size_t d = 0; d < out.inputs[o].dynamic_dims.size(); ++d) {
          dynamic_dim& od = out.inputs[o].dynamic_dims[d];
          for (std::size_t i = 0; i < ds.inputs_.size() && od.shared_name.rfind("result", 0) == 0; ++i) {
            for (std::size_t j = 0; j < ds.inputs_[i].dynamic_dims.size(); ++j) {
              // Both in every call: equal sequences over different calls are not equal dims (C3).
              if (sequences[i][j] != out.sequences[o][d] || sequences[i][j].second != state.n_calls) continue;
              od.shared_name = ds.inputs_[i].dynamic_dims[j].shared_name;
              if (od.label != unnamed_dim_label) od.label = ds.inputs_[i].dynamic_dims[j].label;
              break;
            }
          }
        }
      }
      ds.outputs_ = std::move(out.inputs);
    } catch (const inference_error&) {
      // Results that do not align (a list whose length follows the batch, ...): no outputs, as for void results.
    }
  }
  return ds;
}

inferred_arguments shape_engine::infer_arguments(const argument_options& options) const {
  check_options(options);
  return detail::shapes::infer_arguments(impl_->state, options);
}

std::string shape_engine::to_summary_json(std::string_view function) const {
  if (impl_->state.options.store_n_calls != unlimited) {
    throw inference_error(
        "to_summary_json: only an engine recording every call has a summary "
        "(engine_options::store_n_calls = hookscope::unlimited)");
  }
  return detail::shapes::to_summary_json(impl_->state, impl_->results, function);
}

shape_engine shape_engine::from_summary_json(std::string_view summary, std::string* function) {
  shape_engine e({.store_n_calls = unlimited, .keep_calls = false});
  std::string name;
  detail::shapes::from_summary_json(summary, e.impl_->state, e.impl_->results, name);
  if (function) *function = std::move(name);
  return e;
}

void shape_engine::merge(const shape_engine& later) {
  ++impl_->epoch;
  detail::shapes::merge(impl_->state, later.impl_->state);
  detail::shapes::merge(impl_->results, later.impl_->results);
}

engine_info shape_engine::info() const {
  const detail::shapes::recorded_state& state = impl_->state;
  engine_info out = detail::shapes::info(state);
  out.calls_ignored = state.n_ignored;
  out.calls_seen = state.n_calls + state.n_ignored;
  return out;
}

HOOKSCOPE_DETAIL_END_NAMESPACE
