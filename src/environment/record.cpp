// HOOKSCOPE_RECORD=<glob>=<path>[,<glob>=<path>...]: every call of a matching observable is recorded into a JSON
// Lines file, without any code change (functions may share a file; each signs its first line).
#include "settings.hpp"

#if HOOKSCOPE_ENABLED

#include "hookscope/detail/call_pairing.hpp"
#include "hookscope/detail/fixed_string.hpp"
#include "hookscope/errors.hpp"
#include "hookscope/records.hpp"
#include "hookscope/registry.hpp"

#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

HOOKSCOPE_DETAIL_BEGIN_NAMESPACE
namespace detail {
namespace {

struct record_target {
  std::string glob;
  std::string path;
};

std::vector<record_target> parse_record_targets(const char* text) {
  std::vector<record_target> targets;
  for (const std::string& entry : split_list(text)) {
    const std::string_view text = entry;
    const std::size_t equal = text.find('=');
    const std::string_view glob = equal == std::string_view::npos ? std::string_view{} : trim(text.substr(0, equal));
    const std::string_view path = equal == std::string_view::npos ? std::string_view{} : trim(text.substr(equal + 1));
    if (glob.empty() || path.empty()) {
      log_line("hookscope: HOOKSCOPE_RECORD: expected <glob>=<path>, got '" + entry + "'; ignored");
      continue;
    }
    targets.push_back({std::string(glob), std::string(path)});
  }
  return targets;
}

// One output file, shared by every function recorded into it. Files are never closed nor destroyed: calls made
// by static destructors still write, and exit() flushes the stdio buffers after the last of them.
class record_file {
 public:
  explicit record_file(std::string path) : path_(std::move(path)), file_(std::fopen(path_.c_str(), "w")) {
    if (file_ == nullptr) fail("cannot open it for writing");
  }

  /// Call with mutex() held.
  void write(const std::string& line) {
    if (file_ == nullptr) return;
    if (std::fwrite(line.data(), 1, line.size(), file_) != line.size() || std::fputc('\n', file_) == EOF) {
      fail("cannot write to it");
      std::fclose(file_);
      file_ = nullptr;
    }
  }
  const std::string& path() const noexcept { return path_; }
  std::mutex& mutex() noexcept { return mutex_; }

 private:
  void fail(const char* what) {
    log_line("hookscope: HOOKSCOPE_RECORD: " + path_ + ": " + what + " (" + std::strerror(errno) +
             "); its calls are not recorded");
  }

  std::string path_;
  std::mutex mutex_;
  std::FILE* file_;
};

// What one recorded function's callbacks share.
struct recorded_function {
  explicit recorded_function(const function_info& f, record_file& out) : info(&f), file(&out), pairing(f) {}
  const function_info* info;
  record_file* file;
  call_pairing pairing;
  std::atomic<bool> signature_written{false};
  std::atomic<bool> reported_uncapturable{false};
};

// The feature's state, made once by install_record and never destroyed: callbacks may run after main() returned.
struct record_state {
  std::vector<record_target> targets;
  std::mutex mutex;
  std::vector<std::unique_ptr<record_file>> files;
  std::vector<std::unique_ptr<recorded_function>> functions;

  record_file& file_for(const std::string& path) {  // call with mutex held
    for (const auto& f : files) {
      if (f->path() == path) return *f;
    }
    return *files.emplace_back(std::make_unique<record_file>(path));
  }
};
record_state* state = nullptr;

void record_pre(recorded_function& f, const erased_call& call) {
  if (!call.can_capture_args()) {
    if (!f.reported_uncapturable.exchange(true)) {
      log_line("hookscope: HOOKSCOPE_RECORD: cannot record '" + std::string(f.info->name) +
               "': a parameter type cannot be captured (see hookscope::capturable)");
    }
    return;
  }
  f.pairing.begin(call.call_id(), call.capture_args());
}

void record_post(recorded_function& f, const erased_call& call) {
  std::optional<call_record> record = f.pairing.end(call.call_id(), static_cast<bool>(call.exception()));
  if (!record) return;
  record->result = call.capture_return_value();
  // The parameters go on the function's first line in the file: decide and write under the file's lock.
  const std::lock_guard lock(f.file->mutex());
  if (!f.signature_written.exchange(true)) record->parameters = parameters_of(*f.info);
  f.file->write(to_record_line(*record));
}

void record_if_matching(const function_info& info) noexcept {
  try {
    for (const record_target& target : state->targets) {
      if (!glob_matches(target.glob, info.name)) continue;
      recorded_function* f = nullptr;
      {
        const std::lock_guard lock(state->mutex);
        f = state->functions.emplace_back(std::make_unique<recorded_function>(info, state->file_for(target.path)))
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

}  // namespace

void install_record() noexcept {
  try {
    auto targets = parse_record_targets(std::getenv("HOOKSCOPE_RECORD"));
    if (targets.empty()) return;  // the common case: no hook, nothing allocated
    state = new record_state{std::move(targets), {}, {}, {}};
    add_registration_hook(&record_if_matching);
  } catch (...) {
    log_line("hookscope: HOOKSCOPE_RECORD: could not read the variable (out of memory)");
  }
}

}  // namespace detail
HOOKSCOPE_DETAIL_END_NAMESPACE

#endif  // HOOKSCOPE_ENABLED
