// One JSON Lines output file of HOOKSCOPE_RECORD: whole lines only, appended with one write(2) per batch, so that
// processes sharing the file interleave whole lines and a crash leaves no cut line.
#pragma once

#include "hookscope/config.hpp"

#include <sys/types.h>

#include <atomic>
#include <cstdint>
#include <cstddef>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>

HOOKSCOPE_DETAIL_BEGIN_NAMESPACE
namespace detail {

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

  /// For full=drop: when the file is a pipe, a FIFO or a socket, a reader that stops reading holds the program at
  /// most a second. Writes then wait for room at most unread_wait_ns, once: until a write goes through again they do
  /// not wait. The lines left out stay whole, and the calls they hold are counted and logged (report_unwritten_all).
  void wait_at_most_for_readers();
  /// At exit: logs, for each file, the calls its reader left out (wait_at_most_for_readers).
  static void report_unwritten_all() noexcept;

  const std::string& path() const noexcept { return path_; }

  /// Whether the file (device, inode) is one of the record files: a timeline must not replace it. Async-signal-safe.
  static bool holds(dev_t device, ino_t inode) noexcept;

  /// Every file opened so far; for the exit, signal and fork handlers.
  static void flush_all() noexcept;
  static void write_all_from_signal_handler() noexcept;  // async-signal-safe
  /// After write_all_from_signal_handler, in the same handler: writes whole lines (newlines included) at once.
  void write_from_signal_handler(const char* lines, std::size_t size) noexcept;
  static void lock_all_for_fork() noexcept;
  static void unlock_all_after_fork(bool in_child) noexcept;  // the child drops the parent's buffered lines

 private:
  record_file(std::string path, int fd, dev_t device, ino_t inode);
  void append_locked(std::string_view line);
  void append_lines_locked(std::string_view lines);
  void write_locked(const char* data, std::size_t size) noexcept;
  void report(const char* what, int error) noexcept;
  // write_locked and the signal handler's writes to a pipe (bounded_waits_): whole lines until the deadline.
  void write_to_pipe(const char* data, std::size_t size, bool in_signal_handler) noexcept;
  // In a forked child, a path with %p: the child's own file, opened on its first write (async-signal-safe); the
  // errno of a failed open, or 0.
  int open_for_this_process() noexcept;

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
  bool bounded_waits_ = false;        // wait_at_most_for_readers: fd_ is a non-blocking pipe
  bool stalled_ = false;              // the last write to the pipe ran out of time: the next ones do not wait
  std::atomic<std::uint64_t> unwritten_calls_{0};  // left out of the pipe (a note's line counts its calls)
  bool per_process_ = false;                       // the path holds %p
  pid_t owner_ = 0;                                // the process whose file fd_ is
};

}  // namespace detail
HOOKSCOPE_DETAIL_END_NAMESPACE
