// hookscope/input_observer.hpp — the C++ InputObserver: records the calls of an observable for a scope, then infers
// the dynamic shapes and the representative arguments a model exporter needs.
//
// ```cpp
// hookscope::input_observer obs;
// obs.value_if_missing("pixel_values", hookscope::tensor_spec{{0, 3, 896, 896}, hookscope::dtype::float16});
// {
//   auto rec = obs.record(Model::forward_observable{});  // any observable (function or method)
//   generate(model, prompt);                             // prefill + decode calls are captured
// }
// auto ds = obs.infer_dynamic_shapes({.batch_dimension_for = {"input_ids", "attention_mask"}});
// std::cout << ds.to_json();                              // torch.export-style JSON
// ```
//
// It joins the recorder's capture to the shape engine (shapes.hpp), which does the inference.
#pragma once

#include "hookscope/capture.hpp"
#include "hookscope/config.hpp"
#include "hookscope/detail/call_pairing.hpp"
#include "hookscope/detail/recording_target.hpp"
#include "hookscope/observable.hpp"
#include "hookscope/records.hpp"
#include "hookscope/shapes.hpp"
#include "hookscope/subscription.hpp"
#include "hookscope/value.hpp"

#include <algorithm>
#include <cstddef>
#include <memory>
#include <mutex>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

HOOKSCOPE_DETAIL_BEGIN_NAMESPACE

struct input_observer_options {
  std::size_t store_n_calls = 3;  ///< calls kept per recording, as the reference (`hookscope::unlimited`: all)
  bool global = false;            ///< record calls from every thread, not only the current context's
};

/// Records the calls of observables into a shape_engine, for as many recordings as you like (each keeps
/// store_n_calls more calls, like re-entering the reference's `with observer(model):` block).
///
/// C++ calls have no positional arguments: every parameter is recorded as a keyword argument named by the
/// annotation, so the inferred structures are dicts keyed by parameter name. Scalar arguments (which have no
/// default in a C++ signature) are dropped, as the reference drops scalar keyword arguments without a scalar default.
class input_observer {
 public:
  explicit input_observer(input_observer_options options = {}) : state_(std::make_shared<state>(options)) {}

  /// A value for an argument a call may leave out (an empty optional, a null pointer): by parameter name, or
  /// by position in the annotation (the position names the parameter). Checked against the signature when a
  /// recording starts: an unknown name or an out-of-range position throws inference_error then.
  template <class T>
  void value_if_missing(input_key key, const T& v) {
    const std::lock_guard lock(state_->mutex);
    state_->missing.emplace_back(std::move(key), capture_value(v));
    apply_missing_if_known();
  }

  /// One recording: its callbacks live as long as it does. Movable; `stop()` ends it early.
  class recording {
   public:
    recording(recording&&) noexcept = default;
    recording& operator=(recording&&) noexcept = default;
    ~recording() = default;
    void stop() noexcept {
      pre_.reset();
      post_.reset();
    }

   private:
    friend class input_observer;
    recording(subscription pre, subscription post) noexcept : pre_(std::move(pre)), post_(std::move(post)) {}
    subscription pre_;
    subscription post_;
  };

  /// Starts recording `target` (`passes::lower`, `Model::forward_observable{}`, a live observable_function):
  /// the next store_n_calls calls it makes in this context (or anywhere, with options.global) are captured, each
  /// as it returns (or throws).
  template <class Observable>
  [[nodiscard]] recording record(Observable&& target) {
    using context_type = typename std::remove_cvref_t<Observable>::context_type;
    const function_info& info = detail::function_info_of(target);
    {
      const std::lock_guard lock(state_->mutex);
      adopt_signature(info);
      state_->engine.begin_recording();
    }
    // The callbacks share the state, so a recording that outlives its observer stays safe.
    auto on_pre = [s = state_](const context_type& ctx) {
      s->pairing->begin(ctx, detail::capture_args(ctx, capture_options()));
    };
    auto on_post = [s = state_](const context_type& ctx) {
      if (auto call = s->pairing->end(ctx)) add_call(*s, std::move(*call));
    };
    auto& observers = target.observers;
    const bool global = state_->options.global;
    subscription pre = global ? observers.pre.add_global(std::move(on_pre)) : observers.pre.add(std::move(on_pre));
    return recording(std::move(pre),
                     global ? observers.post.add_global(std::move(on_post)) : observers.post.add(std::move(on_post)));
  }

