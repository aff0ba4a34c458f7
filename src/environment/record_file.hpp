// One JSON Lines output file of HOOKSCOPE_RECORD: whole lines only, appended with one write(2) per batch, so that
// processes sharing the file interleave whole lines and a crash leaves no cut line.
#pragma once

#include "hookscope/config.hpp"

#include "settings.hpp"

#include <sys/types.h>

#include <atomic>
#include <cstdint>
#include <cstddef>
#include <memory>
#include <span>
#include <mutex>
#include <string>
#include <string_view>

HOOKSCOPE_DETAIL_BEGIN_NAMESPACE
namespace detail {

/// The key under which a note of dropped calls gives its count (docs/record_format.md, "Notes"): the writer writes
/// it, and a file counts a note it could not write as that many calls. It appears raw in no other line (quotes
/// inside strings are escaped).
inline constexpr std::string_view dropped_count_key = ",\"dropped\":{\"count\":";

/// Writes the pieces to stderr as one line (the last piece ends it): async-signal-safe, and whole beside the lines
/// other threads log at the same moment.
void write_stderr_line(std::span<const std::string_view> pieces) noexcept;

class record_file {
 public:
  /// The file at `path`, opened for appending (created if missing, never truncated): one object per file, whatever
  /// the spelling of its path (device and inode decide). Never destroyed. A file that cannot be opened is reported
  /// once and swallows what is written to it. `%p` in the path becomes the process id: a forked child opens its
  /// own file when it first writes.
  static record_file& open(const std::string& path);

  /// Buffers one line (no newline); writes the buffer first when the line does not fit, and at once while the
  /// process is exiting. Thread-safe.
  void append(std::string_view line);
  /// Buffers whole lines, each with its newline (the writer's batch of formatted calls), as append does.
  void append_lines(std::string_view lines);

  /// Writes what is buffered: the background flush, exit, and before fork().
  void flush() noexcept;

  /// The policy of a target writing here (docs/environment.md). A pipe or FIFO blocks (its reader sets the pace)
  /// while any target of the file waits; with full=drop targets only, it is made non-blocking and a reader that stops
  /// reading holds the program up for one window of a second at most, after which what the pipe cannot take at once
  /// is left out, in whole lines, and counted (report_unwritten_all). A regular file is not affected.
  void wait_for_readers();
  void wait_at_most_for_readers();
  /// At exit or a fatal signal: logs, for each file, the calls its reader left out. Async-signal-safe.
  static void report_unwritten_all() noexcept;

  /// The file's path as this process opens it (`%p` expanded), for messages.
  std::string name() const;

  /// Whether the file (device, inode) is one of the record files: a timeline must not replace it. Async-signal-safe.
  static bool holds(dev_t device, ino_t inode) noexcept;

  /// Every file opened so far; for the exit, signal and fork handlers.
  static void flush_all() noexcept;
  /// The exit's last word (lifecycle.hpp): writes every file's buffer, and from then on only this thread writes them.
  static void seal_all_at_exit() noexcept;
  static void write_all_from_signal_handler() noexcept;  // async-signal-safe
  /// After write_all_from_signal_handler, in the same handler: writes whole lines (newlines included) at once.
  void write_from_signal_handler(const char* lines, std::size_t size) noexcept;
  static void lock_all_for_fork() noexcept;
  static void unlock_all_after_fork(bool in_child) noexcept;  // the child drops the parent's buffered lines
  /// In a forked child that gives up recording (record_writer.cpp, fork_release): nothing more is appended or
  /// written, and the locks are made afresh (a thread of the parent that held one does not exist here).
  static void abandon_all_in_child() noexcept;

 private:
  record_file(std::string path, int fd, dev_t device, ino_t inode);
  void append_locked(std::string_view line);
  void write_if_due() noexcept;
  bool withheld() const noexcept;
  void withhold(std::string_view lines) noexcept;
  void append_lines_locked(std::string_view lines);
  void write_locked(const char* data, std::size_t size) noexcept;
  void report(const char* what, int error) noexcept;
  // The writes to a non-blocking pipe (write_locked, the signal handler): the rest of a line begun earlier first,
  // then whole lines within the window; counts what is left out.
  void write_to_pipe(const char* data, std::size_t size, bool in_signal_handler) noexcept;
  // Sets the pipe's blocking mode from the targets' policies; with the mutex held.
  void apply_policy() noexcept;
  // In a forked child, a path with %p: the child's own file, opened on its first write (async-signal-safe); the
  // errno of a failed open, or 0.
  int open_for_this_process() noexcept;
  // name(), async-signal-safe: path_ expanded into `room`, or path_ when it does not fit.
  std::string_view name_in(char (&room)[output_path_capacity]) const noexcept;

  static constexpr std::size_t capacity = 256 * 1024;

  std::string path_;
  int fd_;
  dev_t device_;
  ino_t inode_;
  std::mutex mutex_;
  std::unique_ptr<char[]> buffer_;
  std::atomic<std::size_t> size_{0};  // bytes of whole lines in buffer_; published for the signal handler
  std::atomic<pid_t> busy_{0};        // the thread appending or writing (under mutex_), for the signal handler
  bool failed_ = false;               // reported: nothing more is written
  std::int64_t last_write_ns_ = 0;    // CLOCK_MONOTONIC
  bool is_pipe_ = false;              // fd_ is a pipe or FIFO
  bool waiting_target_ = false;       // a full=wait target writes here
  bool dropping_target_ = false;      // a full=drop target writes here
  bool bounded_waits_ = false;        // fd_ is a non-blocking pipe (full=drop targets only)
  std::atomic<std::int64_t> wait_window_end_{0};   // CLOCK_MONOTONIC ns; 0 until a write first finds the pipe full
  std::string pending_tail_;                       // the rest of a line begun in the pipe (with the mutex held)
  std::atomic<std::uint64_t> unwritten_calls_{0};  // left out of the pipe (a note's line counts its calls)
  std::atomic<std::uint64_t> withheld_calls_{0};   // left out once the exit's last word wrote the file (withhold)
  bool sealed_at_exit_ = false;                    // the exit's last word wrote the file (under mutex_)
  bool stall_reported_ = false;
  bool per_process_ = false;  // the path holds %p
  pid_t owner_ = 0;           // the process whose file fd_ is
};

}  // namespace detail
HOOKSCOPE_DETAIL_END_NAMESPACE
