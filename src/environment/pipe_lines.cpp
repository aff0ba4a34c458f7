// Whole lines into a pipe whose reader may stop reading (see pipe_lines.hpp).
#include "pipe_lines.hpp"

#include "../tick_clock.hpp"

#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

HOOKSCOPE_DETAIL_BEGIN_NAMESPACE
namespace detail {

bool make_pipe_nonblocking(int fd) noexcept {
  struct stat st {};
  if (fd < 0 || ::fstat(fd, &st) != 0 || !(S_ISFIFO(st.st_mode) || S_ISSOCK(st.st_mode))) return false;
  const int flags = ::fcntl(fd, F_GETFL);
  return flags >= 0 && ::fcntl(fd, F_SETFL, flags | O_NONBLOCK) == 0;
}

namespace {

// The longest prefix of whole lines within PIPE_BUF bytes; the first line whole when it alone is longer.
std::size_t next_piece(const char* lines, std::size_t size) noexcept {
  if (size <= PIPE_BUF) return size;  // whole lines: the last one ends the buffer
  const void* last = ::memrchr(lines, '\n', PIPE_BUF);
  if (last != nullptr) return static_cast<std::size_t>(static_cast<const char*>(last) - lines) + 1;
  const void* end = std::memchr(lines, '\n', size);
  return end == nullptr ? size : static_cast<std::size_t>(static_cast<const char*>(end) - lines) + 1;
}

// Waits until `fd` takes bytes or `deadline_ns` passes; false at the deadline.
bool wait_for_room(int fd, std::int64_t deadline_ns) noexcept {
  for (;;) {
    const std::int64_t left_ns = deadline_ns - monotonic_ns();
    if (left_ns <= 0) return false;
    pollfd p{fd, POLLOUT, 0};
    const int ready = ::poll(&p, 1, static_cast<int>((left_ns + 999'999) / 1'000'000));
    if (ready > 0) return true;
    if (ready < 0 && errno != EINTR) return false;
  }
}

}  // namespace

pipe_write write_lines_until(int fd, const char* lines, std::size_t size, std::int64_t deadline_ns) noexcept {
  while (size > 0) {
    const std::size_t piece = next_piece(lines, size);
    const ssize_t n = ::write(fd, lines, piece);
    if (n > 0) {
      lines += n;
      size -= static_cast<std::size_t>(n);
      continue;
    }
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK) return {errno, size};
    if (!wait_for_room(fd, deadline_ns)) return {0, size};
  }
  return {};
}

}  // namespace detail
HOOKSCOPE_DETAIL_END_NAMESPACE
