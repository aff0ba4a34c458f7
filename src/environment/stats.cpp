// HOOKSCOPE_STATS=<glob>[,<glob>...][=<path>]: at exit (and on fatal signals) a table per matching function —
// calls, total, mean, p50, p90, p99, max — to the log sink, or to `path`. Constant memory per function: the
// latencies go into a log-bucketed histogram of clock ticks (percentiles within 12.5% above the true value),
// converted to nanoseconds when the table is written.
#include "settings.hpp"

#if HOOKSCOPE_ENABLED

#include "../tick_clock.hpp"
#include "fd_writer.hpp"
#include "lifecycle.hpp"

#include "hookscope/detail/fixed_string.hpp"
#include "hookscope/callback_errors.hpp"
#include "hookscope/registry.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <bit>
#include <cerrno>
#include <cstdint>
#include <cstdlib>
#include <cstring>
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

// Per call: two relaxed additions (the bucket, the total) and a load (the maximum, rarely a CAS). The number of
// calls is the sum of the buckets.
struct function_stats {
  explicit function_stats(const function_info& f) : info(&f) {}
  const function_info* info;
  std::atomic<std::uint64_t> total_ticks{0};
  std::atomic<std::uint64_t> max_ticks{0};
  std::array<std::atomic<std::uint64_t>, bucket_count> buckets{};
  std::atomic<function_stats*> next{nullptr};

  void add(std::uint64_t ticks) noexcept {
    buckets[bucket_of(ticks)].fetch_add(1, std::memory_order_relaxed);
    total_ticks.fetch_add(ticks, std::memory_order_relaxed);
    std::uint64_t max = max_ticks.load(std::memory_order_relaxed);
    while (ticks > max && !max_ticks.compare_exchange_weak(max, ticks, std::memory_order_relaxed)) {
    }
  }

  std::uint64_t calls() const noexcept {
    std::uint64_t n = 0;
    for (const auto& b : buckets) n += b.load(std::memory_order_relaxed);
    return n;
  }

  // The latency (ticks) at or below which `permille` of the calls fall.
  std::uint64_t percentile(std::uint64_t count, unsigned permille) const noexcept {
    const std::uint64_t rank = (count * permille + 999) / 1000;  // 1-based, rounded up
    std::uint64_t seen = 0;
    for (std::size_t b = 0; b < bucket_count; ++b) {
      seen += buckets[b].load(std::memory_order_relaxed);
      if (seen >= rank) return std::min(bucket_top(b), max_ticks.load(std::memory_order_relaxed));
    }
    return max_ticks.load(std::memory_order_relaxed);
  }
};

// Read once from the variable; never destroyed. The list is walked by the fatal signal handler: a linked list
// with an atomic head, pushed at the front.
struct stats_state {
  std::vector<std::string> globs;
  int fd = -1;  // -1: the log sink
  std::string path;
  std::atomic<function_stats*> head{nullptr};
};
stats_state* state = nullptr;

// The call's start is kept in the call (tick_clock.hpp): a call ending on another thread or fiber, or after calls
// begun after it, is timed from its own start; one that ends without its post callback leaves nothing behind.
void on_pre(const erased_call& call) { (void)take_start(call); }

void on_post(function_stats& s, const erased_call& call) {
  const std::int64_t ticks = ticks_since_start(call, tick_clock::now());
  if (ticks >= 0) s.add(static_cast<std::uint64_t>(ticks));
}

// One table, written by `w` whose lines all start with `prefix`; functions that were never called are left out.
void write_table(fd_writer& w, std::string_view prefix) noexcept {
  constexpr std::size_t widths[] = {32, 10, 12, 12, 12, 12, 12, 12};
  w.text(prefix).mark().text("function").pad_to(widths[0]);
  static constexpr std::string_view headers[] = {"calls", "total", "mean", "p50", "p90", "p99", "max"};
  for (std::size_t i = 0; i < std::size(headers); ++i) {
    w.mark().text(headers[i]);
    if (i + 1 < std::size(headers)) w.pad_to(widths[i + 1]);
  }
  w.end_line();
  const double ns_per_tick = tick_clock::ns_per_tick();
  for (const function_stats* s = state->head.load(std::memory_order_acquire); s != nullptr;
       s = s->next.load(std::memory_order_acquire)) {
    const std::uint64_t calls = s->calls();
    if (calls == 0) continue;
    const std::uint64_t total = s->total_ticks.load(std::memory_order_relaxed);
    w.text(prefix).mark().text(s->info->name).text(" ").pad_to(widths[0]);
    w.mark().number(calls).pad_to(widths[1]);
    const std::uint64_t values[] = {total,
                                    total / calls,
                                    s->percentile(calls, 500),
                                    s->percentile(calls, 900),
                                    s->percentile(calls, 990),
                                    s->max_ticks.load(std::memory_order_relaxed)};
    for (std::size_t i = 0; i < std::size(values); ++i) {
      w.mark().duration(static_cast<std::uint64_t>(static_cast<double>(values[i]) * ns_per_tick + 0.5));
      if (i + 1 < std::size(values)) w.pad_to(widths[i + 2]);
    }
    w.end_line();
  }
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
    s = new function_stats(info);  // never destroyed: reachable from state->head
  } catch (...) {
    log_line("hookscope: HOOKSCOPE_STATS: could not attach to '" + std::string(info.name) + "' (out of memory)");
    return;
  }
  push_front(state->head, s);
  attach_for_good(info, "HOOKSCOPE_STATS", &on_pre, [s](const erased_call& call) { on_post(*s, call); });
}

// In a forked child: its table holds its own calls only (a call in flight across the fork ends in both processes,
// and counts in both).
void forget_parent_calls() noexcept {
  for (function_stats* s = state->head.load(std::memory_order_acquire); s != nullptr;
       s = s->next.load(std::memory_order_acquire)) {
    for (auto& b : s->buckets) b.store(0, std::memory_order_relaxed);
    s->total_ticks.store(0, std::memory_order_relaxed);
    s->max_ticks.store(0, std::memory_order_relaxed);
  }
}

}  // namespace

void install_stats() noexcept {
  try {
    static constexpr std::string_view variable = "HOOKSCOPE_STATS";
    globs_and_path setting =
        parse_globs_and_path(variable, std::getenv("HOOKSCOPE_STATS"), "<glob>[,<glob>...][=<path>]");
    if (!setting.ok || setting.globs.empty()) return;  // the common case: no hook, nothing allocated
    auto* s = new stats_state;
    s->globs = std::move(setting.globs);
    s->path = absolute_path(setting.path);
    if (!s->path.empty()) {
      const std::optional<std::string> unusable = unusable_output(s->path);
      s->fd = unusable ? -1 : open_output_file(s->path.c_str(), O_TRUNC | O_APPEND);
      if (s->fd < 0) {
        report_setting(variable, s->path,
                       unusable ? *unusable : "cannot open it for writing: " + std::string(std::strerror(errno)),
                       "a path to a file that can be written", "the table goes to the log instead");
      }
    }
    state = s;
    tick_clock::start();
    add_exit_action({&print_at_exit, &print_from_signal_handler});
    add_fork_handlers([]() noexcept {}, []() noexcept {}, &forget_parent_calls);
    add_registration_hook(&count_if_matching);
  } catch (...) {
    log_line("hookscope: HOOKSCOPE_STATS: could not read the variable (out of memory)");
  }
}

}  // namespace detail
HOOKSCOPE_DETAIL_END_NAMESPACE

#endif  // HOOKSCOPE_ENABLED
