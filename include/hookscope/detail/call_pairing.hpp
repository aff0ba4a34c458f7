// hookscope/detail/call_pairing.hpp — pairs each call's pre and post callbacks: the one rule every consumer follows
// (call_recorder, input_observer, HOOKSCOPE_RECORD, and the clocks of HOOKSCOPE_STATS and HOOKSCOPE_TIMELINE).
#pragma once

#include "hookscope/config.hpp"
#include "hookscope/records.hpp"
#include "hookscope/registry.hpp"
#include "hookscope/value.hpp"

#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

HOOKSCOPE_DETAIL_BEGIN_NAMESPACE
namespace detail {

/// Throws what to_record_line would throw for this value: a hookscope::value_error naming the path of a negative
/// dimension (`where.shape[0]`), a hookscope::format_error for nesting deeper than the reader accepts. Recorders
/// check each call when they record it, so that one call they cannot write never spoils the others (records.cpp).
void check_writable(const value& v, std::string_view where);
void check_writable(const value_fields& fields);

/// The record format's parameter list of an observable: every parameter named by the annotation, no defaults.
parameter_list parameters_of(const function_info& function);

//=== the pairing rule ===//
//
// A call is known by its call_context's address, unique among the calls in flight. A call can end without its post
// callback: a forced unwind (pthread_exit, pthread_cancel) or a pre callback that refused it in rethrow mode. Its
// entry is abandoned, and must never be taken for another call's: on one thread, calls nest, so
//   - a call that begins at an address that already has an entry abandons that entry and every entry begun after
//     it (their frames are gone: the new call's frame took their place);
//   - a call that ends takes the entry of its address, and abandons the entries begun after it (calls nested in it
//     that never ended).
// `pair_index` is that rule on one thread's entries, in the order they began.

/// The index of the last entry of `entries[0, count)` whose `call` is `call` (the entry a beginning call replaces
/// or an ending call takes, together with every entry after it), or `count` when there is none.
template <class Entry>
constexpr std::size_t pair_index(const Entry* entries, std::size_t count, const void* call) noexcept {
  for (std::size_t i = count; i > 0; --i) {
    if (entries[i - 1].call == call) return i - 1;
  }
  return count;
}

/// Pre → post → one record, by the rule above. Calls from several threads and nested calls pair correctly.
/// Thread-safe; a thread is known by the address of a constant-initialised thread-local, so calls made from
/// static and thread-local destructors pair like any other.
class call_pairing {
 public:
  explicit call_pairing(const function_info& function) : function_(&function) {}
  call_pairing(const call_pairing&) = delete;
  call_pairing& operator=(const call_pairing&) = delete;

  /// In the pre callback: the call's captured arguments; its clock starts now. Returns the number of entries it
  /// abandoned (calls that ended without a post callback).
  std::size_t begin(const void* call_id, value_fields kwargs);

  /// In the pre callback of a call that is not recorded (over a limit, sampled out): abandons the entries its address
  /// and the calls after it left on this thread (a call refused earlier at the same address), so that its post
  /// callback finds none. Returns their number. Costs one relaxed load while no call is in flight.
  std::size_t skip(const void* call_id);

  /// In the post callback: the finished call's record (function, inputs, threw, latency; the caller adds the
  /// result), or nothing when its pre callback was not seen (started before recording, or left out by a limit).
  /// `abandoned` (if given) receives the number of entries of calls nested in it that never ended.
  std::optional<call_record> end(const void* call_id, bool threw, std::size_t* abandoned = nullptr);

  /// Number of calls begun and not yet ended (abandoned entries not yet found included).
  std::size_t in_flight() const;

  /// For fork handlers: holds the pairing still across fork(); the child forgets the parent's calls in flight
  /// (they end in the parent, which records them).
  void lock_for_fork() { mutex_.lock(); }
  void unlock_after_fork(bool in_child) noexcept {
    if (in_child) {
      pending_.clear();
      size_.store(0, std::memory_order_relaxed);
    }
    mutex_.unlock();
  }

 private:
  struct pending {
    const void* call;
    const void* thread;  // the address of a thread-local of its thread: unique among live threads
    value_fields kwargs;
    std::chrono::steady_clock::time_point start;
  };

  // Erases the entries of `thread` from `from` on (in `pending_`'s order); returns how many.
  std::size_t erase_from(std::size_t from, const void* thread);
  // The index in `pending_` of the entry of `call` on `thread` by the rule, or pending_.size().
  std::size_t find(const void* call, const void* thread) const;

  const function_info* function_;
  mutable std::mutex mutex_;
  std::vector<pending> pending_;      // few at once (one per thread and nesting level), in the order they began
  std::atomic<std::size_t> size_{0};  // pending_.size(), for skip() to read without the lock
};

}  // namespace detail
HOOKSCOPE_DETAIL_END_NAMESPACE
