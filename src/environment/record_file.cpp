// HOOKSCOPE_RECORD's output files (see record_file.hpp).
#include "record_file.hpp"
#include "../cancellation.hpp"
#include "pipe_lines.hpp"

#include "settings.hpp"

#include "../tick_clock.hpp"
#include "lifecycle.hpp"

#include "hookscope/callback_errors.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <time.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <charconv>
#include <cstring>
#include <new>
#include <span>
#include <string_view>

HOOKSCOPE_DETAIL_BEGIN_NAMESPACE
namespace detail {
namespace {

constexpr std::size_t max_files = 64;
constexpr std::int64_t flush_interval_ns = 100'000'000;
constexpr std::int64_t unread_wait_ns = 1'000'000'000;  // how long a pipe's reader may hold the program up

// Files are never destroyed (calls from static destructors still write), and signal handlers walk this array:
// fixed, with a published count.
constinit std::mutex files_mutex;
constinit std::array<record_file*, max_files> files{};
constinit std::atomic<std::size_t> file_count{0};

// Set by the signal handler that writes the files at a fatal signal: from then on the handler alone writes them
// (threads still making calls append nothing more), so that no batch is written twice and no line torn.
constinit std::atomic<bool> sealed{false};

// Set in a forked child that gave up recording (abandon_all_in_child): it writes, opens and reports nothing.
constinit std::atomic<bool> abandoned_in_child{false};

pid_t this_thread_id() noexcept { return static_cast<pid_t>(::syscall(SYS_gettid)); }

// Marks the file busy for the signal handler while the holder of its mutex changes or writes its buffer; false when
// the signal handler has taken the files over (then nothing is appended). seq_cst on both sides: the handler sets
// `sealed` then reads `busy_`, a thread sets `busy_` then reads `sealed`, so one of them sees the other.
class busy_scope {
 public:
  explicit busy_scope(std::atomic<pid_t>& busy) noexcept : busy_(busy) {
    busy_.store(this_thread_id());
    open_ = !sealed.load();
  }
  ~busy_scope() { busy_.store(0); }
  explicit operator bool() const noexcept { return open_; }

