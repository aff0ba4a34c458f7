// HOOKSCOPE_RECORD's writer: formats the calls the recording threads copied into their buffers (record_buffers.hpp)
// as record lines, into their files (record_file.hpp), off the calling threads. It runs on the background thread
// every 100 ms and when a buffer is half full, at exit, and on fatal signals (without a lock or an allocation); a
// forked child and the exit, which have no background thread, write as calls come.
#include "settings.hpp"

#if HOOKSCOPE_ENABLED

#include "lifecycle.hpp"
#include "record_buffers.hpp"
#include "recorded_function.hpp"

#include "../cancellation.hpp"
#include "../json_writer.hpp"
#include "../tick_clock.hpp"

#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <atomic>
#include <charconv>
#include <mutex>
#include <new>
#include <string>
#include <string_view>

HOOKSCOPE_DETAIL_BEGIN_NAMESPACE
namespace detail {

std::atomic<std::uint64_t> record_generation{0};

namespace {

constinit std::mutex writer_mutex;            // one writer at a time
constinit std::atomic<pid_t> writer_busy{0};  // the thread holding it, for the signal handler

// Room to format one line in a signal handler, made at install (nothing is allocated in the handler).
constexpr std::size_t signal_line_bytes = std::size_t{4} << 20;
char* signal_line = nullptr;

pid_t this_thread_id() noexcept { return static_cast<pid_t>(::syscall(SYS_gettid)); }

// Whether the line of `f` being written now is its first in this process (then signed). Under writer_mutex, or in
// the signal handler; the value tree's path signs under f.first_line_mutex, which this takes too.
bool take_signature(recorded_function& f) {
  if (f.signature_written.load(std::memory_order_acquire)) return false;
  const std::lock_guard lock(f.first_line_mutex);
  return !f.signature_written.exchange(true, std::memory_order_acq_rel);
}

// `{"function":"f","dropped":{"count":N,"reason":"buffer_full"}}` (docs/record_format.md, "Notes"): the one writer of
// notes, whatever the reason.
template <class Out>
void append_drop_note(Out& out, const recorded_function& f, std::uint64_t count, std::string_view reason) {
  out += f.parts.prefix;
  out += dropped_count_key;
  char digits[24];
  out.append(digits, std::to_chars(digits, digits + sizeof digits, count).ptr);
  out += ",\"reason\":\"";
  out += reason;
  out += "\"}}";
}

// The notes of the calls dropped since the last ones, one per function and reason, at most one a second per function
// and reason but at exit (`all`): a long run that keeps dropping adds a line a second, not one per round.
// `write(f, count, reason)`.
constexpr std::int64_t note_interval_ns = 1'000'000'000;

template <class Write>
void note_drops(Write write, bool all) {
  if (record_feature == nullptr) return;
  const std::int64_t now = monotonic_ns();
  for (const auto& f : record_feature->functions) {
    for (dropped_calls* calls : f->drop_counts()) {
      const std::uint64_t dropped = calls->count.load(std::memory_order_relaxed);
      if (dropped == calls->noted || (!all && now - calls->noted_ns < note_interval_ns)) continue;
      write(*f, dropped - calls->noted, calls->reason);
      calls->noted = dropped;
      calls->noted_ns = now;
    }
  }
}

// Hands every message committed so far in every thread's ring to `handle`, in the order the calls ended (as when each
// call wrote its own line): the rings merged by end time, up to `merged` rings at a time. Messages committed meanwhile
// wait for the next round, so that a round ends however fast threads record. Stops when `stop()`.
constexpr std::size_t merged = 64;

template <class Handle, class Stop>
void for_each_message(Handle handle, Stop stop) noexcept {
  record_thread* next = first_record_thread();
  while (next != nullptr && !stop()) {
    record_ring* rings[merged];
    std::uint64_t until[merged];
    std::size_t n = 0;
    for (; next != nullptr && n < merged; next = next->next, ++n) {
      rings[n] = &next->ring;
      until[n] = rings[n]->committed();
    }
    while (!stop()) {
      record_ring* oldest = nullptr;
      const record_message* first = nullptr;
      for (std::size_t i = 0; i < n; ++i) {
        const record_message* m = rings[i]->front(until[i]);
        if (m != nullptr && (first == nullptr || m->end_ticks < first->end_ticks)) {
          first = m;
          oldest = rings[i];
        }
      }
      if (first == nullptr) break;
      handle(*first);
      oldest->pop(*first);
    }
    for (std::size_t i = 0; i < n; ++i) rings[i]->wake_producer();
  }
}

// Lines for one file, formatted straight into a fixed buffer and appended to the file in one go: one lock of the
// file per batch, not per line, and no allocation. A line longer than the buffer is formatted into a string.
class line_batch {
 public:
  template <class AppendLine>
  void add(record_file& file, AppendLine append_line) {
    if (&file != file_) flush();
    file_ = &file;
    for (int attempt = 0; attempt < 2; ++attempt) {
      const std::size_t room = capacity - size_;                  // size_ <= capacity
      fixed_text text(lines_ + size_, room == 0 ? 0 : room - 1);  // and room for the newline
      append_line(text);
      if (!text.overflowed()) {
        lines_[size_ + text.size()] = '\n';
        size_ += text.size() + 1;
        return;
      }
      flush();
      file_ = &file;
    }
    std::string line;
    append_line(line);
    line.push_back('\n');
    file.append_lines(line);
  }
  void flush() noexcept {
    if (file_ != nullptr && size_ != 0) file_->append_lines({lines_, size_});
    size_ = 0;
  }

