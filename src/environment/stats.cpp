// HOOKSCOPE_STATS=<glob>[,<glob>...][=<path>]: at exit (and on fatal signals) a table per matching function —
// calls, total, mean, p50, p90, p99, max — to the log sink, or to `path`. Constant memory per function: the
// latencies go into a log-bucketed histogram of clock ticks (percentiles within 12.5% above the true value),
// converted to nanoseconds when the table is written. Copies of the library in plugins hand their rows to the first
// copy, which prints one table (hub.hpp).
#include "settings.hpp"

#if HOOKSCOPE_ENABLED

#include "../reentry_scope.hpp"
#include "../tick_clock.hpp"
#include "fd_writer.hpp"
#include "hub.hpp"
#include "lifecycle.hpp"

#include "hookscope/detail/fixed_string.hpp"
#include "hookscope/callback_errors.hpp"
#include "hookscope/registry.hpp"

#include <fcntl.h>
#include <pthread.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <bit>
#include <cerrno>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <new>
#include <optional>
#include <string>
#include <vector>

HOOKSCOPE_DETAIL_BEGIN_NAMESPACE
namespace detail {
namespace {

// Bucket of a latency in ticks: exact below 16, then 8 buckets per power of two.
constexpr std::size_t exact_buckets = 16;
constexpr std::size_t bucket_count = exact_buckets + (64 - 4) * 8;

constexpr std::size_t bucket_of(std::uint64_t ns) noexcept {
  if (ns < exact_buckets) return static_cast<std::size_t>(ns);
  const int log2 = 63 - std::countl_zero(ns);  // >= 4
  const auto sub = static_cast<std::size_t>((ns >> (log2 - 3)) & 7);
  return exact_buckets + static_cast<std::size_t>(log2 - 4) * 8 + sub;
}

// The largest latency a bucket holds (what a percentile reports: never below the true value).
constexpr std::uint64_t bucket_top(std::size_t bucket) noexcept {
  if (bucket < exact_buckets) return bucket;
  const std::size_t log2 = (bucket - exact_buckets) / 8 + 4;
  const std::uint64_t sub = (bucket - exact_buckets) % 8;
  const std::uint64_t base = (std::uint64_t{8} + sub) << (log2 - 3);
  return base + (std::uint64_t{1} << (log2 - 3)) - 1;
}
static_assert(bucket_of(15) == 15 && bucket_of(16) == 16 && bucket_of(17) == 16 && bucket_of(18) == 17);
static_assert(bucket_top(bucket_of(1000)) >= 1000 && bucket_top(bucket_of(1000)) < 1125);
static_assert(bucket_of(~std::uint64_t{0}) == bucket_count - 1);

// One writer adds to a counter: a relaxed load and store, no locked instruction.
inline void bump(std::atomic<std::uint64_t>& counter, std::uint64_t n) noexcept {
  counter.store(counter.load(std::memory_order_relaxed) + n, std::memory_order_relaxed);
}

// A histogram of latencies: a bucket per range, the total and the maximum. The number of calls is the sum of the
// buckets.
struct histogram {
  std::atomic<std::uint64_t> total_ticks{0};
  std::atomic<std::uint64_t> max_ticks{0};
  std::array<std::atomic<std::uint64_t>, bucket_count> buckets{};

  // By one writer only (a thread's shard).
  void add_alone(std::uint64_t ticks) noexcept {
    bump(buckets[bucket_of(ticks)], 1);
    bump(total_ticks, ticks);
    if (ticks > max_ticks.load(std::memory_order_relaxed)) max_ticks.store(ticks, std::memory_order_relaxed);
  }
  // By any thread.
  void add_shared(std::uint64_t ticks) noexcept {
    buckets[bucket_of(ticks)].fetch_add(1, std::memory_order_relaxed);
    total_ticks.fetch_add(ticks, std::memory_order_relaxed);
    std::uint64_t max = max_ticks.load(std::memory_order_relaxed);
    while (ticks > max && !max_ticks.compare_exchange_weak(max, ticks, std::memory_order_relaxed)) {
    }
  }
  void clear() noexcept {
    for (auto& b : buckets) b.store(0, std::memory_order_relaxed);
    total_ticks.store(0, std::memory_order_relaxed);
    max_ticks.store(0, std::memory_order_relaxed);
  }
};

struct function_stats;

// One thread's histogram of one function: only the thread holding it adds to it (no locked instruction, no cache
// line written by another thread); the table sums it with the function's others. Never freed: a thread that ends
// releases its shards, with their counts, and the next thread to call the function takes one over.
struct alignas(64) shard {
  histogram counts;
  std::atomic<bool> held{true};  // by a running thread
  std::atomic<shard*> next{nullptr};
};

// A function's calls: a shard per thread that called it, and the calls of threads that could get none (out of
// memory). Summed by the table, with relaxed loads (async-signal-safe).
struct function_stats {
  function_stats(const function_info& f, std::size_t i) : info(&f), index(i) {}
  const function_info* info;
  std::size_t index;  // in each thread's table of shards
  histogram shared;
  std::atomic<shard*> shards{nullptr};
  std::atomic<function_stats*> next{nullptr};

