// hookscope/recorder.hpp — records the calls of an observable for a scope: captured arguments, result, latency.
//
// ```cpp
// hookscope::call_recorder rec(model_forward);       // any observable: function, method, make_observable
// generate(model, prompt);                           // the first store_n_calls calls are captured
// rec.write_jsonl("forward.jsonl");                  // the record format, one call per line
// ```
#pragma once

#include "hookscope/capture.hpp"
#include "hookscope/config.hpp"
#include "hookscope/detail/call_pairing.hpp"
#include "hookscope/detail/recording_target.hpp"
#include "hookscope/observable.hpp"
#include "hookscope/records.hpp"
#include "hookscope/registry.hpp"
#include "hookscope/value.hpp"
#include "hookscope/exceptions.hpp"

#include <atomic>
#include <cstddef>
#include <exception>
#include <filesystem>
#include <mutex>
#include <optional>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

HOOKSCOPE_DETAIL_BEGIN_NAMESPACE

struct recorder_options {
  std::size_t store_n_calls = 3;  ///< calls kept (the first ones); `hookscope::unlimited` keeps all
  bool global = false;            ///< record calls from every thread, not only the current context's
  bool tensor_data = false;       ///< also capture tensor contents (for replay); shapes and dtypes only by default
};

/// Records the calls of one observable while it lives (a scope, like the reference's `with observer(model):` block).
///
/// Like any callback, it sees the calls of its context: the current thread's, or threads that attach it;
/// `recorder_options::global` records every thread. In disabled builds it compiles and records nothing.
class call_recorder {
 public:
  /// Records `target`: an observable (`passes::lower`, `Model::forward_observable{}`) or a live
  /// observable_function.
  template <class Observable>
  explicit call_recorder(Observable&& target, recorder_options options = {})
      : function_(&detail::function_info_of(target)), options_(options), pairing_(*function_) {
    using context_type = typename std::remove_cvref_t<Observable>::context_type;
    auto pre = [this](const context_type& ctx) { on_pre(ctx); };
    auto post = [this](const context_type& ctx) { on_post(ctx); };
    auto& observers = target.observers;
    pre_ = options.global ? observers.pre.add_global(pre) : observers.pre.add(pre);
    post_ = options.global ? observers.post.add_global(post) : observers.post.add(post);
  }
  call_recorder(const call_recorder&) = delete;
  call_recorder& operator=(const call_recorder&) = delete;
  ~call_recorder() { stop(); }

  /// Stops recording (the calls recorded so far stay available).
  void stop() noexcept {
    pre_.reset();
    post_.reset();
  }

  /// The recorded function.
  const function_info& function() const noexcept { return *function_; }
  /// Number of calls recorded so far.
  std::size_t num_calls() const {
    const std::lock_guard lock(mutex_);
    return calls_.size();
  }
  /// The recorded calls, in the order they finished: every parameter captured in `inputs.kwargs` (named by the
  /// annotation), the captured result (absent for void results and calls that threw), `threw`, and
  /// `latency_ns` from the call's start to its post callback here: the start is taken once per call, in the pre
  /// callback of the first consumer that times it (after this recorder captured the arguments, if it is first), and
  /// shared by all of them (other recorders, HOOKSCOPE_STATS, HOOKSCOPE_TIMELINE). `parameters` is left empty: the
  /// record writer adds it to a function's first line.
  std::vector<call_record> calls() const {
    const std::lock_guard lock(mutex_);
    return calls_;
  }

  /// Forgets the calls recorded so far; recording goes on, with store_n_calls counted afresh.
  void clear() {
    const std::lock_guard lock(mutex_);
    reserved_.fetch_sub(calls_.size(), std::memory_order_relaxed);
    calls_.clear();
  }

  /// Number of calls left out because a value could not be captured or written (a `hookscope::value_error`, such as
  /// a tensor's negative dimension, or a `hookscope::format_error`, such as nesting deeper than the record reader
  /// accepts). Such a call is not recorded, the others are, and the program is not disturbed: the first one is
  /// logged, once per recorder, naming the function and the fault; none is thrown, whatever the callback error mode.
  std::size_t refused_calls() const noexcept { return refused_.load(std::memory_order_relaxed); }

  /// Writes the calls in the JSON Lines record format (the first line carries the signature), each line at most
  /// max_record_line_bytes (a call's largest values elided when its record would be longer: to_record_line); throws
  /// std::system_error naming the file when it cannot be written.
  void write_jsonl(const std::filesystem::path& path) const;

  /// The calls as JSON Lines text (what write_jsonl writes).
  std::string to_jsonl() const;

 private:
  template <class Context>
  void on_pre(const Context& ctx) {
#if HOOKSCOPE_ENABLED
    // Reserve a place first, without the lock: once the limit is reached, calls cost two atomic adds and a load.
    if (!reserve()) {
      // Its post callback must not find an entry a call that ended without one left at its address; and that
      // entry's place is free again.
      const std::size_t abandoned = pairing_.skip(ctx);
      if (abandoned == 0) return;
      release(abandoned);
      if (!reserve()) return;
    }
    // A call left out must leave no entry at its address for its post callback to find (skip).
    try {
      value_fields args = detail::capture_args(ctx, what_to_capture());
      detail::check_writable(args);  // a call that cannot be written is refused now, not when the file is written
      release(pairing_.begin(ctx, std::move(args)));
    } catch (const value_error& e) {
      release(1 + pairing_.skip(ctx));
      refuse(e);
    } catch (const format_error& e) {
      release(1 + pairing_.skip(ctx));
      refuse(e);
    } catch (...) {
      release(1 + pairing_.skip(ctx));
      throw;
    }
#else
    (void)ctx;
#endif
  }

  template <class Context>
  void on_post(const Context& ctx) {
#if HOOKSCOPE_ENABLED
    std::size_t abandoned = 0;  // calls that ended without a post callback: their places are free again
    std::optional<call_record> call = pairing_.end(ctx, &abandoned);
    release(abandoned);
    if (!call) return;                                 // not recorded (over the limit, or started before the recorder)
    if constexpr (requires { ctx.return_value(); }) {  // any result type: opaque where not structural
      try {
        if (ctx.return_value() != nullptr) {
          call->result = capture_value(*ctx.return_value(), what_to_capture());
          detail::check_writable(*call->result, "result");
        }
      } catch (const value_error& e) {
        release(1);
        refuse(e);
        return;
      } catch (const format_error& e) {
        release(1);
        refuse(e);
        return;
      }
    }
    const std::lock_guard lock(mutex_);
    calls_.push_back(std::move(*call));
#else
    (void)ctx;
#endif
  }

  bool reserve() noexcept {
    if (reserved_.fetch_add(1, std::memory_order_relaxed) < options_.store_n_calls) return true;
    reserved_.fetch_sub(1, std::memory_order_relaxed);
    return false;
  }
  void release(std::size_t places) noexcept {
    if (places != 0) reserved_.fetch_sub(places, std::memory_order_relaxed);
  }
  // Counts a call left out; logs the first (never throws: a callback's failure must not break the call).
  void refuse(const std::exception& e) noexcept;

  capture_options what_to_capture() const noexcept { return {.tensor_data = options_.tensor_data}; }

  const function_info* function_;
  recorder_options options_;
  mutable std::mutex mutex_;
  detail::call_pairing pairing_;
  std::vector<call_record> calls_;
  std::atomic<std::size_t> reserved_{0};  // calls recorded or in flight, against store_n_calls
  std::atomic<std::size_t> refused_{0};
  subscription pre_;
  subscription post_;
};

HOOKSCOPE_DETAIL_END_NAMESPACE