 private:
  static constexpr std::size_t capacity = 256 * 1024;
  record_file* file_ = nullptr;
  std::size_t size_ = 0;
  char lines_[capacity];
};

void drain_locked(bool all_notes) noexcept {
  const double ns_per_tick = tick_clock::ns_per_tick();
  // Never destroyed (calls made by static destructors are written after it would be); its capacity is kept: no
  // allocation per line once the lines' size is reached.
  static line_batch& batch = *new line_batch;
  for_each_message(
      [&](const record_message& m) noexcept {
        auto& f = *static_cast<recorded_function*>(const_cast<void*>(m.function));
        try {
          const bool sign = take_signature(f);
          batch.add(*f.file, [&](auto& out) { append_record_line(out, f.parts, sign, m, ns_per_tick, &f.memo); });
        } catch (...) {
          log_line("hookscope: HOOKSCOPE_RECORD: a call is not recorded (out of memory)");
        }
      },
      []() noexcept { return record_sealed_flag.load(std::memory_order_relaxed); });
  try {
    const std::lock_guard lock(record_feature->mutex);
    note_drops(
        [](recorded_function& f, std::uint64_t count, std::string_view reason) {
          batch.add(*f.file, [&](auto& out) { append_drop_note(out, f, count, reason); });
        },
        all_notes);
  } catch (...) {
    log_line("hookscope: HOOKSCOPE_RECORD: a note of dropped calls is not written (out of memory)");
  }
  batch.flush();
}

// The background thread's round: inside the recording path, so that a signal handler interrupting it here (while it
// holds the writer's lock or a file's) does not wait for them (record.cpp: record_pre).
void drain_and_flush() noexcept {
  if (writes_withheld()) return;  // the exit's last word drains and writes
  const recording_path_scope path;
  drain_buffers();
  record_file::flush_all();
}

// At exit() (the static destructors' calls are still to come, and other threads may still record) and again as the
// process's last word, when only this thread writes: the counts of calls not written are reported by the last.
void drain_and_flush_at_exit() noexcept {
  const recording_path_scope path;
  drain_buffers(true);
  record_file::flush_all();
  if (!last_exit_registered()) record_file::report_unwritten_all();
}

void drain_and_flush_last() noexcept {
  const recording_path_scope path;
  drain_buffers(true);
  record_file::seal_all_at_exit();
  record_file::report_unwritten_all();
}

//=== fatal signals ===//

void write_line_from_signal_handler(recorded_function& f, fixed_text& text) noexcept {
  if (text.overflowed()) {
    text.clear();
    append_drop_note(text, f, 1, "too_large_at_signal");
  }
  text.push_back('\n');
  f.file->write_from_signal_handler(text.data(), text.size());
}

// Async-signal-safe: no lock, no allocation. Takes the buffers over (nothing more is committed), waits for a writer
// in the middle of a line (up to 200 ms, as record_file does), writes the files' buffers, then formats and writes what
// the threads' buffers hold, and the drop notes.
void write_from_signal_handler() noexcept {
  const cancellation_deferred no_cancellation;  // system calls: see cancellation.hpp
  const recording_path_scope path;              // a handler nested in this one records nothing
  record_sealed_flag.store(true);
  const pid_t self = this_thread_id();
  for (int waited = 0; waited < 200; ++waited) {
    const pid_t holder = writer_busy.load();
    if (holder == 0 || holder == self) break;
    const timespec one_ms{0, 1'000'000};
    (void)::nanosleep(&one_ms, nullptr);
  }
  record_file::write_all_from_signal_handler();
  if (signal_line == nullptr || record_feature == nullptr) return record_file::report_unwritten_all();
  const double ns_per_tick = tick_clock::ns_per_tick();
  fixed_text text(signal_line, signal_line_bytes - 1);  // room for the newline
  for_each_message(
      [&](const record_message& m) noexcept {
        auto& f = *static_cast<recorded_function*>(const_cast<void*>(m.function));
        text.clear();
        const bool sign = !f.signature_written.exchange(true);
        append_record_line(text, f.parts, sign, m, ns_per_tick, nullptr);
        write_line_from_signal_handler(f, text);
      },
      []() noexcept { return false; });
  // The function list grows under its mutex: the notes are written only when no thread holds it (a try_lock: an
  // atomic exchange, nothing that can block in a signal handler).
  if (record_feature->mutex.try_lock()) {
    note_drops(
        [&](recorded_function& f, std::uint64_t count, std::string_view reason) {
          text.clear();
          append_drop_note(text, f, count, reason);
          write_line_from_signal_handler(f, text);
        },
        true);
    record_feature->mutex.unlock();
  }
  record_file::report_unwritten_all();
}

//=== fork() ===//

// The forking thread's in_recording_path before fork_prepare, restored by fork_release; per thread, as two threads
// may fork at once (glibc runs their fork handlers side by side).
constinit thread_local bool outer_path_at_fork = false;
// Whether this thread's fork takes no lock: it is from a signal handler that interrupted the thread inside hookscope
// (its recording path, or the lifecycle's lock held), whose frame below may hold any of the locks or wait for one.
// Taking them would wait for itself, or for a thread that waits for the lifecycle's lock. Its child gives up recording.
constinit thread_local bool fork_takes_no_lock = false;

// The locks in the order every path takes them: the writer's, the function list's, the pairings', the files'. Inside
// the recording path until they are released: a signal handler's call meanwhile must not wait for them.
void fork_prepare() noexcept {
  outer_path_at_fork = enter_recording_path();
  fork_takes_no_lock = outer_path_at_fork || lifecycle_lock_held_here();
  if (fork_takes_no_lock) return;
  writer_mutex.lock();
  record_feature->mutex.lock();
  for (const auto& f : record_feature->functions) f->pairing.lock_for_fork();
  record_file::lock_all_for_fork();
}

// The child of a fork that took no lock: its state may be half changed by the frame the signal interrupted, and a lock
// may be held by a thread that does not exist in it. It records nothing (its calls, and the interrupted frame when it
// resumes, find everything sealed), makes the locks afresh so that the resumed frame cannot wait forever, and says
// so once on stderr (async-signal-safe: the fork may be in a signal handler).
void abandon_recording_in_child() noexcept {
  record_abandoned_flag.store(true);
  record_sealed_flag.store(true);
  new (&writer_mutex) std::mutex;
  new (&record_feature->mutex) std::mutex;
  for (const auto& f : record_feature->functions) f->pairing.reset_lock_in_child();
  record_file::abandon_all_in_child();
  char digits[24];
  const char* end = std::to_chars(digits, digits + sizeof digits, static_cast<long>(::getpid())).ptr;
  const std::string_view pieces[] = {
      "hookscope: HOOKSCOPE_RECORD: fork() from a signal handler that interrupted hookscope: the child process ",
      std::string_view(digits, static_cast<std::size_t>(end - digits)), " records no calls\n"};
  write_stderr_line(pieces);
}

// The child forgets what its parent's threads copied (the parent writes it) and the calls in flight (the parent
// records them: the generation tells them apart); the buffers of the parent's other threads are free for its own.
void fork_release(bool in_child) noexcept {
  if (fork_takes_no_lock) {
    if (in_child) abandon_recording_in_child();
    leave_recording_path(outer_path_at_fork);
    return;
  }
  record_file::unlock_all_after_fork(in_child);
  if (in_child) {
    record_generation.fetch_add(1, std::memory_order_relaxed);
    record_thread* mine = this_record_thread_if_any();
    for (record_thread* t = first_record_thread(); t != nullptr; t = t->next) {
      t->ring.discard();
      if (t != mine) {
        t->calls.clear();
        t->released.store(true, std::memory_order_relaxed);
      }
    }
  }
  for (const auto& f : record_feature->functions) {
    if (in_child) {
      // The parent's signed first line may still be in its buffer: the child signs its own. Its drops are its own.
      f->signature_written.store(false, std::memory_order_relaxed);
      for (dropped_calls* calls : f->drop_counts()) {
        calls->count.store(0, std::memory_order_relaxed);
        calls->noted = 0;
        calls->noted_ns = 0;
      }
    }
    f->pairing.unlock_after_fork(in_child);
  }
  record_feature->mutex.unlock();
  writer_mutex.unlock();
  leave_recording_path(outer_path_at_fork);
}

}  // namespace

void drain_buffers(bool all_notes) noexcept {
  const std::lock_guard lock(writer_mutex);
  writer_busy.store(this_thread_id());
  if (!record_sealed_flag.load()) drain_locked(all_notes || exiting());
  writer_busy.store(0);
}

constinit std::atomic<bool> record_sealed_flag{false};

constinit std::atomic<bool> record_abandoned_flag{false};

void install_record_writer() noexcept {
  void* room =
      ::mmap(nullptr, signal_line_bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  signal_line = room == MAP_FAILED ? nullptr : static_cast<char*>(room);
  add_exit_action({&drain_and_flush_at_exit, &write_from_signal_handler});
  add_last_exit_action(&drain_and_flush_last);
  add_periodic_flush(&drain_and_flush);
  add_fork_handlers(
      &fork_prepare, []() noexcept { fork_release(false); }, []() noexcept { fork_release(true); });
}

}  // namespace detail
HOOKSCOPE_DETAIL_END_NAMESPACE

#endif  // HOOKSCOPE_ENABLED
