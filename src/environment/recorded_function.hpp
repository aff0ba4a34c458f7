// HOOKSCOPE_RECORD's state, shared by its two halves: the calling threads' side (record.cpp: options, attaching,
// the pre and post callbacks) and the writer's (record_writer.cpp: formatting the threads' buffers into the files, at
// exit, on fatal signals and across fork()).
#pragma once

#include "hookscope/config.hpp"

#include "record_file.hpp"
#include "record_lines.hpp"

#include "hookscope/detail/call_pairing.hpp"
#include "hookscope/function_info.hpp"
#include "hookscope/records.hpp"

#include <array>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <exception>
#include <limits>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

HOOKSCOPE_DETAIL_BEGIN_NAMESPACE
namespace detail {

/// What a recording thread does when its buffer is full: wait for the writer, or drop the call and count it.
enum class full_policy : std::uint8_t { wait, drop };

struct record_target {
  std::string glob;
  std::string path;
  std::uint64_t max_calls = std::numeric_limits<std::uint64_t>::max();
  std::uint64_t every = 1;
  std::size_t buffer = std::size_t{1} << 20;  // bytes of each recording thread's ring
  full_policy full = full_policy::wait;

  bool sampled() const noexcept { return every != 1 || max_calls != std::numeric_limits<std::uint64_t>::max(); }
};

/// Calls of one function left out for one reason, each counted as it is left out; the writer notes the count in the
/// file (docs/record_format.md, "Notes").
struct dropped_calls {
  explicit dropped_calls(std::string_view why) : reason(why) {}
  const std::string_view reason;  // the note's "reason"
  std::atomic<std::uint64_t> count{0};
  std::uint64_t noted = 0;    // of which the file has a note (the writer's, under its lock)
  std::int64_t noted_ns = 0;  // when the last note was written (CLOCK_MONOTONIC)
};

// What one recorded function's callbacks share; never destroyed (calls may come from static destructors).
struct recorded_function {
  recorded_function(const function_info& f, const record_target& t, record_file& out)
      : info(&f), target(&t), file(&out), pairing(f), parts(f), memo(f.param_names.size()), sampled(t.sampled()) {}
  const function_info* info;
  const record_target* target;
  record_file* file;
  call_pairing pairing;  // the calls that take the value tree
  line_parts parts;      // the lines of the calls copied in binary form
  line_memo memo;        // the writer's (under its lock)
  bool sampled;          // every or max_calls set: take_call decides
  std::atomic<std::uint64_t> calls_seen{0};
  std::atomic<std::uint64_t> calls_taken{0};
  std::mutex first_line_mutex;  // orders the signed first line before the others
  std::atomic<bool> signature_written{false};
  std::atomic<bool> reported_refused{false};
  std::atomic<bool> reported_bound{false};   // said that max_calls is reached
  dropped_calls buffer_full{"buffer_full"};  // full=drop, the thread's buffer full
  dropped_calls reentered{"reentered"};      // made inside the recording path (recording_path_scope)

  /// Every reason's count, for the writer's notes and a forked child's reset.
  std::array<dropped_calls*, 2> drop_counts() noexcept { return {&buffer_full, &reentered}; }
};

/// The feature's state, made once by install_record and never destroyed.
struct record_state {
  std::vector<record_target> targets;
  std::size_t buffer = 0;  // each recording thread's ring: the largest of the targets'
  std::mutex mutex;        // guards functions
  std::vector<std::unique_ptr<recorded_function>> functions;
};
extern record_state* record_feature;

/// The process's fork generation: a call begun before a fork() is finished by the parent, which records it.
extern std::atomic<std::uint64_t> record_generation;

//=== re-entry ===//

/// Whether the calling thread is inside the recording path: a callback, the writer, the exit's or a signal's writing,
/// the fork handlers, attaching a function. A lock-free atomic, written and read on its own thread only: a signal
/// handler that interrupted the path reads what the path wrote (constinit: no guard of first use, no allocation).
extern constinit thread_local std::atomic<bool> in_recording_path;

/// Marks the calling thread inside the recording path; returns whether it was already (then the caller is a call
/// made from within the path: a signal handler that interrupted it, or code the path runs, a log sink or a tensor's
/// traits). Such a call may find below it a lock held, a buffer half changed, malloc interrupted: it must take no
/// lock, change no state of the path and allocate nothing. Async-signal-safe.
inline bool enter_recording_path() noexcept {
  const bool outer = in_recording_path.load(std::memory_order_relaxed);
  in_recording_path.store(true, std::memory_order_relaxed);
  std::atomic_signal_fence(std::memory_order_seq_cst);  // set before the path takes its first lock
  return outer;
}
/// Undoes enter_recording_path, given what it returned.
inline void leave_recording_path(bool outer) noexcept {
  std::atomic_signal_fence(std::memory_order_seq_cst);  // cleared after the path released its last lock
  in_recording_path.store(outer, std::memory_order_relaxed);
}

/// The recording path for the scope's life.
class recording_path_scope {
 public:
  recording_path_scope() noexcept : reentered_(enter_recording_path()) {}
  ~recording_path_scope() { leave_recording_path(reentered_); }
  recording_path_scope(const recording_path_scope&) = delete;
  recording_path_scope& operator=(const recording_path_scope&) = delete;
  /// Whether the thread was inside the path already (see enter_recording_path).
  bool reentered() const noexcept { return reentered_; }

 private:
  const bool reentered_;
};

/// Appends the line of `record` to its function's file, signed when it is the function's first in this process.
void write_record(recorded_function& f, call_record& record);
/// Says once per function that a call is not recorded, and why.
void refuse_call(recorded_function& f, const std::exception& e) noexcept;

//=== the writer (record_writer.cpp) ===//

/// Formats every thread's finished calls into their files (the writer's lock held meanwhile), then writes the drop
/// notes. Called inside the recording path only: by the background thread, at exit, and by a recording thread
/// whose buffer is full under full=wait when no background thread runs (a forked child, the exit).
/// `all_notes`: every pending drop note now (else at most one a second per function and reason).
void drain_buffers(bool all_notes = false) noexcept;
/// Whether a fatal signal's handler took the files over (or a forked child gave up recording): nothing more is
/// committed. Inline: every recorded call tests it.
extern constinit std::atomic<bool> record_sealed_flag;
inline bool record_sealed() noexcept { return record_sealed_flag.load(std::memory_order_relaxed); }
/// Whether this process is a child forked by a signal handler that interrupted hookscope: it records no calls
/// (record_writer.cpp, fork_release). Inline: every recorded call tests it.
extern constinit std::atomic<bool> record_abandoned_flag;
inline bool record_abandoned() noexcept { return record_abandoned_flag.load(std::memory_order_relaxed); }
/// Installs the writer: the background drain, the exit and signal actions, the fork handlers.
void install_record_writer() noexcept;

}  // namespace detail
HOOKSCOPE_DETAIL_END_NAMESPACE