  template <class Read>
  std::uint64_t sum(Read read) const noexcept {
    std::uint64_t n = read(shared);
    for (const shard* s = shards.load(std::memory_order_acquire); s != nullptr;
         s = s->next.load(std::memory_order_acquire)) {
      n += read(s->counts);
    }
    return n;
  }
  std::uint64_t bucket(std::size_t b) const noexcept {
    return sum([b](const histogram& h) { return h.buckets[b].load(std::memory_order_relaxed); });
  }
  std::uint64_t total_ticks() const noexcept {
    return sum([](const histogram& h) { return h.total_ticks.load(std::memory_order_relaxed); });
  }
  std::uint64_t max_ticks() const noexcept {
    std::uint64_t max = 0;
    (void)sum([&max](const histogram& h) {
      max = std::max(max, h.max_ticks.load(std::memory_order_relaxed));
      return std::uint64_t{0};
    });
    return max;
  }
  std::uint64_t calls() const noexcept {
    std::uint64_t n = 0;
    for (std::size_t b = 0; b < bucket_count; ++b) n += bucket(b);
    return n;
  }

  // The latency (ticks) at or below which `permille` of the calls fall.
  std::uint64_t percentile(std::uint64_t count, unsigned permille, std::uint64_t max) const noexcept {
    const std::uint64_t rank = (count * permille + 999) / 1000;  // 1-based, rounded up
    std::uint64_t seen = 0;
    for (std::size_t b = 0; b < bucket_count; ++b) {
      seen += bucket(b);
      if (seen >= rank) return std::min(bucket_top(b), max);
    }
    return max;
  }
};

// Read once from the variable; never destroyed. The list is walked by the fatal signal handler: a linked list
// with an atomic head, pushed at the front.
struct stats_state {
  std::vector<std::string> globs;
  int fd = -1;  // -1: the log sink
  std::string path;
  std::string requested_path;  // as the variable gives it: what copies compare (a copy may load after a chdir())
  std::atomic<function_stats*> head{nullptr};
  std::atomic<hookscope_hub_source*> sources{nullptr};  // other copies of the library, whose rows this table holds
  hookscope_hub_source source{};                        // this copy's rows, when another copy owns the table
};

constexpr std::size_t column_widths[] = {32, 10, 12, 12, 12, 12, 12, 12};
stats_state* state = nullptr;

// The call's start is kept in the call (tick_clock.hpp): a call ending on another thread or fiber, or after calls
// begun after it, is timed from its own start; one that ends without its post callback leaves nothing behind.
void on_pre(const erased_call& call) { (void)take_start(call); }

// The calling thread's shards, by function index: allocated at its first call of a function, released when it ends.
constinit thread_local shard** thread_shards = nullptr;
constinit thread_local std::size_t thread_shard_count = 0;
constinit std::atomic<std::size_t> function_count{0};
pthread_key_t thread_end_key;  // its destructor releases a thread's shards
bool have_thread_end_key = false;

// A thread ends: its shards, counts and all, go to the next threads that call their functions.
void release_thread_shards(void*) noexcept {
  shard** table = thread_shards;
  const std::size_t count = thread_shard_count;
  thread_shards = nullptr;
  thread_shard_count = 0;
  for (std::size_t i = 0; i < count; ++i) {
    if (table[i] != nullptr) table[i]->held.store(false, std::memory_order_release);
  }
  delete[] table;
}

// The calling thread's shard of `s`: one released by a thread that ended, else a new one; null when out of memory.
[[gnu::cold, gnu::noinline]] shard* take_shard(function_stats& s) noexcept {
  if (s.index >= thread_shard_count) {
    const std::size_t count = std::max({s.index + 1, 2 * thread_shard_count, std::size_t{8}});
    auto* table = new (std::nothrow) shard*[count]();
    if (table == nullptr) return nullptr;
    if (thread_shards != nullptr) {
      std::copy(thread_shards, thread_shards + thread_shard_count, table);
    } else if (have_thread_end_key) {
      (void)pthread_setspecific(thread_end_key, table);  // any non-null value: the destructor then runs
    }
    // The new table before the old one goes: a signal handler's call on this thread reads either.
    shard** const old = thread_shards;
    thread_shards = table;
    std::atomic_signal_fence(std::memory_order_seq_cst);
    thread_shard_count = count;
    std::atomic_signal_fence(std::memory_order_seq_cst);
    delete[] old;
  }
  shard* taken = nullptr;
  for (shard* h = s.shards.load(std::memory_order_acquire); h != nullptr && taken == nullptr;
       h = h->next.load(std::memory_order_acquire)) {
    // Acquire: this thread's additions come after those of the thread that released it.
    if (!h->held.load(std::memory_order_relaxed) && !h->held.exchange(true, std::memory_order_acquire)) taken = h;
  }
  if (taken == nullptr) {
    taken = new (std::nothrow) shard;  // never freed: reachable from s.shards
    if (taken == nullptr) return nullptr;
    push_front(s.shards, taken);
  }
  thread_shards[s.index] = taken;
  return taken;
}

// Whether this thread is adding to its shard: a signal handler's call meanwhile adds to the function's shared
// histogram (locked instructions), since the frame below is between a load and a store of its shard's counters.
constinit thread_local bool counting = false;

void on_post(function_stats& s, const erased_call& call) {
  const std::int64_t ticks = ticks_since_start(call, tick_clock::now());
  if (ticks < 0) return;
  const reentry_scope scope(counting);
  if (scope.reentered()) [[unlikely]] {
    s.shared.add_shared(static_cast<std::uint64_t>(ticks));
    return;
  }
  shard* own = s.index < thread_shard_count ? thread_shards[s.index] : nullptr;
  if (own == nullptr) [[unlikely]] {
    own = take_shard(s);
    if (own == nullptr) {  // out of memory: the function's shared histogram
      s.shared.add_shared(static_cast<std::uint64_t>(ticks));
      return;
    }
  }
  own->counts.add_alone(static_cast<std::uint64_t>(ticks));
}

// The table's header, an item of `w`.
void write_header(fd_writer& w) noexcept {
  w.item().text("function").pad_to(column_widths[0]);
  static constexpr std::string_view headers[] = {"calls", "total", "mean", "p50", "p90", "p99", "max"};
  for (std::size_t i = 0; i < std::size(headers); ++i) {
    w.mark().text(headers[i]);
    if (i + 1 < std::size(headers)) w.pad_to(column_widths[i + 1]);
  }
}

// This copy's rows, each an item of `w` (a sink of the table's owner, hub.hpp); functions that were never called are
// left out.
void write_rows(fd_writer& w) noexcept {
  const double ns_per_tick = tick_clock::ns_per_tick();
  for (const function_stats* s = state->head.load(std::memory_order_acquire); s != nullptr;
       s = s->next.load(std::memory_order_acquire)) {
    const std::uint64_t calls = s->calls();
    if (calls == 0) continue;
    const std::uint64_t total = s->total_ticks();
    const std::uint64_t max = s->max_ticks();
    w.item().text(s->info->name).text(" ").pad_to(column_widths[0]);
    w.mark().number(calls).pad_to(column_widths[1]);
    const std::uint64_t values[] = {total,
                                    total / calls,
                                    s->percentile(calls, 500, max),
                                    s->percentile(calls, 900, max),
                                    s->percentile(calls, 990, max),
                                    max};
    for (std::size_t i = 0; i < std::size(values); ++i) {
      w.mark().duration(static_cast<std::uint64_t>(static_cast<double>(values[i]) * ns_per_tick + 0.5));
      if (i + 1 < std::size(values)) w.pad_to(column_widths[i + 2]);
    }
  }
}

// The table's lines, for this copy's rows and those of the copies that joined it: each starts with `prefix`.
struct table_lines {
  fd_writer* out;
  std::string_view prefix;
  bool open = false;
};
constexpr hookscope_hub_sink table_sink_of(table_lines& lines) noexcept {
  return {&lines,
          [](void* context) noexcept {
            auto& t = *static_cast<table_lines*>(context);
            if (t.open) t.out->end_line();
            t.out->text(t.prefix);
            t.open = true;
          },
          [](void* context, const char* data, std::size_t size) noexcept {
            static_cast<table_lines*>(context)->out->text(std::string_view(data, size));
          },
          nullptr};
}

// One table of every copy's functions, written by `out` whose lines all start with `prefix`.
void write_table(fd_writer& out, std::string_view prefix) noexcept {
  table_lines lines{&out, prefix};
  const hookscope_hub_sink sink = table_sink_of(lines);
  {
    fd_writer own(sink);
    write_header(own);
    write_rows(own);
  }
  for (const hookscope_hub_source* s = state->sources.load(std::memory_order_acquire); s != nullptr; s = s->next) {
    s->write(s, &sink, 0);
  }
  if (lines.open) out.end_line();
}

// This copy's rows in the owner's table (the hub source it joined with).
void write_rows_for_owner(const hookscope_hub_source*, const hookscope_hub_sink* sink, std::int64_t) noexcept {
  fd_writer w(*sink);
  write_rows(w);
}

// Another copy joins this one's table: kept when its variable names the same file (or the log).
int accept_source(hookscope_hub_source* source) noexcept {
  return state != nullptr ? keep_source_of(state->sources, state->requested_path, source) : 0;
}

void print_at_exit() noexcept {
  if (state->fd < 0) {
    fd_writer w(+[](std::string_view line) noexcept { log_line(line); });
    write_table(w, "hookscope: stats: ");
    return;
  }
  fd_writer w(state->fd);
  write_table(w, "");
  w.flush();
  if (w.error() != 0) {
    log_line("hookscope: HOOKSCOPE_STATS: " + shown(state->path) + ": cannot write to it (" + std::strerror(w.error()) +
             ")");
  }
}

void print_from_signal_handler() noexcept {
  fd_writer w(state->fd >= 0 ? state->fd : STDERR_FILENO);
  write_table(w, state->fd >= 0 ? "" : "hookscope: stats: ");
}

void count_if_matching(const function_info& info) noexcept {
  if (!matches_any(state->globs, info.name)) return;
  function_stats* s = nullptr;
  try {
    // Never destroyed: reachable from state->head.
    s = new function_stats(info, function_count.fetch_add(1, std::memory_order_relaxed));
  } catch (...) {
    log_line("hookscope: HOOKSCOPE_STATS: could not attach to '" + std::string(info.name) + "' (out of memory)");
    return;
  }
  push_front(state->head, s);
  attach_for_good(info, "HOOKSCOPE_STATS", &on_pre, [s](const erased_call& call) { on_post(*s, call); });
}

// In a forked child: its table holds its own calls only (a call in flight across the fork ends in both processes,
// and counts in both). The shards of the parent's other threads, which do not run in the child, are free to take.
void forget_parent_calls() noexcept {
  for (function_stats* s = state->head.load(std::memory_order_acquire); s != nullptr;
       s = s->next.load(std::memory_order_acquire)) {
    s->shared.clear();
    for (shard* h = s->shards.load(std::memory_order_acquire); h != nullptr;
         h = h->next.load(std::memory_order_acquire)) {
      h->counts.clear();
      h->held.store(false, std::memory_order_relaxed);
    }
  }
  for (std::size_t i = 0; i < thread_shard_count; ++i) {
    if (thread_shards[i] != nullptr) thread_shards[i]->held.store(true, std::memory_order_relaxed);
  }
}

}  // namespace

void install_stats() noexcept {
  try {
    static constexpr std::string_view variable = "HOOKSCOPE_STATS";
    globs_and_path setting =
        parse_globs_and_path(variable, std::getenv("HOOKSCOPE_STATS"), "<glob>[,<glob>...][=<path>]");
    if (!setting.ok || setting.globs.empty()) return;  // the common case: no hook, nothing allocated
    if (setting.options) {
      report_setting(variable, setting.last_entry, "options in brackets (HOOKSCOPE_STATS takes none)",
                     "<glob>[,<glob>...][=<path>]", "the variable is ignored");
      return;
    }
    auto* s = new stats_state;
    s->globs = std::move(setting.globs);
    s->requested_path = setting.path.value_or("");
    s->path = absolute_path(s->requested_path);
    state = s;
    tick_clock::start();
    have_thread_end_key = pthread_key_create(&thread_end_key, &release_thread_shards) == 0;
    add_fork_handlers([]() noexcept {}, []() noexcept {}, &forget_parent_calls);
    add_registration_hook(&count_if_matching);
    // One table per process: the first copy of the library in it (hub.hpp) prints every copy's rows.
    const hub_owner owner = find_hub_owner();
    if (!owner.self) {
      s->source = {s->requested_path.c_str(), &write_rows_for_owner, nullptr};
      if (owner.hub->join(hookscope_hub_stats, &s->source) == 1) return;
    } else {
      set_join_handler(hookscope_hub_stats, &accept_source);
    }
    if (!s->path.empty()) {
      const std::optional<std::string> unusable = unusable_output(s->path);
      // Another version of hookscope loaded earlier writes its own table to the file: appended to, not truncated.
      const int truncate = owner.self && owner.earlier_version.empty() ? O_TRUNC : 0;
      s->fd = unusable ? -1 : open_output_file(s->path.c_str(), truncate | O_APPEND);
      if (s->fd < 0) {
        report_setting(variable, s->path,
                       unusable ? *unusable : "cannot open it for writing: " + std::string(std::strerror(errno)),
                       "a path to a file that can be written", "the table goes to the log instead");
      }
    }
    add_exit_action({&print_at_exit, &print_from_signal_handler});
  } catch (...) {
    log_line("hookscope: HOOKSCOPE_STATS: could not read the variable (out of memory)");
  }
}

}  // namespace detail
HOOKSCOPE_DETAIL_END_NAMESPACE

#endif  // HOOKSCOPE_ENABLED
