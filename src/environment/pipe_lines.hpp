// Whole lines into a pipe or FIFO whose reader may stop reading: writes that wait for room until a deadline and
// never leave a short line in the pipe. HOOKSCOPE_RECORD's files under full=drop (record_file.cpp).
#pragma once

#include "hookscope/config.hpp"

#include <cstddef>
#include <cstdint>

HOOKSCOPE_DETAIL_BEGIN_NAMESPACE
namespace detail {

/// Makes `fd` non-blocking when it is a pipe, a FIFO or a socket (not a regular file, whose writes never wait for a
/// reader); true when it did.
bool make_pipe_nonblocking(int fd) noexcept;

struct pipe_write {
  int error = 0;              // an errno other than EAGAIN, or 0
  std::size_t unwritten = 0;  // the bytes at the end of the lines that were not written
};

/// Writes `lines` (whole lines, each ending in a newline) to the non-blocking `fd`, waiting for room with poll(2)
/// until `deadline_ns` (CLOCK_MONOTONIC; 0: no wait). A pipe takes a write of at most PIPE_BUF bytes whole or not at
/// all, so the lines go in pieces of whole lines up to PIPE_BUF: what is left at the deadline starts at a line. Only
/// a line longer than PIPE_BUF goes in parts, and is cut if the reader stops within it. Async-signal-safe.
pipe_write write_lines_until(int fd, const char* lines, std::size_t size, std::int64_t deadline_ns) noexcept;

}  // namespace detail
HOOKSCOPE_DETAIL_END_NAMESPACE
