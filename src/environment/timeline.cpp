// HOOKSCOPE_TIMELINE=<glob>[,<glob>...]=<path>[events=N]: every call of a matching observable becomes a complete
// event ("ph":"X") of a Chrome trace-event JSON file written at exit and on fatal signals, which Perfetto UI and
// chrome://tracing open: `ts`/`dur` in µs, `pid`, `tid`, the formatted arguments under `args`, one thread_name
// metadata event per thread. Nested calls nest; a call that does not nest with the others of the thread that ended it
// (calls that suspend in fibers interleave), or that began on another thread, is an async event pair ("ph":"b"/"e"
// with an id), since a viewer refuses complete events that overlap on one track. Flight recorder: each thread keeps
// the last N events (default 16384) in a ring, so a long run keeps its end. `%p` in the path becomes the process id
// (one file per process). Copies of the library in plugins hand their events to the first copy, which writes one
// file (hub.hpp).
#include "settings.hpp"
#include "../cancellation.hpp"

#if HOOKSCOPE_ENABLED

#include "../reentry_scope.hpp"
#include "../tick_clock.hpp"
#include "fd_writer.hpp"
#include "hub.hpp"
#include "json_text.hpp"
#include "lifecycle.hpp"
#include "record_file.hpp"
#include "timeline_args.hpp"

#include "hookscope/detail/fixed_string.hpp"
#include "hookscope/callback_errors.hpp"
#include "hookscope/registry.hpp"

#include <fcntl.h>
#include <pthread.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <charconv>
#include <cerrno>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <new>
#include <string>
#include <type_traits>
#include <vector>

HOOKSCOPE_DETAIL_BEGIN_NAMESPACE
namespace detail {
namespace {

constexpr std::size_t default_events = 16384;
constexpr std::uint64_t max_events = 1 << 20;  // 192 MiB per thread
constexpr std::size_t args_capacity = 160;     // bytes of formatted arguments per event (timeline_args.hpp)

struct event {
  const function_info* function;
  std::int64_t start;  // ticks (tick_clock.hpp)
  std::int64_t duration;
  bool threw;
  bool migrated;  // began on another thread than the one that ended it (a fiber resumed elsewhere)
  // The arguments copied raw on the call (pack_timeline_args), `args_size` of them, formatted when the file is
  // written; else their text (format_timeline_args), `args_size` bytes.
  bool packed;
  std::uint8_t unused;
  std::uint16_t args_size;
  char args[args_capacity];  // `"name":"value",...` without the braces, or the packed arguments

  std::size_t args_bytes() const noexcept { return packed ? args_size * packed_arg_size : args_size; }
};
static_assert(offsetof(event, args) == 30);

// A ring slot: an event as words, each stored and loaded atomically, so that the file written at exit can copy a
// slot its thread is overwriting without a data race; the copy is then checked against the ring's count (a sequence
// lock whose count is `written`). The words are stored with release and loaded with acquire (plain moves on x86):
// a copy that saw any word of a newer event also sees the count that event's thread had published before it, so
// the check finds it. No fences: GCC's ThreadSanitizer refuses them.
struct slot {
  static constexpr std::size_t words = (sizeof(event) + 7) / 8;
  std::uint64_t word[words];

