// hookscope/detail/call_pairing.hpp — pairs each call's pre and post callbacks into one record: the one pairing of
// every recorder (call_recorder, input_observer, HOOKSCOPE_RECORD). Timing needs no pairing: a call's start lives in
// the call itself (erased_call's call_start, src/tick_clock.hpp), read by HOOKSCOPE_STATS, HOOKSCOPE_TIMELINE and the
// latency of every record alike.
#pragma once

#include "hookscope/detail/call_inputs.hpp"
#include "hookscope/detail/config.hpp"
#include "hookscope/detail/erased_call.hpp"
#include "hookscope/detail/function_info.hpp"
#include "hookscope/detail/records.hpp"
#include "hookscope/detail/value.hpp"

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>

HOOKSCOPE_DETAIL_BEGIN_NAMESPACE
namespace detail {

/// Throws what to_record_line would throw for this value: a hookscope::value_error naming the path of a negative
/// dimension (`where.shape[0]`), a hookscope::format_error for nesting deeper than the reader accepts. Recorders
/// check each call when they record it, so that one call they cannot write never spoils the others (record_line_writer.cpp).
void check_writable(const value& v, std::string_view where);
void check_writable(const value_fields& fields);

/// The record format's parameter list of an observable: every parameter named by the annotation, no defaults.
parameter_list parameters_of(const function_info& function);

//=== the pairing rule ===//
//
// A call is known by its call_id (its context's address), unique among the calls in flight in the whole process: a
// context lives in its call's frame, and stacks do not overlap. So a call pairs with its own entry whatever ends it: a
// call that suspends in a fiber and ends after calls begun later, or on another thread, takes the entry of its
// address, and no other.
//
// A call can end without its post callback: a forced unwind (pthread_exit, pthread_cancel), a callback's exception
// leaving an emission in rethrow mode (a pre callback refusing the call), or no unwinding at all (longjmp, a fiber
// discarded while suspended). Its entry is never taken for another call's, and does not stay for ever:
//   - the first two are noted as they happen (src/left_calls.hpp), and a pairing drops their entries at its next use;
//   - a call that begins at an address that has an entry replaces it: that entry's call has ended (its frame is gone).
// An entry thus outlives its call only when the call was left without unwinding, or when more than 256 calls were
// left between two uses of its pairing; it is dropped when a call begins at its address, and keeps the call's captured
// arguments until then.

/// What a finished call adds to its record beside its inputs: the function's name, whether it threw, and its latency
/// from its start (tick_clock.hpp) to `end_ticks`. One rule for every consumer that pairs calls.
void finish_record(call_record& record, const function_info& function, const erased_call& call, std::int64_t end_ticks);

/// Pre → post → one record, by the rule above. Calls from several threads and fibers pair correctly. Thread-safe;
/// usable from static and thread-local destructors.
class call_pairing {
 public:
  explicit call_pairing(const function_info& function);
  ~call_pairing();
  call_pairing(const call_pairing&) = delete;
  call_pairing& operator=(const call_pairing&) = delete;

  /// In the pre callback: the call's captured arguments; its start is taken now (the latency's, shared with every
  /// consumer that times the call). Returns the number of entries it dropped (calls that ended without a post
  /// callback, their own included if it replaced one).
  std::size_t begin(const erased_call& call, value_fields kwargs);

  /// In the pre callback of a call that is not recorded (over a limit, sampled out): drops the entry a call that
  /// ended without its post callback left at its address, so that its post callback finds none. Returns the number of
  /// entries it dropped. Costs one relaxed load while no call is in flight.
  std::size_t skip(const erased_call& call);

  /// In the post callback: the finished call's record (function, inputs, threw, latency; the caller adds the
  /// result), or nothing when its pre callback was not seen (started before recording, or left out by a limit).
  /// `abandoned` (if given) receives the number of entries it dropped of other calls that ended without a post
  /// callback.
  std::optional<call_record> end(const erased_call& call, std::size_t* abandoned = nullptr);

  /// Number of calls begun and not yet ended (entries of calls that ended without a post callback not yet dropped
  /// included).
  std::size_t in_flight() const;

  /// For fork handlers: holds the pairing still across fork(); the child forgets the parent's calls in flight
  /// (they end in the parent, which records them).
  void lock_for_fork() { mutex_.lock(); }
  void unlock_after_fork(bool in_child) noexcept;
  /// For a forked child that gives up recording (a fork() from a signal handler that interrupted the recording path,
  /// so that the lock was not taken for the fork): the lock made afresh, since a thread of the parent that held it
  /// does not exist here; the interrupted frame then unlocks an unlocked mutex, which glibc's default mutex allows.
  void reset_lock_in_child() noexcept;

 private:
  struct table;  // the entries by call_id (call_pairing.cpp)

  // Drops the entries of calls noted as left since the last look; returns how many. With the lock held.
  std::size_t drop_left_calls();

  const function_info* function_;
  mutable std::mutex mutex_;
  std::unique_ptr<table> table_;
  std::atomic<std::size_t> size_{0};  // the number of entries, for skip() to read without the lock
};

}  // namespace detail
HOOKSCOPE_DETAIL_END_NAMESPACE
