// HOOKSCOPE_TIMELINE=<glob>[,<glob>...]=<path>[events=N]: every call of a matching observable becomes a complete
// event ("ph":"X") of a Chrome trace-event JSON file written at exit and on fatal signals, which Perfetto UI and
// chrome://tracing open: `ts`/`dur` in µs, `pid`, `tid`, the formatted arguments under `args`, one thread_name
// metadata event per thread. Nested calls nest. Flight recorder: each thread keeps the last N events (default
// 16384) in a ring, so a long run keeps its end. `%p` in the path becomes the process id (one file per process).
#include "settings.hpp"

#if HOOKSCOPE_ENABLED

#include "call_clock.hpp"
#include "fd_writer.hpp"
#include "lifecycle.hpp"

#include "hookscope/detail/fixed_string.hpp"
#include "hookscope/callback_errors.hpp"
#include "hookscope/registry.hpp"

#include <fcntl.h>
#include <pthread.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <atomic>
#include <charconv>
#include <cerrno>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

HOOKSCOPE_DETAIL_BEGIN_NAMESPACE
namespace detail {
namespace {

constexpr std::size_t default_events = 16384;
constexpr std::size_t args_capacity = 160;  // bytes of formatted arguments kept per event (cut at an argument)

struct event {
  const function_info* function;
  std::int64_t start;  // ticks (call_clock.hpp)
  std::int64_t duration;
  bool threw;
  std::uint16_t args_size;
  char args[args_capacity];  // `"name":"value",...` without the braces
};

// One thread's ring. Only its thread writes it; rings are never freed (the file is written at exit, and threads
// that ended still have their events). Reached from a list with an atomic head, which the signal handler walks.
struct thread_ring {
  std::int64_t tid = 0;
  char name[16] = {};
  std::size_t capacity = 0;
  std::atomic<std::uint64_t> written{0};  // events ever written; the ring holds the last `capacity`
  event* events = nullptr;
  std::atomic<thread_ring*> next{nullptr};
};

struct timeline_state {
  std::vector<std::string> globs;
  std::string path;  // may hold %p
  std::size_t events = default_events;
  std::atomic<thread_ring*> head{nullptr};
};
timeline_state* state = nullptr;

constinit thread_local call_clock clock_of_thread;
constinit thread_local thread_ring* ring_of_thread = nullptr;

thread_ring* ring_for_this_thread() {
  if (ring_of_thread != nullptr) return ring_of_thread;
  auto* ring = new thread_ring;
  ring->tid = static_cast<std::int64_t>(::syscall(SYS_gettid));
  (void)pthread_getname_np(pthread_self(), ring->name, sizeof ring->name);
  ring->capacity = state->events;
  ring->events = new event[ring->capacity];
  push_front(state->head, ring);
  ring_of_thread = ring;
  return ring;
}

// `"name":"value",...` into e.args, leaving out the arguments that do not fit whole.
void format_args(const erased_call& call, event& e) {
  std::size_t size = 0;
  for (std::size_t i = 0; i < call.args_given(); ++i) {  // an omitted argument has no entry
    const std::size_t before = size;
    auto put = [&](char c) {
      if (size < args_capacity) e.args[size] = c;
      ++size;
    };
    if (i != 0) put(',');
    put('"');
    for (char c : call.arg_name(i)) put(c);
    put('"');
    put(':');
    put('"');
    for (char c : call.format_arg(i)) {
      if (c == '"' || c == '\\') put('\\');
      put(static_cast<unsigned char>(c) < 0x20 ? ' ' : c);
    }
    put('"');
    if (size > args_capacity) {  // this argument does not fit: the event keeps the ones before it
      size = before;
      break;
    }
  }
  e.args_size = static_cast<std::uint16_t>(size);
}

void on_pre(const erased_call& call) { clock_of_thread.start(call.call_id()); }

void on_post(const erased_call& call) {
  const call_clock::timing t = clock_of_thread.stop(call.call_id());
  if (t.duration < 0) return;
  thread_ring* ring = ring_for_this_thread();
  const std::uint64_t n = ring->written.load(std::memory_order_relaxed);
  event& e = ring->events[n % ring->capacity];
  e.function = &call.function();
  e.start = t.start;
  e.duration = t.duration;
  e.threw = static_cast<bool>(call.exception());
  format_args(call, e);
  ring->written.store(n + 1, std::memory_order_release);
}

// The whole file; async-signal-safe (the same code serves exit and fatal signals).
void write_timeline(int fd) noexcept {
  fd_writer w(fd);
  const auto pid = static_cast<std::int64_t>(getpid());
  const double ns_per_tick = tick_clock::ns_per_tick();
  const auto ns = [ns_per_tick](std::int64_t ticks) {
    return static_cast<std::int64_t>(static_cast<double>(ticks) * ns_per_tick + 0.5);
  };
  w.text("{\"traceEvents\":[");
  bool first = true;
  auto separator = [&] {
    w.text(first ? "\n" : ",\n");
    first = false;
  };
  for (thread_ring* r = state->head.load(std::memory_order_acquire); r != nullptr;
       r = r->next.load(std::memory_order_acquire)) {
    separator();
    w.text("{\"name\":\"thread_name\",\"ph\":\"M\",\"pid\":")
        .signed_number(pid)
        .text(",\"tid\":")
        .signed_number(r->tid);
    w.text(",\"args\":{\"name\":");
    if (r->name[0] != '\0') {
      w.json_string(std::string_view(r->name, strnlen(r->name, sizeof r->name)));
    } else {
      w.text("\"thread ").signed_number(r->tid).text("\"");
    }
    w.text("}}");
    const std::uint64_t written = r->written.load(std::memory_order_acquire);
    const std::uint64_t begin = written > r->capacity ? written - r->capacity : 0;
    for (std::uint64_t i = begin; i < written; ++i) {
      const event& e = r->events[i % r->capacity];
      separator();
      w.text("{\"name\":").json_string(e.function->name).text(",\"cat\":\"hookscope\",\"ph\":\"X\",\"ts\":");
      // ts from the start and its end from the same origin, so that nested events stay nested once rounded.
      const std::int64_t start = ns(e.start - tick_clock::start_ticks());
      w.microseconds(start)
          .text(",\"dur\":")
          .microseconds(ns(e.start + e.duration - tick_clock::start_ticks()) - start);
      w.text(",\"pid\":").signed_number(pid).text(",\"tid\":").signed_number(r->tid).text(",\"args\":{");
      w.text(std::string_view(e.args, e.args_size));
      if (e.threw) w.text(e.args_size > 0 ? ",\"threw\":true" : "\"threw\":true");
      w.text("}}");
    }
  }
  w.text("\n],\"displayTimeUnit\":\"ms\"}\n");
}

// The path with %p replaced by the process id; into a fixed buffer (signal handlers too). False if too long.
bool expand_path(char (&out)[4096]) noexcept {
  std::size_t n = 0;
  const std::string& path = state->path;
  for (std::size_t i = 0; i < path.size(); ++i) {
    if (path[i] == '%' && i + 1 < path.size() && path[i + 1] == 'p') {
      const auto [end, ec] = std::to_chars(out + n, out + sizeof out - 1, static_cast<long>(getpid()));
      if (ec != std::errc()) return false;
      n = static_cast<std::size_t>(end - out);
      ++i;
    } else {
      if (n + 1 >= sizeof out) return false;
      out[n++] = path[i];
    }
  }
  out[n] = '\0';
  return true;
}

int open_output() noexcept {
  char path[4096];
  if (!expand_path(path)) return -1;
  return ::open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
}

void write_at_exit() noexcept {
  const int fd = open_output();
  if (fd < 0) {
    log_line("hookscope: HOOKSCOPE_TIMELINE: " + state->path + ": cannot open it for writing (" + std::strerror(errno) +
             ")");
    return;
  }
  write_timeline(fd);
  ::close(fd);
}

void write_from_signal_handler() noexcept {
  const int fd = open_output();
  if (fd < 0) return;
  write_timeline(fd);
  ::close(fd);
}

void forget_parent_events() noexcept {  // in a forked child: its file holds its own calls only
  for (thread_ring* r = state->head.load(std::memory_order_acquire); r != nullptr;
       r = r->next.load(std::memory_order_acquire)) {
    r->written.store(0, std::memory_order_relaxed);
  }
}

void trace_if_matching(const function_info& info) noexcept {
  if (matches_any(state->globs, info.name)) attach_for_good(info, "HOOKSCOPE_TIMELINE", &on_pre, &on_post);
}

}  // namespace

void install_timeline() noexcept {
  try {
    const char* text = std::getenv("HOOKSCOPE_TIMELINE");
    globs_and_path setting = split_globs_and_path(text);
    if (setting.globs.empty() && setting.path.empty()) return;  // the common case: no hook, nothing allocated
    std::string_view path = setting.path;
    std::size_t events = default_events;
    if (path.ends_with(']')) {
      const std::size_t open = path.rfind("[events=");
      const std::string_view number =
          open == std::string_view::npos ? std::string_view{} : path.substr(open + 8, path.size() - open - 9);
      const auto [end, ec] = std::from_chars(number.data(), number.data() + number.size(), events);
      if (open == std::string_view::npos || ec != std::errc() || end != number.data() + number.size() || events == 0) {
        path = {};
      } else {
        path = trim(path.substr(0, open));
      }
    }
    if (setting.globs.empty() || path.empty()) {
      log_line(std::string("hookscope: HOOKSCOPE_TIMELINE: expected <glob>[,<glob>...]=<path>[events=N] (N a "
                           "positive integer), got '") +
               text + "'; ignored");
      return;
    }
    auto* s = new timeline_state;
    s->events = events;
    s->path = std::string(path);
    s->globs = std::move(setting.globs);
    tick_clock::start();
    state = s;
    add_exit_action({&write_at_exit, &write_from_signal_handler});
    add_fork_handlers([]() noexcept {}, []() noexcept {}, &forget_parent_events);
    add_registration_hook(&trace_if_matching);
  } catch (...) {
    log_line("hookscope: HOOKSCOPE_TIMELINE: could not read the variable (out of memory)");
  }
}

}  // namespace detail
HOOKSCOPE_DETAIL_END_NAMESPACE

#endif  // HOOKSCOPE_ENABLED
