// Callback error policy and the log sink.
#include "hookscope/callback_errors.hpp"
#include "hookscope/exceptions.hpp"
#include "cancellation.hpp"
#include "reentry_scope.hpp"

#include <sys/uio.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdio>
#include <exception>
#include <memory>
#include <mutex>
#include <string>
#include <utility>

HOOKSCOPE_DETAIL_BEGIN_NAMESPACE

namespace {

struct log_state {
  std::mutex mutex;
  std::shared_ptr<const log_sink> sink;  // null: the default sink (stderr)
};

// Leaked on purpose: logging must keep working while other statics are being destroyed.
log_state& logger() {
  static log_state* state = new log_state;
  return *state;
}

constinit std::atomic<bool> rethrow_flag{false};
constinit thread_local signed char thread_rethrow = -1;  // a scope's mode on this thread, or -1

void write_stderr(std::string_view line) noexcept {
  const detail::cancellation_deferred no_cancellation;  // system calls: see cancellation.hpp
  std::string text;
  try {
    text.reserve(line.size() + 1);
    text.append(line).push_back('\n');
  } catch (...) {
    return;
  }
  // One write per line, so that lines from several threads do not interleave.
  std::fwrite(text.data(), 1, text.size(), stderr);
}

// The line and its newline in one writev(2), nothing allocated, no lock: for a line logged by a signal handler that
// interrupted log_line on its thread (async-signal-safe).
void write_stderr_raw(std::string_view line) noexcept {
  const detail::cancellation_deferred no_cancellation;
  iovec pieces[] = {{const_cast<char*>(line.data()), line.size()}, {const_cast<char*>("\n"), 1}};
  while (::writev(STDERR_FILENO, pieces, 2) < 0 && errno == EINTR) {
  }
}

// Whether this thread is inside log_line: a signal handler that interrupted it there and logs must not wait for the
// logger's lock that the frame below holds (nor enter the sink, or malloc, again).
constinit thread_local bool logging = false;

}  // namespace

void set_log_sink(log_sink sink) {
  std::shared_ptr<const log_sink> next;
  if (sink) next = std::make_shared<const log_sink>(std::move(sink));
  const std::lock_guard lock(logger().mutex);
  logger().sink.swap(next);
}

void set_rethrow_callback_exceptions(bool rethrow) noexcept { rethrow_flag.store(rethrow, std::memory_order_relaxed); }

bool rethrow_callback_exceptions() noexcept {
  return thread_rethrow >= 0 ? thread_rethrow == 1 : rethrow_flag.load(std::memory_order_relaxed);
}

namespace detail {

signed char exchange_thread_rethrow(signed char mode) noexcept { return std::exchange(thread_rethrow, mode); }

std::string_view message_clause(const std::exception& e) noexcept { return sentence_of(e); }

void log_line(std::string_view line) noexcept {
  const reentry_scope scope(logging);
  if (scope.reentered()) return write_stderr_raw(line);
  std::shared_ptr<const log_sink> sink;
  {
    const std::lock_guard lock(logger().mutex);
    sink = logger().sink;
  }
  if (!sink) return write_stderr(line);
  try {
    (*sink)(line);
  } catch (...) {
    write_stderr("hookscope: the log sink threw an exception; this line went to stderr instead:");
    write_stderr(line);
  }
}

std::string describe_exception(const std::exception_ptr& e) {
  if (!e) return "no exception (a thread being cancelled or exiting, not an exception)";
  try {
    std::rethrow_exception(e);
  } catch (const std::exception& ex) {
    return std::string(sentence_of(ex));  // quoted after "hookscope: ...": the library's own, without their prefix
  } catch (...) {
    return "an exception not derived from std::exception";
  }
}

bool callback_exception_leaves() noexcept {
  // No current exception inside a catch (...) is a foreign unwind: glibc's forced unwind of pthread_exit or
  // pthread_cancel (abi::__forced_unwind). It must go on, or the thread cannot end; neither logged nor counted.
  return rethrow_callback_exceptions() || !std::current_exception();
}

void handle_callback_exception(std::string_view observer_name) {
  if (callback_exception_leaves()) throw;
  try {
    std::string message = "hookscope: a callback of observer '";
    message.append(observer_name).append("' threw: ").append(describe_exception(std::current_exception()));
    log_line(message);
  } catch (...) {
    log_line("hookscope: a callback threw, and reporting it failed (out of memory)");
  }
}

}  // namespace detail
HOOKSCOPE_DETAIL_END_NAMESPACE
