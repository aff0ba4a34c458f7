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

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <exception>
#include <limits>
#include <memory>
#include <mutex>
#include <string>
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
  std::atomic<std::uint64_t> dropped{0};  // calls dropped for a full buffer (full=drop)
  std::uint64_t dropped_noted = 0;        // of which the file has a note (the writer's, under its lock)
  std::int64_t dropped_noted_ns = 0;      // when the last note was written (CLOCK_MONOTONIC)
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

/// Appends the line of `record` to its function's file, signed when it is the function's first in this process.
void write_record(recorded_function& f, call_record& record);
/// Says once per function that a call is not recorded, and why.
void refuse_call(recorded_function& f, const std::exception& e) noexcept;

//=== the writer (record_writer.cpp) ===//

/// Formats every thread's finished calls into their files (the writer's lock held meanwhile), then writes the drop
/// notes. Called by the background thread, at exit, and by a recording thread whose buffer is full under
/// full=wait when no background thread runs (a forked child, the exit).
/// `all_notes`: every pending drop note now (else at most one a second per function).
void drain_buffers(bool all_notes = false) noexcept;
/// Whether the calling thread is the one formatting (a call it makes meanwhile takes the value tree).
bool draining_on_this_thread() noexcept;
/// Whether a fatal signal's handler took the files over: nothing more is committed.
bool record_sealed() noexcept;
/// Installs the writer: the background drain, the exit and signal actions, the fork handlers.
void install_record_writer() noexcept;

}  // namespace detail
HOOKSCOPE_DETAIL_END_NAMESPACE
