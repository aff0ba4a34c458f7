// Calls left without (the rest of) their post callbacks: a forced unwind (pthread_exit, pthread_cancel) through the
// function or a callback, or a callback's exception leaving an emission in rethrow mode (a pre callback refusing the
// call). The observed call notes each one here (src/observed_call.cpp); the consumers that pair pre and post
// callbacks (src/call_pairing.cpp) read the notes and drop the entries those calls left.
//
// Lock-free, never allocated, never destroyed: noted from any thread, in a forked child too, without a lock that a
// fork could leave held. A log of the last `left_log_size` notes, numbered from 1: a reader that falls further behind
// loses the oldest (then the rule of call_pairing.hpp drops their entries when their addresses begin a call again).
#pragma once

#include "hookscope/config.hpp"

#include <atomic>
#include <cstddef>
#include <cstdint>

HOOKSCOPE_DETAIL_BEGIN_NAMESPACE
namespace detail {

inline constexpr std::size_t left_log_size = 256;

struct left_note {
  std::atomic<std::uint64_t> number{0};  // the note's number, stored after `call`
  std::atomic<const void*> call{nullptr};
};

/// The notes, and how many were ever made (the last one's number).
struct left_calls {
  std::atomic<std::uint64_t> count{0};
  left_note notes[left_log_size];
};
extern constinit left_calls left_log;

/// Notes that the call `call` (its call_id) is left.
inline void note_left_call(const void* call) noexcept {
  const std::uint64_t n = left_log.count.fetch_add(1, std::memory_order_acq_rel) + 1;
  left_note& note = left_log.notes[n % left_log_size];
  note.call.store(call, std::memory_order_relaxed);
  note.number.store(n, std::memory_order_release);
}

/// The number of the last note made: an entry made after reading it belongs to a call that began after every note up
/// to it (an address is unique among the calls in flight, and the call that left it was noted before its frame went).
inline std::uint64_t left_calls_so_far() noexcept { return left_log.count.load(std::memory_order_acquire); }

/// Calls `drop(call, number)` for each note after number `seen`, oldest first, and returns the number of the last one
/// read. A note not yet published stops the walk (it is read next time). A note overwritten by a newer one yields the
/// newer one's call with the older number: still right, since an entry that began before the older note began before
/// the newer one, and is then the entry of the newer note's call or a stale one.
template <class Drop>
std::uint64_t read_left_calls(std::uint64_t seen, Drop drop) noexcept {
  const std::uint64_t last = left_calls_so_far();
  if (last - seen > left_log_size) seen = last - left_log_size;  // the older ones are overwritten
  for (; seen < last; ++seen) {
    const std::uint64_t n = seen + 1;
    const left_note& note = left_log.notes[n % left_log_size];
    if (note.number.load(std::memory_order_acquire) < n) break;  // noted, not yet published
    drop(note.call.load(std::memory_order_relaxed), n);
  }
  return seen;
}

}  // namespace detail
HOOKSCOPE_DETAIL_END_NAMESPACE