 private:
  std::atomic<pid_t>& busy_;
  bool open_;
};

template <class F>
void for_each_file(F f) noexcept {
  const std::size_t n = file_count.load(std::memory_order_acquire);
  for (std::size_t i = 0; i < n; ++i) f(*files[i]);
}

// A write that failed after `written` bytes of whole lines (a full disk, a file size limit) leaves the last of them
// cut at the file's end: the file is shortened back to its last whole line, when it is a regular file that no one
// wrote after it. Async-signal-safe.
void remove_cut_line(int fd, const char* lines, std::size_t written) noexcept {
  if (written == 0 || lines[written - 1] == '\n') return;
  const void* last_newline = ::memrchr(lines, '\n', written);
  const auto whole = last_newline == nullptr ? 0 : static_cast<const char*>(last_newline) - lines + 1;
  const off_t end = ::lseek(fd, 0, SEEK_CUR);  // O_APPEND: where this write ended
  struct stat st {};
  if (end < 0 || ::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || st.st_size != end) return;
  (void)::ftruncate(fd, end - static_cast<off_t>(written) + whole);
}

// One write(2) per batch on an O_APPEND descriptor: the kernel appends it whole. Retries what a signal or a short
// write left (rare for regular files); returns 0 or the errno.
int write_fully(int fd, const char* data, std::size_t size) noexcept {
  const cancellation_deferred no_cancellation;  // system calls: see cancellation.hpp
  const char* const first = data;
  while (size > 0) {
    const ssize_t n = ::write(fd, data, size);
    if (n < 0) {
      if (errno == EINTR) continue;
      const int error = errno;
      remove_cut_line(fd, first, static_cast<std::size_t>(data - first));
      return error;
    }
    data += n;
    size -= static_cast<std::size_t>(n);
  }
  return 0;
}

// The calls that whole record lines hold: one a record, a note's count for a note of dropped calls.
std::uint64_t calls_in_lines(std::string_view lines) noexcept {
  std::uint64_t calls = 0;
  while (!lines.empty()) {
    const std::size_t end = std::min(lines.find('\n'), lines.size());
    const std::string_view line = lines.substr(0, end);
    std::uint64_t count = 1;
    if (const std::size_t at = line.find(dropped_count_key); at != std::string_view::npos) {
      const char* digits = line.data() + at + dropped_count_key.size();
      (void)std::from_chars(digits, line.data() + line.size(), count);
    }
    calls += count;
    lines.remove_prefix(std::min(end + 1, lines.size()));
  }
  return calls;
}

// "hookscope: HOOKSCOPE_RECORD: PATH: N calls ..." (async-signal-safe).
void write_unwritten_line(std::string_view path, std::uint64_t calls, std::string_view why) noexcept {
  char digits[24];
  const char* end = std::to_chars(digits, digits + sizeof digits, calls).ptr;
  const std::string_view pieces[] = {
      "hookscope: HOOKSCOPE_RECORD: ", path, ": ", std::string_view(digits, static_cast<std::size_t>(end - digits)),
      " calls not written: ",          why,  "\n"};
  write_stderr_line(pieces);
}

}  // namespace

// One writev(2): async-signal-safe (a system call, nothing allocated), and whole beside the
// lines other threads log at the same moment (a message written piece by piece is cut by theirs). A short write,
// rare on stderr, goes on from where it stopped.
void write_stderr_line(std::span<const std::string_view> pieces) noexcept {
  const cancellation_deferred no_cancellation;  // system calls: see cancellation.hpp
  std::array<iovec, 8> vectors{};
  std::size_t count = std::min(pieces.size(), vectors.size());
  for (std::size_t i = 0; i < count; ++i)
    vectors[i] = {const_cast<char*>(pieces[i].data()), pieces[i].size()};  // writev takes them as non-const
  iovec* next = vectors.data();
  while (count > 0) {
    const ssize_t n = ::writev(STDERR_FILENO, next, static_cast<int>(count));
    if (n < 0) {
      if (errno == EINTR) continue;
      return;  // stderr refuses: nowhere else to tell
    }
    auto written = static_cast<std::size_t>(n);
    while (count > 0 && written >= next->iov_len) {
      written -= next->iov_len;
      ++next;
      --count;
    }
    if (count > 0) {
      next->iov_base = static_cast<char*>(next->iov_base) + written;
      next->iov_len -= written;
    }
  }
}

record_file::record_file(std::string path, int fd, dev_t device, ino_t inode)
    : path_(std::move(path)), fd_(fd), device_(device), inode_(inode), buffer_(new char[capacity]) {}

record_file& record_file::open(const std::string& path) {
  const cancellation_deferred no_cancellation;  // system calls: see cancellation.hpp
  const std::lock_guard lock(files_mutex);
  char expanded[output_path_capacity];
  // A FIFO without a reader is refused, not waited for.
  const int fd = expand_pid(path, expanded) ? open_output_file(expanded, O_APPEND) : (errno = ENAMETOOLONG, -1);
  const int open_error = errno;
  struct stat st {};
  if (fd >= 0 && ::fstat(fd, &st) == 0) {
    for (std::size_t i = 0; i < file_count.load(std::memory_order_relaxed); ++i) {
      if (files[i]->fd_ >= 0 && files[i]->device_ == st.st_dev && files[i]->inode_ == st.st_ino) {
        ::close(fd);  // the same file under another spelling
        return *files[i];
      }
    }
  }
  for (std::size_t i = 0; i < file_count.load(std::memory_order_relaxed); ++i) {
    if (files[i]->fd_ < 0 && files[i]->path_ == path) return *files[i];  // failed before: reported already
  }
  auto* file = new record_file(path, fd, st.st_dev, st.st_ino);
  file->is_pipe_ = is_pipe(fd);
  file->per_process_ = path.find("%p") != std::string::npos;
  file->owner_ = getpid();
  if (fd < 0) file->report("cannot open it for writing", open_error);
  const std::size_t n = file_count.load(std::memory_order_relaxed);
  if (n < max_files) {
    files[n] = file;
    file_count.store(n + 1, std::memory_order_release);
  } else {
    file->report("more than 64 record files; this one is written only when its buffer fills", 0);
  }
  return *file;
}

void record_file::append(std::string_view line) {
  {
    const std::lock_guard lock(mutex_);
    const busy_scope busy(busy_);
    if (failed_ || !busy) return;
    append_locked(line);
  }
  // Outside the file's lock: keep_flushing takes the lifecycle lock, which fork handlers take before this one.
  keep_flushing();
}

// The writer's batches: the writer holds its own lock here, so this never starts the background thread (that takes the
// lifecycle lock, which fork handlers take before the writer's); the recording threads start it (record.cpp).
void record_file::append_lines(std::string_view lines) {
  const std::lock_guard lock(mutex_);
  const busy_scope busy(busy_);
  if (failed_ || !busy) return;
  append_lines_locked(lines);
}

void record_file::append_lines_locked(std::string_view lines) {
  std::size_t size = size_.load(std::memory_order_relaxed);
  if (size + lines.size() > capacity) {
    if (withheld()) return withhold(lines);
    write_locked(buffer_.get(), size);
    size = 0;
  }
  if (size == 0 && lines.size() >= capacity / 2 && !withheld()) {  // a writer's batch: its own write, no copy
    write_locked(lines.data(), lines.size());
    return;
  }
  std::memcpy(buffer_.get() + size, lines.data(), lines.size());
  size_.store(size + lines.size(), std::memory_order_release);
  write_if_due();
}

void record_file::append_locked(std::string_view line) {
  std::size_t size = size_.load(std::memory_order_relaxed);
  if (size + line.size() + 1 > capacity) {
    if (withheld()) return withhold(line);
    write_locked(buffer_.get(), size);
    size = 0;
    if (line.size() + 1 > capacity) {  // a line longer than the buffer: its own write, newline included
      std::string whole;
      whole.reserve(line.size() + 1);
      whole.append(line).push_back('\n');
      write_locked(whole.data(), whole.size());
      return;
    }
  }
  std::memcpy(buffer_.get() + size, line.data(), line.size());
  buffer_[size + line.size()] = '\n';
  size_.store(size + line.size() + 1, std::memory_order_release);
  // Without the background thread (exiting, or in a forked child), calls write what is due as they come.
  write_if_due();
}

// Once the exit's last word wrote this file, only its thread writes: a write another thread began could be stopped
// in the middle of a line by the process's end (exit_group), which comes next.
bool record_file::withheld() const noexcept { return sealed_at_exit_ && !last_exit_runs_here(); }

void record_file::write_if_due() noexcept {
  if (withheld()) return;
  if (exiting() || (!flushing() && monotonic_ns() - last_write_ns_ >= flush_interval_ns)) {
    write_locked(buffer_.get(), size_.load(std::memory_order_relaxed));
  }
}

// Lines that do not fit once the exit's last word wrote the file: left out and counted, as the process ends under them.
void record_file::withhold(std::string_view lines) noexcept { withheld_calls_.fetch_add(calls_in_lines(lines)); }

void record_file::flush() noexcept {
  const std::lock_guard lock(mutex_);
  const busy_scope busy(busy_);
  if (busy && !withheld()) write_locked(buffer_.get(), size_.load(std::memory_order_relaxed));
}

void record_file::seal_all_at_exit() noexcept {
  for_each_file([](record_file& f) {
    const std::lock_guard lock(f.mutex_);
    const busy_scope busy(f.busy_);
    if (busy) f.write_locked(f.buffer_.get(), f.size_.load(std::memory_order_relaxed));
    f.sealed_at_exit_ = true;
  });
}

bool record_file::holds(dev_t device, ino_t inode) noexcept {
  bool found = false;
  for_each_file(
      [&](const record_file& f) { found = found || (f.fd_ >= 0 && f.device_ == device && f.inode_ == inode); });
  return found;
}

int record_file::open_for_this_process() noexcept {
  const cancellation_deferred no_cancellation;  // system calls: see cancellation.hpp
  if (!per_process_ || owner_ == getpid() || abandoned_in_child.load()) return 0;
  owner_ = getpid();
  char expanded[output_path_capacity];
  const int fd = expand_pid(path_, expanded) ? open_output_file(expanded, O_APPEND) : (errno = ENAMETOOLONG, -1);
  const int error = fd < 0 ? errno : 0;
  if (fd_ >= 0) ::close(fd_);  // the parent's file: the parent writes it
  fd_ = fd;
  failed_ = fd < 0;
  is_pipe_ = is_pipe(fd_);
  bounded_waits_ = false;
  apply_policy();
  return error;
}

// Called with the mutex held; empties the buffer whatever happens (a failed file drops its lines).
void record_file::write_locked(const char* data, std::size_t size) noexcept {
  if (const int error = open_for_this_process(); error != 0) report("cannot open it for writing", error);
  last_write_ns_ = monotonic_ns();
  if (size > 0 && !failed_) {
    const sigpipe_blocked no_sigpipe(is_pipe_);
    if (bounded_waits_) {
      write_to_pipe(data, size, false);
    } else if (const int error = is_pipe_ ? write_lines_blocking(fd_, data, size) : write_fully(fd_, data, size);
               error != 0) {
      report("cannot write to it", error);
    }
  }
  size_.store(0, std::memory_order_release);
}

void record_file::write_to_pipe(const char* data, std::size_t size, bool in_signal_handler) noexcept {
  std::size_t left_out = size;  // the bytes of `data` not in the pipe
  pipe_write written;
  if (!pending_tail_.empty()) {
    written = write_lines_within(fd_, pending_tail_.data(), pending_tail_.size(), wait_window_end_, unread_wait_ns);
    if (!in_signal_handler) pending_tail_.erase(0, pending_tail_.size() - written.unwritten);
  }
  if (written.error == 0 && written.unwritten == 0) {
    written = write_lines_within(fd_, data, size, wait_window_end_, unread_wait_ns);
    left_out = written.unwritten;
  }
  if (written.error != 0) {
    if (!in_signal_handler) report("cannot write to it", written.error);
    return;
  }
  if (left_out == 0) return;
  const char* rest = data + size - left_out;
  if (left_out != size && rest[-1] != '\n' && !in_signal_handler) {
    // A long line begun: the pipe gets its rest before anything else, so that no line is cut in the middle of the
    // stream (only the last one, if the reader never reads again).
    const std::size_t line_rest = static_cast<const char*>(std::memchr(rest, '\n', left_out)) - rest + 1;
    try {
      pending_tail_.assign(rest, line_rest);
      rest += line_rest;
      left_out -= line_rest;
    } catch (const std::bad_alloc&) {
      pending_tail_.clear();  // the line stays cut; its call is counted below
    }
  }
  unwritten_calls_.fetch_add(calls_in_lines({rest, left_out}));
  if (!in_signal_handler && !stall_reported_) {  // a handler never reads it: the writer thread may be setting it
    stall_reported_ = true;
    log_line("hookscope: HOOKSCOPE_RECORD: " + name() +
             ": its reader did not read for a second (full=drop); from now on what it cannot take at once is left "
             "out and counted (logged at exit)");
  }
}

void record_file::apply_policy() noexcept {
  const bool bounded = is_pipe_ && dropping_target_ && !waiting_target_;
  if (bounded != bounded_waits_ && fd_ >= 0 && set_nonblocking(fd_, bounded)) bounded_waits_ = bounded;
}

void record_file::wait_for_readers() {
  const std::lock_guard lock(mutex_);
  waiting_target_ = true;
  apply_policy();
}

void record_file::wait_at_most_for_readers() {
  const std::lock_guard lock(mutex_);
  dropping_target_ = true;
  apply_policy();
}

void record_file::report_unwritten_all() noexcept {
  if (abandoned_in_child.load()) return;  // the counts are the parent's, which reports them
  for_each_file([](record_file& f) {
    std::uint64_t calls = f.unwritten_calls_.exchange(0);
    if (!f.pending_tail_.empty()) ++calls;  // a line begun and never finished: the reader skips it as cut
    char room[output_path_capacity];
    if (calls != 0) {  // raw: shown() allocates
      write_unwritten_line(f.name_in(room), calls, "its reader did not read for a second (full=drop)");
    }
    if (const std::uint64_t withheld = f.withheld_calls_.exchange(0); withheld != 0) {
      write_unwritten_line(f.name_in(room), withheld, "other threads ended them while the program exited");
    }
  });
}

// The file this process writes: after a fork(), a path with %p names the child's own file (open_for_this_process),
// not the one its parent opened, and every message is about this process's calls.
std::string_view record_file::name_in(char (&room)[output_path_capacity]) const noexcept {
  return expand_pid(path_, room) ? std::string_view(room) : std::string_view(path_);
}

std::string record_file::name() const {
  char room[output_path_capacity];
  return shown(name_in(room));
}

void record_file::report(const char* what, int error) noexcept {
  failed_ = true;
  try {
    std::string line = "hookscope: HOOKSCOPE_RECORD: " + name() + ": " + what;
    if (error != 0) line.append(" (").append(std::strerror(error)).append(")");
    log_line(line + "; its calls are not recorded");
  } catch (...) {
    log_line("hookscope: HOOKSCOPE_RECORD: a record file failed (reporting which: out of memory)");
  }
}

void record_file::flush_all() noexcept {
  for_each_file([](record_file& f) { f.flush(); });
}

void record_file::write_all_from_signal_handler() noexcept {
  const cancellation_deferred no_cancellation;  // system calls: see cancellation.hpp
  // No lock (not async-signal-safe): the handler takes the files over (`sealed`), then waits for a thread that is
  // appending or writing to finish (up to 200 ms), so that it writes each batch once and never a line in the making.
  // The lines below size_ are whole. Only when the signal interrupted this very thread in a write, or the wait ran
  // out, may a batch be written twice; a line is never cut.
  sealed.store(true);
  const pid_t self = this_thread_id();
  for_each_file([self](record_file& f) {
    for (int waited = 0; waited < 200; ++waited) {
      const pid_t holder = f.busy_.load();
      if (holder == 0 || holder == self) break;
      const timespec one_ms{0, 1'000'000};
      (void)::nanosleep(&one_ms, nullptr);
    }
    (void)f.open_for_this_process();
    const std::size_t size = f.size_.load(std::memory_order_acquire);
    if (f.fd_ >= 0 && !f.failed_ && size > 0) f.write_from_signal_handler(f.buffer_.get(), size);
    f.size_.store(0, std::memory_order_release);  // written: whatever runs after this handler must not repeat it
  });
}

void record_file::write_from_signal_handler(const char* lines, std::size_t size) noexcept {
  (void)open_for_this_process();
  if (fd_ < 0 || failed_ || size == 0) return;
  const sigpipe_blocked no_sigpipe(is_pipe_);
  // A dying program waits for a pipe's reader one window at most, whatever the policy: a crash must not become a hang.
  if (is_pipe_ && !bounded_waits_) bounded_waits_ = set_nonblocking(fd_, true);
  if (bounded_waits_) {
    write_to_pipe(lines, size, true);
  } else {
    (void)write_fully(fd_, lines, size);
  }
}

void record_file::lock_all_for_fork() noexcept {
  files_mutex.lock();
  for_each_file([](record_file& f) { f.mutex_.lock(); });
}

void record_file::abandon_all_in_child() noexcept {
  abandoned_in_child.store(true);
  sealed.store(true);
  new (&files_mutex) std::mutex;
  // The frame the fork interrupted may be past every test, in the middle of writing a batch (blocked on a pipe): its
  // writes in this child go to /dev/null, so that the parent's lines are written once, by the parent. dup2(2) keeps
  // the descriptor's number, which the frame holds; open(2) and dup2(2) are async-signal-safe.
  const int null = ::open("/dev/null", O_WRONLY | O_CLOEXEC);
  for_each_file([null](record_file& f) {
    new (&f.mutex_) std::mutex;
    if (null >= 0 && f.fd_ >= 0) (void)::dup3(null, f.fd_, O_CLOEXEC);
  });
  if (null >= 0) ::close(null);
}

void record_file::unlock_all_after_fork(bool in_child) noexcept {
  for_each_file([in_child](record_file& f) {
    if (in_child) {  // the parent writes these lines, and counts what its pipe left out, not the child
      f.size_.store(0, std::memory_order_relaxed);
      f.pending_tail_.clear();
      f.unwritten_calls_.store(0, std::memory_order_relaxed);
      f.withheld_calls_.store(0, std::memory_order_relaxed);
      f.wait_window_end_.store(0, std::memory_order_relaxed);
      f.stall_reported_ = false;
    }
    f.mutex_.unlock();
  });
  files_mutex.unlock();
}

}  // namespace detail
HOOKSCOPE_DETAIL_END_NAMESPACE
