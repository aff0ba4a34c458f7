// Whole lines into a pipe whose reader may stop reading or go away (see pipe_lines.hpp).
#include "pipe_lines.hpp"

#include "../tick_clock.hpp"

#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <pthread.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

HOOKSCOPE_DETAIL_BEGIN_NAMESPACE
namespace detail {

bool is_pipe(int fd) noexcept {
  struct stat st {};
  return fd >= 0 && ::fstat(fd, &st) == 0 && S_ISFIFO(st.st_mode);
}

bool may_raise_sigpipe(int fd) noexcept {
  struct stat st {};
  return fd >= 0 && ::fstat(fd, &st) == 0 && (S_ISFIFO(st.st_mode) || S_ISSOCK(st.st_mode));
}

bool set_nonblocking(int fd, bool nonblocking) noexcept {
  const int flags = ::fcntl(fd, F_GETFL);
  if (flags < 0) return false;
  return ::fcntl(fd, F_SETFL, nonblocking ? flags | O_NONBLOCK : flags & ~O_NONBLOCK) == 0;
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

// Waits until `fd` takes bytes or the window ends (starting it if it has not); false when it has ended.
bool wait_for_room(int fd, std::atomic<std::int64_t>& window_end, std::int64_t window_ns) noexcept {
  std::int64_t end = window_end.load();
  if (end == 0) {
    const std::int64_t mine = monotonic_ns() + window_ns;
    end = window_end.compare_exchange_strong(end, mine) ? mine : end;
  }
  for (;;) {
    const std::int64_t left_ns = end - monotonic_ns();
    if (left_ns <= 0) return false;
    pollfd p{fd, POLLOUT, 0};
    const int ready = ::poll(&p, 1, static_cast<int>((left_ns + 999'999) / 1'000'000));
    if (ready > 0) return true;
    if (ready < 0 && errno != EINTR) return false;
  }
}

}  // namespace

pipe_write write_lines_within(int fd, const char* lines, std::size_t size, std::atomic<std::int64_t>& window_end,
                              std::int64_t window_ns) noexcept {
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
    if (!wait_for_room(fd, window_end, window_ns)) return {0, size};
  }
  return {};
}

int write_lines_blocking(int fd, const char* lines, std::size_t size) noexcept {
  while (size > 0) {
    std::size_t piece = next_piece(lines, size);
    while (piece > 0) {
      const ssize_t n = ::write(fd, lines, piece);
      if (n < 0 && errno == EINTR) continue;
      if (n < 0) return errno;
      lines += n;
      size -= static_cast<std::size_t>(n);
      piece -= static_cast<std::size_t>(n);
    }
  }
  return 0;
}

sigpipe_blocked::sigpipe_blocked(bool active) noexcept : active_(active) {
  if (!active_) return;
  sigset_t pending;
  was_pending_ = ::sigpending(&pending) == 0 && ::sigismember(&pending, SIGPIPE) == 1;
  sigset_t pipe;
  ::sigemptyset(&pipe);
  ::sigaddset(&pipe, SIGPIPE);
  (void)::pthread_sigmask(SIG_BLOCK, &pipe, &old_mask_);
}

sigpipe_blocked::~sigpipe_blocked() {
  if (!active_) return;
  if (!was_pending_) {
    sigset_t pipe;
    ::sigemptyset(&pipe);
    ::sigaddset(&pipe, SIGPIPE);
    const timespec now{0, 0};
    (void)::sigtimedwait(&pipe, nullptr, &now);  // the one our write raised, if it did
  }
  (void)::pthread_sigmask(SIG_SETMASK, &old_mask_, nullptr);
}

}  // namespace detail
HOOKSCOPE_DETAIL_END_NAMESPACE