  /// Number of calls recorded.
  std::size_t num_obs() const {
    const std::lock_guard lock(state_->mutex);
    return state_->engine.num_obs();
  }
  /// The dynamic shapes of the recorded calls; inference_error when they allow none (see shapes.hpp).
  dynamic_shapes infer_dynamic_shapes(const dynamic_shapes_options& options = {}) const {
    const std::lock_guard lock(state_->mutex);
    return state_->engine.infer_dynamic_shapes(options);
  }
  /// Representative arguments, missing inputs filled with placeholders.
  value infer_arguments(const argument_options& options = {}) const {
    const std::lock_guard lock(state_->mutex);
    return state_->engine.infer_arguments(options).arguments;
  }
  /// Forgets these inputs in every recorded call; returns how many were removed.
  std::size_t remove_inputs(const std::vector<std::string>& names) {
    const std::lock_guard lock(state_->mutex);
    return state_->engine.remove_inputs(names);
  }
  /// Every recorded call, the best candidate and the alignment.
  engine_info info() const {
    const std::lock_guard lock(state_->mutex);
    return state_->engine.info();
  }

 private:
  struct state {
    explicit state(input_observer_options o) : options(o), engine(engine_options{.store_n_calls = o.store_n_calls}) {}
    input_observer_options options;
    mutable std::mutex mutex;
    shape_engine engine;
    const function_info* function = nullptr;
    std::unique_ptr<detail::call_pairing> pairing;     // made with the signature
    std::vector<std::pair<input_key, value>> missing;  // until the signature is known
  };

  static void add_call(state& s, call_record call) {
    const std::lock_guard lock(s.mutex);
    (void)s.engine.add_call(std::move(call.inputs));
  }

  // Called with the mutex held.
  void adopt_signature(const function_info& info) {
    if (state_->function != nullptr && state_->function != &info) {
      throw inference_error("input_observer: already recording '" + std::string(state_->function->name) +
                            "', cannot also record '" + std::string(info.name) + "' (use one observer per function)");
    }
    if (state_->function == nullptr) {
      state_->engine.set_parameters(detail::parameters_of(info));
      state_->function = &info;
      state_->pairing = std::make_unique<detail::call_pairing>(info);
    }
    apply_missing_if_known();
  }

  // Positions name parameters in C++ (every argument is a keyword), so both kinds of key fill absent values.
  void apply_missing_if_known() {
    if (state_->function == nullptr) return;
    const auto& names = state_->function->param_names;
    for (auto& [key, v] : state_->missing) {
      if (key.is_position()) {
        if (key.position() >= names.size()) {
          throw inference_error("input_observer::value_if_missing: position " + std::to_string(key.position()) +
                                " is out of the signature of '" + std::string(state_->function->name) +
                                "', which has " + std::to_string(names.size()) + " parameters");
        }
        key = input_key(std::string(names[key.position()]));
      } else if (std::find(names.begin(), names.end(), key.name()) == names.end()) {
        // A C++ signature has no **kwargs to absorb an unknown name: say so now, not from inside a call.
        throw inference_error("input_observer::value_if_missing: '" + key.name() + "' is not a parameter of '" +
                              std::string(state_->function->name) + "'");
      }
      state_->engine.value_if_missing(key, std::move(v));
    }
    state_->missing.clear();
  }

  std::shared_ptr<state> state_;
};

HOOKSCOPE_DETAIL_END_NAMESPACE
