// HOOKSCOPE_RECORD=<glob>=<path>[<options>][,...]: every call of a matching observable is recorded into a JSON
// Lines file, without any code change. Functions and processes may share a file; each signs its first line.
// Options, in brackets after the path and separated by ';': max_calls=N (record at most N calls of each matching
// function), every=N (record one call in N: the first, the N+1th, ...), N from 1 to 10^18. `%p` in the path
// becomes the process id (record_file.hpp). A call that cannot be written is refused, said once per function.
#include "settings.hpp"

#if HOOKSCOPE_ENABLED

#include "lifecycle.hpp"
#include "record_file.hpp"

#include "hookscope/detail/call_pairing.hpp"
#include "hookscope/detail/fixed_string.hpp"
#include "hookscope/callback_errors.hpp"
#include "hookscope/records.hpp"
#include "hookscope/registry.hpp"
#include "hookscope/value_errors.hpp"

#include <atomic>
#include <charconv>
#include <cstdint>
#include <cstdlib>
#include <limits>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

HOOKSCOPE_DETAIL_BEGIN_NAMESPACE
namespace detail {
namespace {

struct record_target {
  std::string glob;
  std::string path;
  std::uint64_t max_calls = std::numeric_limits<std::uint64_t>::max();
  std::uint64_t every = 1;
};

constexpr std::string_view variable = "HOOKSCOPE_RECORD";
constexpr std::string_view expected = "<glob>=<path>[max_calls=N;every=N], N from 1 to 10^18, options separated by ';'";
constexpr std::uint64_t max_bound = 1'000'000'000'000'000'000;

// "max_calls=10;every=2" (not empty: settings.hpp) into the target; false (and one message) for anything else.
bool parse_options(std::string_view options, const std::string& entry, record_target& target) {
  bool seen_max_calls = false, seen_every = false;
  auto refuse = [&](std::string_view problem) {
    report_setting(variable, entry, problem, expected, "the entry is ignored");
    return false;
  };
  if (options.find(',') != std::string_view::npos) return refuse("a ',' between options (they are separated by ';')");
  while (!options.empty()) {
    const std::size_t semicolon = options.find(';');
    const std::string_view option = trim(options.substr(0, semicolon));
    options = semicolon == std::string_view::npos ? std::string_view{} : options.substr(semicolon + 1);
    if (option.empty()) return refuse("an empty option");
    const std::size_t equal = option.find('=');
    const std::string_view name = trim(option.substr(0, equal));
    // Messages built from a std::string: GCC 12 at -O3 reports a false -Wrestrict for `"literal" + std::string(...)`.
    if (name != "max_calls" && name != "every") {
      return refuse(std::string("unknown option '").append(option).append("'"));
    }
    bool& seen = name == "max_calls" ? seen_max_calls : seen_every;
    if (seen) return refuse(std::string("option '").append(name).append("' given twice"));
    seen = true;
    const std::optional<std::uint64_t> n =
        equal == std::string_view::npos ? std::nullopt : bounded_number(trim(option.substr(equal + 1)), max_bound);
    if (!n) {
      return refuse(std::string("'").append(option).append("' is not ").append(name).append("=N with N in bounds"));
    }
    (name == "max_calls" ? target.max_calls : target.every) = *n;
  }
  return true;
}

std::vector<record_target> parse_record_targets(const char* text) {
  std::vector<record_target> targets;
  if (text == nullptr || trim(text).empty()) return targets;  // unset, or set to nothing: off
  for (const setting_entry& entry : parse_entries(text)) {
    auto refuse = [&](std::string_view problem) {
      report_setting(variable, entry.text, problem, expected, "the entry is ignored");
    };
    if (entry.text.empty()) {
      report_setting(variable, text, "an empty entry", expected, "the empty entry is ignored");
      continue;
    }
    if (!entry.problem.empty()) {
      refuse(entry.problem);
      continue;
    }
    if (!entry.path || entry.glob.empty() || entry.path->empty()) {
      refuse(!entry.path ? "no '='" : entry.glob.empty() ? "no glob" : "no path");
      continue;
    }
    record_target target;
    if (entry.options && !parse_options(*entry.options, entry.text, target)) continue;
    target.glob = entry.glob;
    target.path = absolute_path(*entry.path);  // a later chdir() does not move the file
    if (const std::optional<std::string> unusable = unusable_output(target.path)) {
      report_setting(variable, entry.text, *unusable, "a path to a file that can be written", "the entry is ignored");
      continue;
    }
    targets.push_back(std::move(target));
  }
  return targets;
}

// What one recorded function's callbacks share; never destroyed (calls may come from static destructors).
struct recorded_function {
  recorded_function(const function_info& f, const record_target& t, record_file& out)
      : info(&f), target(&t), file(&out), pairing(f) {}
  const function_info* info;
  const record_target* target;
  record_file* file;
  call_pairing pairing;
  std::atomic<std::uint64_t> calls_seen{0};
  std::atomic<std::uint64_t> calls_taken{0};
  std::mutex first_line_mutex;  // orders the signed first line before the others
  std::atomic<bool> signature_written{false};
  std::atomic<bool> reported_refused{false};
};

// A call whose arguments or result cannot be captured (a value_error: a tensor's negative dimension) is not
// written; said once per function.
void refuse_call(recorded_function& f, const std::exception& e) noexcept {
  if (f.reported_refused.exchange(true)) return;
  try {
    log_line("hookscope: HOOKSCOPE_RECORD: '" + std::string(f.info->name) + "': a call is not recorded: " +
             std::string(message_clause(e)) + " (later such calls of this function are left out without a message)");
  } catch (...) {
    log_line("hookscope: HOOKSCOPE_RECORD: a call is not recorded (a value cannot be captured)");
  }
}

// The feature's state, made once by install_record and never destroyed.
struct record_state {
  std::vector<record_target> targets;
  std::mutex mutex;  // guards functions
  std::vector<std::unique_ptr<recorded_function>> functions;
};
record_state* state = nullptr;

// Whether this call is one to record: the sampling and the bound of the function's target.
bool take_call(recorded_function& f) {
  const std::uint64_t seen = f.calls_seen.fetch_add(1, std::memory_order_relaxed);
  if (seen % f.target->every != 0) return false;
  const std::uint64_t taken = f.calls_taken.fetch_add(1, std::memory_order_relaxed);
  if (taken < f.target->max_calls) return true;
  if (taken == f.target->max_calls) {
    log_line("hookscope: HOOKSCOPE_RECORD: '" + std::string(f.info->name) + "' reached max_calls=" +
             std::to_string(f.target->max_calls) + " in " + f.file->path() + "; its later calls are not recorded");
  }
  return false;
}

void record_pre(recorded_function& f, const erased_call& call) {
  // A call left out (sampled out, over the bound, refused) must leave no entry at its address for its post
  // callback to find: a call refused earlier at the same address may have left one.
  if (!take_call(f)) {
    (void)f.pairing.skip(call);
    return;
  }
  value_fields args;
  try {
    args = call.capture_args();
    check_writable(args);  // refused now: one call that cannot be written never spoils the file
  } catch (const value_error& e) {
    (void)f.pairing.skip(call);
    refuse_call(f, e);
    return;
  } catch (const format_error& e) {
    (void)f.pairing.skip(call);
    refuse_call(f, e);
    return;
  }
  (void)f.pairing.begin(call, std::move(args));
}

// The record's line, signed when it is the function's first in this process (to_record_line refuses what it
// cannot write with a value_error).
void write_record(recorded_function& f, call_record& record) {
  if (!f.signature_written.load(std::memory_order_acquire)) {
    const std::lock_guard lock(f.first_line_mutex);
    if (!f.signature_written.load(std::memory_order_relaxed)) {
      record.parameters = parameters_of(*f.info);
      f.file->append(to_record_line(record));
      f.signature_written.store(true, std::memory_order_release);
      return;
    }
  }
  f.file->append(to_record_line(record));
}

void record_post(recorded_function& f, const erased_call& call) {
  std::optional<call_record> record = f.pairing.end(call);
  if (!record) return;
  try {
    record->result = call.capture_return_value();
    write_record(f, *record);
  } catch (const value_error& e) {
    refuse_call(f, e);
  } catch (const format_error& e) {
    refuse_call(f, e);
  }
}

void record_if_matching(const function_info& info) noexcept {
  try {
    for (const record_target& target : state->targets) {
      if (!matches_any({target.glob}, info.name)) continue;
      recorded_function* f = nullptr;
      {
        const std::lock_guard lock(state->mutex);
        f = state->functions
                .emplace_back(std::make_unique<recorded_function>(info, target, record_file::open(target.path)))
                .get();
      }
      (void)info.pre().add_global([f](const erased_call& call) { record_pre(*f, call); }).release();
      (void)info.post().add_global([f](const erased_call& call) { record_post(*f, call); }).release();
      return;  // the first matching target records the function
    }
  } catch (...) {
    log_line("hookscope: HOOKSCOPE_RECORD: could not attach the recorder (out of memory)");
  }
}

//--- across fork(): the child starts with empty buffers and records its own calls, each once ---//

void fork_prepare() noexcept {
  state->mutex.lock();
  for (const auto& f : state->functions) f->pairing.lock_for_fork();
  record_file::lock_all_for_fork();
}
void fork_release(bool in_child) noexcept {
  record_file::unlock_all_after_fork(in_child);
  for (const auto& f : state->functions) {
    // The parent's signed first line may still be in its buffer: the child signs its own.
    if (in_child) f->signature_written.store(false, std::memory_order_relaxed);
    f->pairing.unlock_after_fork(in_child);
  }
  state->mutex.unlock();
}

}  // namespace

void install_record() noexcept {
  try {
    auto targets = parse_record_targets(std::getenv("HOOKSCOPE_RECORD"));
    if (targets.empty()) return;  // the common case: no hook, no thread, nothing allocated
    state = new record_state{std::move(targets), {}, {}};
    add_exit_action({&record_file::flush_all, &record_file::write_all_from_signal_handler});
    add_periodic_flush(&record_file::flush_all);
    add_fork_handlers(
        &fork_prepare, []() noexcept { fork_release(false); }, []() noexcept { fork_release(true); });
    add_registration_hook(&record_if_matching);
  } catch (...) {
    log_line("hookscope: HOOKSCOPE_RECORD: could not read the variable (out of memory)");
  }
}

}  // namespace detail
HOOKSCOPE_DETAIL_END_NAMESPACE

#endif  // HOOKSCOPE_ENABLED