  // Only the words the event uses (its header and its arguments): the rest of the slot keeps an older event's bytes,
  // which nothing reads. `e` is initialised up to the end of its last used word.
  void store(const event& e) noexcept {
    const std::size_t used = (offsetof(event, args) + e.args_bytes() + 7) / 8;
    for (std::size_t i = 0; i < used; ++i) {
      std::uint64_t w;
      std::memcpy(&w, reinterpret_cast<const char*>(&e) + i * 8, 8);
      std::atomic_ref<std::uint64_t>(word[i]).store(w, std::memory_order_release);
    }
  }
  void load(event& e) noexcept {
    std::uint64_t w[words];
    for (std::size_t i = 0; i < words; ++i)
      w[i] = std::atomic_ref<std::uint64_t>(word[i]).load(std::memory_order_acquire);
    std::memcpy(static_cast<void*>(&e), w, sizeof e);
  }
};
static_assert(std::is_trivially_copyable_v<event>);

// One thread's ring. Only its thread writes it; rings are never freed (the file is written at exit, and threads
// that ended still have their events). Reached from a list with an atomic head, which the signal handler walks.
struct thread_ring {
  std::int64_t tid = 0;
  char name[16] = {};
  std::size_t capacity = 0;  // events kept; the ring has one slot more, the one the thread's next event goes to
  std::atomic<std::uint64_t> written{0};  // events ever written; the ring holds the last `capacity`
  std::size_t next_slot = 0;              // written % (capacity + 1), kept by the owner: no division per event
  slot* events = nullptr;
  std::atomic<thread_ring*> next{nullptr};
};

// An event as written, in nanoseconds from the clock's start: what nesting is decided on.
struct span {
  std::int64_t start;
  std::int64_t end;
};

struct timeline_state {
  std::vector<std::string> globs;
  std::string requested_path;  // as the variable gives it: what copies compare (a copy may load after a chdir())
  std::string path;            // the file written: the requested one, or one named after this module (hub.hpp)
  std::size_t events = default_events;
  std::atomic<thread_ring*> head{nullptr};
  std::atomic<hookscope_hub_source*> sources{nullptr};  // other copies of the library, whose events this file holds
  hookscope_hub_source source{};                        // this copy's part, when another copy owns the file
  // Room to work out the nesting of one ring's events before they are written (write_timeline): made at install,
  // since the file writer allocates nothing. One writer at a time holds it (exit, or a fatal signal's handler that
  // interrupts it); another one writes every event as an async pair.
  span* open_spans = nullptr;              // events + 1
  std::uint64_t* complete_bits = nullptr;  // a bit per ring slot
  std::atomic<bool> room_taken{false};
};
timeline_state* state = nullptr;

constinit thread_local thread_ring* ring_of_thread = nullptr;
constinit thread_local bool ring_failed = false;

thread_ring* ring_for_this_thread() {
  if (ring_of_thread != nullptr) return ring_of_thread;
  if (ring_failed) throw std::bad_alloc();  // tried once on this thread
  ring_failed = true;
  auto* ring = new thread_ring;
  ring->tid = static_cast<std::int64_t>(::syscall(SYS_gettid));
  (void)pthread_getname_np(pthread_self(), ring->name, sizeof ring->name);
  ring->capacity = state->events;
  ring->events = new slot[ring->capacity + 1];
  push_front(state->head, ring);
  ring_of_thread = ring;
  ring_failed = false;
  return ring;
}

// The call's start is kept in the call (tick_clock.hpp): a call that suspends in a fiber and ends after calls begun
// later, or on another thread, is timed from its own start; one that ends without its post callback leaves nothing.
void on_pre(const erased_call& call) { (void)take_start(call); }

constinit std::atomic<bool> reported_no_ring{false};

// Whether this thread is writing an event into its ring: a call that a signal handler (or the formatting of an
// argument) makes meanwhile would take the same slot. It is left out of the timeline, counted, and the count is logged
// at exit.
constinit thread_local bool writing_event = false;
constinit std::atomic<std::uint64_t> left_out{0};
// Events of this copy's threads that the last file written does not hold: overwritten in their ring (it keeps the
// last N of each thread) before it was written.
constinit std::atomic<std::uint64_t> not_kept{0};

void on_post(const erased_call& call) {
  const reentry_scope scope(writing_event);
  if (scope.reentered()) [[unlikely]] {
    left_out.fetch_add(1, std::memory_order_relaxed);
    return;
  }
  const std::int64_t end = tick_clock::now();
  const call_start start = start_of(call);
  if (start.ticks == 0) return;  // its pre callbacks ran before the timeline attached
  thread_ring* ring = nullptr;
  try {
    ring = ring_for_this_thread();
  } catch (...) {  // out of memory: this thread's calls are left out, said once for the whole process
    if (!reported_no_ring.exchange(true)) {
      log_line("hookscope: HOOKSCOPE_TIMELINE: no memory for a thread's ring of " + std::to_string(state->events) +
               " events; that thread's calls are left out of the timeline");
    }
    return;
  }
  const std::uint64_t n = ring->written.load(std::memory_order_relaxed);
  event e;  // built here, then published into its slot: only the words it uses are written
  e.function = &call.function();
  e.start = start.ticks;
  e.duration = end >= start.ticks ? end - start.ticks : 0;
  e.threw = static_cast<bool>(call.exception());
  e.migrated = start.thread != this_thread_tag();
  e.unused = 0;
  // Arguments the file can format later are copied raw (no formatting on the call); the others are formatted now.
  const std::size_t packed = pack_timeline_args(call, e.args, args_capacity);
  e.packed = packed != not_packed;
  e.args_size =
      static_cast<std::uint16_t>(e.packed ? call.args_given() : format_timeline_args(call, e.args, args_capacity));
  const std::size_t bytes = offsetof(event, args) + e.args_bytes();
  const std::size_t word_end = std::min(sizeof(event), (bytes + 7) / 8 * 8);
  std::memset(reinterpret_cast<char*>(&e) + bytes, 0, word_end - bytes);
  ring->events[ring->next_slot].store(e);
  ring->next_slot = ring->next_slot == ring->capacity ? 0 : ring->next_slot + 1;
  ring->written.store(n + 1, std::memory_order_release);
}

struct file_context {
  std::int64_t pid;
  double ns_per_tick;
  std::int64_t origin;       // the clock's start, in ticks
  std::int64_t shift;        // ns from the file's origin (the owner's clock start, hub.hpp) to this copy's clock start
  std::uint64_t& async_ids;  // the file's last async pair id: every copy writing into the file takes the next ones

