// hookscope/detail/call_pairing.hpp — pairs the pre and post callbacks of each call into one call_record: the one
// piece every recorder shares (call_recorder, input_observer, HOOKSCOPE_RECORD).
#pragma once

#include "hookscope/config.hpp"
#include "hookscope/records.hpp"
#include "hookscope/registry.hpp"
#include "hookscope/value.hpp"

#include <chrono>
#include <cstddef>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

HOOKSCOPE_DETAIL_BEGIN_NAMESPACE
namespace detail {

/// The record format's parameter list of an observable: every parameter named by the annotation, no defaults.
parameter_list parameters_of(const function_info& function);

/// Pre → post → one record. A call is known by an id unique among the calls in flight (its call_context's
/// address): calls from several threads, and nested calls, pair correctly. Thread-safe; no thread-local state, so
/// calls made from static and thread-local destructors pair like any other.
class call_pairing {
 public:
  explicit call_pairing(const function_info& function) : function_(&function) {}
  call_pairing(const call_pairing&) = delete;
  call_pairing& operator=(const call_pairing&) = delete;

  /// In the pre callback: the call's captured arguments; its clock starts now.
  void begin(const void* call_id, value_fields kwargs);

  /// In the post callback: the finished call's record (function, inputs, threw, latency; the caller adds the
  /// result), or nothing when its pre callback was not seen (started before recording, or left out by a limit).
  std::optional<call_record> end(const void* call_id, bool threw);

  /// Number of calls begun and not yet ended.
  std::size_t in_flight() const;

  /// For fork handlers: holds the pairing still across fork(); the child forgets the parent's calls in flight
  /// (they end in the parent, which records them).
  void lock_for_fork() { mutex_.lock(); }
  void unlock_after_fork(bool in_child) noexcept {
    if (in_child) pending_.clear();
    mutex_.unlock();
  }

 private:
  struct pending {
    const void* call_id;
    value_fields kwargs;
    std::chrono::steady_clock::time_point start;
  };

  const function_info* function_;
  mutable std::mutex mutex_;
  std::vector<pending> pending_;  // few at once (one per thread and nesting level): a vector beats a hash map
};

}  // namespace detail
HOOKSCOPE_DETAIL_END_NAMESPACE
