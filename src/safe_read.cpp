// Reading the process's own memory without faulting (detail/safe_read.hpp): process_vm_readv on the process itself,
// and a pipe where that system call is refused.
#include "hookscope/detail/safe_read.hpp"
#include "cancellation.hpp"

#include <fcntl.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstdint>
#include <cstring>
#include <limits>

HOOKSCOPE_DETAIL_BEGIN_NAMESPACE
namespace detail {
namespace {

// The unit in which memory is mapped: a read that stays within one page is either all readable or not at all.
std::size_t page_size() noexcept {
  static const std::size_t size = [] {
    const long p = ::sysconf(_SC_PAGESIZE);
    return p > 0 ? static_cast<std::size_t>(p) : std::size_t{4096};
  }();
  return size;
}

// A range that wraps around the end of the address space is no memory at all (and would confuse the kernel's checks).
bool wraps(const void* from, std::size_t n) noexcept {
  return n > std::numeric_limits<std::uintptr_t>::max() - reinterpret_cast<std::uintptr_t>(from);
}

// Set once process_vm_readv was refused: the process has a seccomp filter or a kernel without it, which does not
// change while it runs.
std::atomic<bool> vm_read_refused{false};

enum class vm_read { done, fault, refused };

vm_read read_with_process_vm_readv(void* to, const void* from, std::size_t n) noexcept {
#if defined(__linux__)
  // One iovec each: the kernel copies page by page and stops at the first it cannot read (a short count).
  ::iovec local{to, n};
  ::iovec remote{const_cast<void*>(from), n};
  for (;;) {
    const ::ssize_t got = ::process_vm_readv(::getpid(), &local, 1, &remote, 1, 0);
    if (got >= 0) return static_cast<std::size_t>(got) == n ? vm_read::done : vm_read::fault;
    if (errno == EINTR) continue;
    // EFAULT: an address the kernel cannot read; ENOMEM, EINVAL: none it could read either. EPERM, ENOSYS, EACCES
    // (seccomp, a kernel built without it, a security module): the call itself is refused.
    return errno == EPERM || errno == ENOSYS || errno == EACCES ? vm_read::refused : vm_read::fault;
  }
#else  // no such call: the pipe it is
  (void)to;
  (void)from;
  (void)n;
  return vm_read::refused;
#endif
}

bool open_pipe(int (&fds)[2]) noexcept {
#if defined(__linux__)
  return ::pipe2(fds, O_CLOEXEC | O_NONBLOCK) == 0;
#else
  if (::pipe(fds) != 0) return false;
  for (const int fd : fds) {
    ::fcntl(fd, F_SETFD, FD_CLOEXEC);
    ::fcntl(fd, F_SETFL, O_NONBLOCK);
  }
  return true;
#endif
}

// write(2) as the system call itself. A sanitizer's write() checks that the bytes belong to one object of the
// program's: these may be any address (the end of a C string's page, a freed block), which only the kernel judges,
// and a program run under AddressSanitizer must not end because it is traced.
::ssize_t write_unchecked(int fd, const void* from, std::size_t n) noexcept {
#if defined(__linux__)
  return static_cast<::ssize_t>(::syscall(SYS_write, fd, from, n));
#else
  return ::write(fd, from, n);
#endif
}

// Writes at most this much into the pipe at a time: a pipe holds at least one page, and a write of at most
// PIPE_BUF bytes into an empty pipe is all or nothing.
constexpr std::size_t pipe_chunk = 4096;

}  // namespace

bool read_memory_through_pipe(void* to, const void* from, std::size_t n) noexcept {
  const cancellation_deferred no_cancellation;  // system calls: see cancellation.hpp
  if (wraps(from, n)) return false;
  int fds[2];
  if (!open_pipe(fds)) return false;  // no way to read: reported as unreadable
  auto* out = static_cast<unsigned char*>(to);
  auto* in = static_cast<const unsigned char*>(from);
  bool ok = true;
  for (std::size_t done = 0; ok && done < n;) {
    const std::size_t len = std::min(pipe_chunk, n - done);
    // The kernel reads the bytes to write them: EFAULT (or a short count) where it cannot.
    ::ssize_t wrote;
    do {
      wrote = write_unchecked(fds[1], in + done, len);
    } while (wrote < 0 && errno == EINTR);
    if (wrote != static_cast<::ssize_t>(len)) {
      ok = false;
      break;
    }
    ::ssize_t got;
    do {
      got = ::read(fds[0], out + done, len);
    } while (got < 0 && errno == EINTR);
    ok = got == static_cast<::ssize_t>(len);
    done += len;
  }
  ::close(fds[0]);
  ::close(fds[1]);
  return ok;
}

bool read_memory(void* to, const void* from, std::size_t n) noexcept {
  if (n == 0) return true;
  if (wraps(from, n)) return false;
  if (!vm_read_refused.load(std::memory_order_relaxed)) {
    switch (read_with_process_vm_readv(to, from, n)) {
      case vm_read::done: return true;
      case vm_read::fault: return false;
      case vm_read::refused: vm_read_refused.store(true, std::memory_order_relaxed); break;
    }
  }
  return read_memory_through_pipe(to, from, n);
}

bool memory_readable(const void* from, std::size_t n) noexcept {
  if (wraps(from, n)) return false;
  unsigned char scratch[pipe_chunk];
  const auto* at = static_cast<const unsigned char*>(from);
  for (std::size_t done = 0; done < n;) {
    const std::size_t len = std::min(sizeof scratch, n - done);
    if (!read_memory(scratch, at + done, len)) return false;
    done += len;
  }
  return true;
}

c_string_read read_c_string(const char* p, std::size_t bound) {
  c_string_read out;
  // At most bound + 1 bytes: a NUL among them ends a string of at most `bound` bytes.
  const std::size_t most = bound == std::numeric_limits<std::size_t>::max() ? bound : bound + 1;
  const std::size_t page = page_size();
  char chunk[pipe_chunk];
  std::size_t taken = 0;
  while (taken < most) {
    const auto at = reinterpret_cast<std::uintptr_t>(p) + taken;
    // Never across a page boundary: the bytes before an unreadable page are read, and the string may end there.
    const std::size_t len = std::min({sizeof chunk, page - at % page, most - taken});
    if (!read_memory(chunk, p + taken, len)) {
      out.text.clear();
      out.result = c_string_read::status::unreadable;
      return out;
    }
    if (const void* nul = std::memchr(chunk, '\0', len)) {
      out.text.append(chunk, static_cast<std::size_t>(static_cast<const char*>(nul) - chunk));
      out.result = c_string_read::status::read;
      return out;
    }
    out.text.append(chunk, len);
    taken += len;
  }
  out.text.clear();
  out.result = c_string_read::status::too_large;
  return out;
}

}  // namespace detail
HOOKSCOPE_DETAIL_END_NAMESPACE
