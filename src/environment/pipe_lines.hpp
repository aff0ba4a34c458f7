// Whole lines into a pipe or FIFO whose reader may stop reading or go away: writes that wait for room within one
// window of time, never leave a short line in the pipe, and never let SIGPIPE end the program. HOOKSCOPE_RECORD's
// files (record_file.cpp).
#pragma once

#include "hookscope/config.hpp"

#include <signal.h>

#include <atomic>
#include <cstddef>
#include <cstdint>

HOOKSCOPE_DETAIL_BEGIN_NAMESPACE
namespace detail {

/// Whether `fd` is a pipe or a FIFO (the only outputs whose writes wait for a reader, or fail when it is gone).
bool is_pipe(int fd) noexcept;
/// Whether a write to `fd` can raise SIGPIPE: a pipe, a FIFO or a socket whose reader may go away.
bool may_raise_sigpipe(int fd) noexcept;
/// Sets or clears O_NONBLOCK on `fd`; false when it could not.
bool set_nonblocking(int fd, bool nonblocking) noexcept;

struct pipe_write {
  int error = 0;              // an errno other than EAGAIN (EPIPE: the reader is gone), or 0
  std::size_t unwritten = 0;  // the bytes at the end of the lines that were not written
};

/// Writes `lines` (each ending in a newline) to the non-blocking pipe `fd`. When the pipe is full it waits for room
/// until `window_end` (CLOCK_MONOTONIC ns), which the first wait sets to now + `window_ns` when it is 0: every write
/// sharing it waits within the same window, whichever thread or signal handler writes. A pipe takes a write of at
/// most PIPE_BUF bytes whole or not at all, so the lines go in pieces of whole lines up to PIPE_BUF: what is left
/// starts at a line, but for a line longer than PIPE_BUF, which goes in parts and may be left begun (the caller
/// finishes it). Async-signal-safe.
pipe_write write_lines_within(int fd, const char* lines, std::size_t size, std::atomic<std::int64_t>& window_end,
                              std::int64_t window_ns) noexcept;

/// Writes `lines` to the blocking pipe `fd` in the same pieces of whole lines (each write of at most PIPE_BUF bytes is
/// atomic), so that a signal handler that writes while this thread waits for the reader finds no line begun in the
/// pipe. Returns 0 or the errno.
int write_lines_blocking(int fd, const char* lines, std::size_t size) noexcept;

/// Blocks SIGPIPE on this thread while it writes to a pipe whose reader may be gone: the write fails with EPIPE
/// instead of ending the program. A SIGPIPE the writes raised is taken back before the mask is restored; one that was
/// pending before stays. Async-signal-safe (system calls only).
class sigpipe_blocked {
 public:
  explicit sigpipe_blocked(bool active) noexcept;
  ~sigpipe_blocked();
  sigpipe_blocked(const sigpipe_blocked&) = delete;
  sigpipe_blocked& operator=(const sigpipe_blocked&) = delete;

 private:
  bool active_;
  bool was_pending_ = false;
  sigset_t old_mask_{};
};

}  // namespace detail
HOOKSCOPE_DETAIL_END_NAMESPACE