  // Start and end from the same origin, so that nested events stay nested once rounded.
  span span_of(const event& e) const noexcept { return {ns(e.start), ns(e.start + e.duration)}; }
  std::int64_t ns(std::int64_t ticks) const noexcept {
    return static_cast<std::int64_t>(static_cast<double>(ticks - origin) * ns_per_tick + 0.5) + shift;
  }
};

// Which events of a ring are written as complete events. The events of a thread come in the order their calls ended
// (a thread appends each event as its call ends); taken newest first, `open` holds the chain of complete events the
// next one may nest in, innermost on top. An event is complete when it lies within the innermost one it overlaps, and
// began on this thread; every other event is an async pair, so that the complete events of a track nest perfectly
// (a viewer refuses complete events that overlap on one track).
struct nesting {
  span* open;
  std::size_t capacity;
  std::uint64_t* bits;    // a bit per slot: complete
  std::uint64_t low = 0;  // the events decided: [low, high)
  std::uint64_t high = 0;

  bool complete(const thread_ring& r, std::uint64_t i) const noexcept {
    if (i < low || i >= high) return false;
    const std::uint64_t slot = i % (r.capacity + 1);
    return (bits[slot / 64] >> (slot % 64) & 1) != 0;
  }

  void decide(const thread_ring& r, const file_context& f) noexcept {
    high = r.written.load(std::memory_order_acquire);
    low = high;
    std::size_t size = 0;
    const std::uint64_t oldest = high > r.capacity ? high - r.capacity : 0;
    while (low > oldest) {
      const std::uint64_t i = low - 1;
      event e;
      r.events[i % (r.capacity + 1)].load(e);
      if (r.written.load(std::memory_order_relaxed) > i + r.capacity) break;  // overwritten while copied: the rest too
      low = i;
      const span x = f.span_of(e);
      while (size > 0 && open[size - 1].start >= x.end) --size;  // after x: no older event ends past x's end
      const bool nests = !e.migrated && size < capacity &&
                         (size == 0 || (open[size - 1].start <= x.start && x.end <= open[size - 1].end));
      if (nests) open[size++] = x;
      const std::uint64_t slot = i % (r.capacity + 1);
      const std::uint64_t bit = std::uint64_t{1} << (slot % 64);
      bits[slot / 64] = nests ? bits[slot / 64] | bit : bits[slot / 64] & ~bit;
    }
  }
};

// `"id":"0x..."`: an async pair's id, unique in the file.
void write_id(fd_writer& w, std::uint64_t id) noexcept {
  char digits[16];
  std::size_t count = 0;
  do {
    digits[count++] = "0123456789abcdef"[id % 16];
    id /= 16;
  } while (id != 0);
  w.text(",\"id\":\"0x");
  while (count > 0) w.text(std::string_view(&digits[--count], 1));
  w.text("\"");
}

void write_args(fd_writer& w, const event& e) noexcept {
  char text[args_capacity];
  const std::string_view args =
      e.packed ? std::string_view(text,
                                  format_packed_args(e.function->param_names, e.args_size, e.args, text, args_capacity))
               : std::string_view(e.args, e.args_size);
  w.text(",\"args\":{").text(args);
  if (e.threw) w.text(!args.empty() ? ",\"threw\":true" : "\"threw\":true");
  w.text("}");
}

// One event: complete, or an async pair (begin and end) on the same thread's row of the process.
void write_event(fd_writer& w, file_context& f, const thread_ring& r, const event& e, bool complete) noexcept {
  const span x = f.span_of(e);
  auto head = [&](std::string_view phase) {
    w.text("{\"name\":").json_string(e.function->name).text(",\"cat\":\"hookscope\",\"ph\":\"").text(phase);
  };
  auto place = [&] { w.text(",\"pid\":").signed_number(f.pid).text(",\"tid\":").signed_number(r.tid); };
  if (complete) {
    head("X");
    w.text("\",\"ts\":").microseconds(x.start).text(",\"dur\":").microseconds(x.end - x.start);
    place();
    write_args(w, e);
    w.text("}");
    return;
  }
  const std::uint64_t id = ++f.async_ids;
  head("b");
  w.text("\",\"ts\":").microseconds(x.start);
  write_id(w, id);
  place();
  write_args(w, e);
  w.text("},\n");
  head("e");
  w.text("\",\"ts\":").microseconds(x.end);
  write_id(w, id);
  place();
  w.text("}");
}

// This copy's events, each thread's name first, each an item of `w` (a sink of the file's owner, hub.hpp), `ts`
// counted from `origin_ns` (CLOCK_MONOTONIC: the owner's clock start, the same for every copy), async pair ids taken
// from the file's `async_ids`. Async-signal-safe (the same code serves exit and fatal signals).
void write_events(fd_writer& w, std::int64_t origin_ns, std::uint64_t& async_ids) noexcept {
  file_context f{static_cast<std::int64_t>(getpid()), tick_clock::ns_per_tick(), tick_clock::start_ticks(),
                 tick_clock::start_ns() - origin_ns, async_ids};
  // The room to decide the nesting in, unless another writer holds it (then every event is an async pair).
  const bool own_room = state->open_spans != nullptr && !state->room_taken.exchange(true, std::memory_order_acquire);
  nesting track{state->open_spans, state->events + 1, state->complete_bits};
  auto separator = [&w] { w.item(); };
  for (thread_ring* r = state->head.load(std::memory_order_acquire); r != nullptr;
       r = r->next.load(std::memory_order_acquire)) {
    separator();
    w.text("{\"name\":\"thread_name\",\"ph\":\"M\",\"pid\":")
        .signed_number(f.pid)
        .text(",\"tid\":")
        .signed_number(r->tid);
    w.text(",\"args\":{\"name\":");
    if (r->name[0] != '\0') {
      // The kernel keeps 15 bytes of a name: a character cut there is left out, not shown as invalid bytes.
      w.json_string(without_cut_character(std::string_view(r->name, strnlen(r->name, sizeof r->name))));
    } else {
      w.text("\"thread ").signed_number(r->tid).text("\"");
    }
    w.text("}}");
    if (own_room) track.decide(*r, f);
    std::uint64_t end = r->written.load(std::memory_order_acquire);
    std::uint64_t kept = 0;  // of the thread's first `end` events
    int catch_ups = 0;
    for (std::uint64_t i = end > r->capacity ? end - r->capacity : 0; i < end; ++i) {
      // The thread may still be making calls (the program exits while others trace): copy the event, then keep it
      // only if its slot was not reused meanwhile (the thread's next event goes to slot `written`). A thread that
      // overwrote the events not yet copied is caught up with (a few times, so that a thread faster than the copy
      // cannot hold it for ever): the copy goes on from its oldest event still kept, so a thread tracing without
      // pause still shows its last events rather than none (those its nesting was not decided for as async pairs).
      const std::uint64_t now = r->written.load(std::memory_order_acquire);
      if (now > i + r->capacity && catch_ups < 4) {
        ++catch_ups;
        i = now - r->capacity;
        end = now;
      }
      event e;
      r->events[i % (r->capacity + 1)].load(e);
      if (r->written.load(std::memory_order_relaxed) > i + r->capacity) continue;  // overwritten while copied
      if (e.args_bytes() > args_capacity) continue;
      separator();
      write_event(w, f, *r, e, own_room && track.complete(*r, i));
      ++kept;
    }
    not_kept.fetch_add(end - kept, std::memory_order_relaxed);
  }
  if (own_room) state->room_taken.store(false, std::memory_order_release);
}

// The file's items, for this copy's events and those of the copies that joined it: the separator before each.
struct file_items {
  fd_writer* file;
  bool first = true;
  std::uint64_t async_ids = 0;
};
constexpr hookscope_hub_sink file_sink_of(file_items& items) noexcept {
  return {&items,
          [](void* context) noexcept {
            auto& f = *static_cast<file_items*>(context);
            f.file->text(f.first ? "\n" : ",\n");
            f.first = false;
          },
          [](void* context, const char* data, std::size_t size) noexcept {
            static_cast<file_items*>(context)->file->text(std::string_view(data, size));
          },
          &items.async_ids};
}

// The whole file: this copy's events, then each joined copy's. Async-signal-safe. Returns the errno of the first
// failed write, or 0.
int write_timeline(int fd) noexcept {
  fd_writer w(fd);
  w.text("{\"traceEvents\":[");
  file_items items{&w};
  const hookscope_hub_sink sink = file_sink_of(items);
  const std::int64_t origin_ns = tick_clock::start_ns();
  {
    fd_writer own(sink);
    write_events(own, origin_ns, items.async_ids);
  }
  for (const hookscope_hub_source* s = state->sources.load(std::memory_order_acquire); s != nullptr; s = s->next) {
    s->write(s, &sink, origin_ns);
  }
  w.text("\n],\"displayTimeUnit\":\"ms\"}\n");
  w.flush();
  return w.error();
}

// This copy's part of the owner's file (the hub source it joined with).
void write_for_owner(const hookscope_hub_source*, const hookscope_hub_sink* sink, std::int64_t origin_ns) noexcept {
  fd_writer w(*sink);
  write_events(w, origin_ns, *sink->async_ids);
}

// Another copy joins this one's file: kept when its variable names the same file (compared as read, `%p` and all).
int accept_source(hookscope_hub_source* source) noexcept {
  return state != nullptr ? keep_source_of(state->sources, state->requested_path, source) : 0;
}

bool expand_path(char (&out)[output_path_capacity]) noexcept { return expand_pid(state->path, out); }

// The timeline replaces its file, `path` (expanded): never a file HOOKSCOPE_RECORD appends to (its lines would be
// lost). EEXIST then.
int open_output(const char* path) noexcept {
  struct stat st {};
  // A regular file only: a device (/dev/null, a terminal) is written, never replaced, whoever else writes to it.
  if (::stat(path, &st) == 0 && S_ISREG(st.st_mode) && record_file::holds(st.st_dev, st.st_ino)) {
    errno = EEXIST;
    return -1;
  }
  return open_output_file(path, O_TRUNC);
}

// Its messages name the file as this process opens it (`%p` expanded), as the record files' do.
void write_at_exit() noexcept {
  const cancellation_deferred no_cancellation;  // system calls: see cancellation.hpp
  if (const std::uint64_t n = left_out.load(std::memory_order_relaxed)) {
    try {
      log_line("hookscope: HOOKSCOPE_TIMELINE: " + std::to_string(n) +
               " calls left out of the timeline: made while their thread was writing an event (a signal handler, or "
               "the formatting of an argument)");
    } catch (...) {
      log_line("hookscope: HOOKSCOPE_TIMELINE: calls made while their thread was writing an event are left out");
    }
  }
  char path[output_path_capacity];
  if (!expand_path(path)) {  // refused when the variable was read; a module's own name (hub.hpp) may be longer
    log_line("hookscope: HOOKSCOPE_TIMELINE: " + shown(state->path) + ": cannot open it for writing (" +
             std::strerror(ENAMETOOLONG) + ")");
    return;
  }
  const int fd = open_output(path);
  if (fd < 0 && errno == EEXIST) {
    log_line("hookscope: HOOKSCOPE_TIMELINE: " + shown(path) +
             " is also a HOOKSCOPE_RECORD file: the timeline is not written over its records (give it a path of its "
             "own)");
    return;
  }
  if (fd < 0) {
    log_line("hookscope: HOOKSCOPE_TIMELINE: " + shown(path) + ": cannot open it for writing (" + std::strerror(errno) +
             ")");
    return;
  }
  not_kept.store(0, std::memory_order_relaxed);
  const int error = write_timeline(fd);
  ::close(fd);
  if (error != 0) {
    log_line("hookscope: HOOKSCOPE_TIMELINE: " + shown(path) + ": cannot write to it (" + std::strerror(error) + ")");
  } else if (const std::uint64_t n = not_kept.load(std::memory_order_relaxed)) {
    try {
      log_line("hookscope: HOOKSCOPE_TIMELINE: " + shown(path) + ": " + std::to_string(n) +
               " earlier events not kept (each thread keeps its last " + std::to_string(state->events) +
               "; [events=N] keeps more)");
    } catch (...) {
      log_line("hookscope: HOOKSCOPE_TIMELINE: earlier events not kept (each thread keeps its last N)");
    }
  }
}

void write_from_signal_handler() noexcept {
  const cancellation_deferred no_cancellation;  // system calls: see cancellation.hpp
  char path[output_path_capacity];
  if (!expand_path(path)) return;
  const int fd = open_output(path);
  if (fd < 0) return;
  (void)write_timeline(fd);
  ::close(fd);
}

void forget_parent_events() noexcept {  // in a forked child: its file holds its own calls only
  left_out.store(0, std::memory_order_relaxed);
  for (thread_ring* r = state->head.load(std::memory_order_acquire); r != nullptr;
       r = r->next.load(std::memory_order_acquire)) {
    r->written.store(0, std::memory_order_relaxed);
    r->next_slot = 0;
  }
}

void trace_if_matching(const function_info& info) noexcept {
  if (matches_any(state->globs, info.name)) attach_for_good(info, "HOOKSCOPE_TIMELINE", &on_pre, &on_post);
}

}  // namespace

void install_timeline() noexcept {
  try {
    const char* text = std::getenv("HOOKSCOPE_TIMELINE");
    static constexpr std::string_view variable = "HOOKSCOPE_TIMELINE";
    static constexpr std::string_view expected = "<glob>[,<glob>...]=<path>[events=N], N from 1 to 1048576";
    globs_and_path setting = parse_globs_and_path(variable, text, expected);
    if (!setting.ok) return;
    if (setting.globs.empty()) return;  // the common case: no hook, nothing allocated
    if (!setting.path || setting.path->empty()) {
      report_setting(variable, text, "no path", expected, "the variable is ignored");
      return;
    }
    std::size_t events = default_events;
    if (setting.options) {
      const std::string_view option = *setting.options;
      const std::optional<std::uint64_t> n =
          option.starts_with("events=") ? bounded_number(trim(option.substr(7)), max_events) : std::nullopt;
      if (!n) {
        report_setting(variable, text, "not an option [events=N] with N in bounds", expected,
                       "the variable is ignored");
        return;
      }
      events = static_cast<std::size_t>(*n);
    }
    auto* s = new timeline_state;
    s->events = events;
    s->path = absolute_path(*setting.path);  // a later chdir() does not move the file
    s->globs = std::move(setting.globs);
    state = s;
    char expanded[output_path_capacity];
    const std::optional<std::string> unusable =
        expand_path(expanded) ? unusable_output(expanded) : std::optional<std::string>("the path is too long");
    if (unusable) {
      report_setting(variable, s->path, *unusable, "a path to a file that can be written", "the variable is ignored");
      state = nullptr;
      delete s;
      return;
    }
    // Without this room (out of memory) every event is written as an async pair.
    s->complete_bits = new (std::nothrow) std::uint64_t[(events + 1 + 63) / 64];
    if (s->complete_bits != nullptr) s->open_spans = new (std::nothrow) span[events + 1];
    tick_clock::start();
    add_fork_handlers([]() noexcept {}, []() noexcept {}, &forget_parent_events);
    add_registration_hook(&trace_if_matching);
    // One writer per file: the first copy of the library in the process (hub.hpp) writes every copy's events.
    s->requested_path = *setting.path;
    const hub_owner owner = find_hub_owner();
    if (!owner.self) {
      s->source = {s->requested_path.c_str(), &write_for_owner, nullptr};
      if (owner.hub->join(hookscope_hub_timeline, &s->source) == 1) return;
    } else {
      if (!owner.earlier_version.empty()) {
        const std::string own_path = module_path(s->path, owner.module);
        log_line("hookscope: HOOKSCOPE_TIMELINE: another version of hookscope in this process (" +
                 shown(owner.earlier_version) + ") writes " + shown(s->path) + "; this one (" + shown(owner.module) +
                 ") writes " + shown(own_path));
        s->path = own_path;
      }
      set_join_handler(hookscope_hub_timeline, &accept_source);
    }
    add_exit_action({&write_at_exit, &write_from_signal_handler});
  } catch (...) {
    log_line("hookscope: HOOKSCOPE_TIMELINE: could not read the variable (out of memory)");
  }
}

}  // namespace detail
HOOKSCOPE_DETAIL_END_NAMESPACE

#endif  // HOOKSCOPE_ENABLED
