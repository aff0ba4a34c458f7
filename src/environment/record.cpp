// HOOKSCOPE_RECORD=<glob>=<path>[<options>][,...]: every call of a matching observable is recorded into a JSON
// Lines file, without any code change. Functions and processes may share a file; each signs its first line.
// Options, in brackets after the path and separated by ';': max_calls=N (record at most N calls of each matching
// function), every=N (record one call in N: the first, the N+1th, ...).
#include "settings.hpp"

#if HOOKSCOPE_ENABLED

#include "lifecycle.hpp"
#include "record_file.hpp"

#include "hookscope/detail/call_pairing.hpp"
#include "hookscope/detail/fixed_string.hpp"
#include "hookscope/callback_errors.hpp"
#include "hookscope/records.hpp"
#include "hookscope/registry.hpp"

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

std::optional<std::uint64_t> positive_number(std::string_view text) {
  std::uint64_t n = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), n);
  if (ec != std::errc() || end != text.data() + text.size() || n == 0) return std::nullopt;
  return n;
}

// "max_calls=10;every=2" into the target; false (and a log line) for anything else.
bool parse_options(std::string_view options, const std::string& entry, record_target& target) {
  while (!options.empty()) {
    const std::size_t semicolon = options.find(';');
    const std::string_view option = trim(options.substr(0, semicolon));
    options = semicolon == std::string_view::npos ? std::string_view{} : options.substr(semicolon + 1);
    if (option.empty()) continue;
    const std::size_t equal = option.find('=');
    const std::string_view name = trim(option.substr(0, equal));
    std::uint64_t n = 0;  // 0: not a positive integer
    if (equal != std::string_view::npos) n = positive_number(trim(option.substr(equal + 1))).value_or(0);
    if (name == "max_calls" && n != 0) {
      target.max_calls = n;
    } else if (name == "every" && n != 0) {
      target.every = n;
    } else {
      log_line("hookscope: HOOKSCOPE_RECORD: unknown option '" + std::string(option) + "' in '" + entry +
               "' (expected max_calls=N or every=N, N a positive integer); the entry is ignored");
      return false;
    }
  }
  return true;
}

std::vector<record_target> parse_record_targets(const char* text) {
  std::vector<record_target> targets;
  for (const std::string& entry : split_list(text)) {
    std::string_view rest = entry;
    record_target target;
    std::string_view options;
    if (rest.ends_with(']')) {
      if (const std::size_t open = rest.rfind('['); open != std::string_view::npos) {
        options = rest.substr(open + 1, rest.size() - open - 2);
        rest = rest.substr(0, open);
      }
    }
    const std::size_t equal = rest.find('=');
    const std::string_view glob = equal == std::string_view::npos ? std::string_view{} : trim(rest.substr(0, equal));
    const std::string_view path = equal == std::string_view::npos ? std::string_view{} : trim(rest.substr(equal + 1));
    if (glob.empty() || path.empty()) {
      log_line("hookscope: HOOKSCOPE_RECORD: expected <glob>=<path>[options], got '" + entry + "'; ignored");
      continue;
    }
    if (!parse_options(options, entry, target)) continue;
    target.glob = glob;
    target.path = path;
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
};

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
  if (!take_call(f)) return;
  f.pairing.begin(call.call_id(), call.capture_args());
}

void record_post(recorded_function& f, const erased_call& call) {
  std::optional<call_record> record = f.pairing.end(call.call_id(), static_cast<bool>(call.exception()));
  if (!record) return;
  record->result = call.capture_return_value();
  if (!f.signature_written.load(std::memory_order_acquire)) {
    const std::lock_guard lock(f.first_line_mutex);
    if (!f.signature_written.load(std::memory_order_relaxed)) {
      record->parameters = parameters_of(*f.info);
      f.file->append(to_record_line(*record));
      f.signature_written.store(true, std::memory_order_release);
      return;
    }
  }
  f.file->append(to_record_line(*record));
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
