// The record format's JSON Lines: one call per line, the first line of a function carrying its signature.
#include "hookscope/recorder.hpp"

#include <cerrno>
#include <fstream>
#include <system_error>

HOOKSCOPE_DETAIL_BEGIN_NAMESPACE

std::string record_line(const function_info& function, const recorded_call& call, bool with_signature) {
  std::string line;
  detail::append_record_start(line, function.name);
  if (with_signature) {
    std::vector<parameter> sig;  // C++ parameters: named, no defaults, none variadic
    sig.reserve(function.param_names.size());
    for (std::string_view name : function.param_names) sig.push_back({std::string(name)});
    detail::append_record_signature(line, sig);
  }
  detail::append_record_end(line, {}, call.kwargs, call.result ? &*call.result : nullptr, call.threw, call.latency_ns);
  return line;
}

std::string call_recorder::to_jsonl() const {
  std::string text;
  bool first = true;
  for (const recorded_call& call : calls()) {
    text += record_line(*function_, call, first);
    text.push_back('\n');
    first = false;
  }
  return text;
}

void call_recorder::write_jsonl(const std::filesystem::path& path) const {
  const std::string text = to_jsonl();
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  if (out) out.write(text.data(), static_cast<std::streamsize>(text.size()));
  if (out) out.close();
  if (!out) {
    throw std::system_error(errno != 0 ? errno : EIO, std::generic_category(),
                            "hookscope: call_recorder::write_jsonl: cannot write " + path.string());
  }
}

HOOKSCOPE_DETAIL_END_NAMESPACE

//=== HOOKSCOPE_RECORD=<glob>=<path>[,<glob>=<path>...] ===//
#if HOOKSCOPE_ENABLED

#include "hookscope/detail/fixed_string.hpp"
#include "hookscope/errors.hpp"

#include <fnmatch.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string_view>

HOOKSCOPE_DETAIL_BEGIN_NAMESPACE
namespace detail {
namespace {

struct record_target {
  std::string glob;
  std::string path;
};

std::vector<record_target> parse_record_targets(const char* text) {
  std::vector<record_target> targets;
  if (text == nullptr) return targets;
  std::string_view rest = text;
  while (!rest.empty()) {
    const std::size_t comma = rest.find(',');
    const std::string_view entry = trim(rest.substr(0, comma));
    rest = comma == std::string_view::npos ? std::string_view{} : rest.substr(comma + 1);
    if (entry.empty()) continue;
    const std::size_t equal = entry.find('=');
    if (equal == std::string_view::npos || trim(entry.substr(0, equal)).empty() ||
        trim(entry.substr(equal + 1)).empty()) {
      log_line("hookscope: HOOKSCOPE_RECORD: expected <glob>=<path>, got '" + std::string(entry) + "'; ignored");
      continue;
    }
    targets.push_back({std::string(trim(entry.substr(0, equal))), std::string(trim(entry.substr(equal + 1)))});
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

record_file& file_for(const std::string& path) {
  static std::mutex files_mutex;
  static auto* files = new std::vector<record_file*>();  // leaked on purpose, see record_file
  const std::lock_guard lock(files_mutex);
  for (record_file* f : *files) {
    if (f->path() == path) return *f;
  }
  files->push_back(new record_file(path));
  return *files->back();
}

// What a recorded function's callbacks share; leaked like the files.
struct recorded_function {
  const function_info* info;
  record_file* file;
  std::atomic<bool> signature_written{false};
  std::atomic<bool> reported_uncapturable{false};
};

struct pending_call {
  const void* call_id;
  value_fields kwargs;
  std::chrono::steady_clock::time_point start;
};

// Calls in flight on this thread, innermost last: a call's post callback always runs on its thread, after
// those of the calls it made.
thread_local std::vector<pending_call> pending_calls;

void record_pre(recorded_function& f, const erased_call& call) {
  if (!call.can_capture_args()) {
    if (!f.reported_uncapturable.exchange(true)) {
      log_line("hookscope: HOOKSCOPE_RECORD: cannot record '" + std::string(f.info->name) +
               "': a parameter type cannot be captured (see hookscope::capturable)");
    }
    return;
  }
  pending_calls.push_back({call.call_id(), call.capture_args(), std::chrono::steady_clock::now()});
}

void record_post(recorded_function& f, const erased_call& call) {
  const auto end = std::chrono::steady_clock::now();
  if (pending_calls.empty() || pending_calls.back().call_id != call.call_id()) return;
  recorded_call record;
  record.kwargs = std::move(pending_calls.back().kwargs);
  record.latency_ns = std::chrono::duration_cast<std::chrono::nanoseconds>(end - pending_calls.back().start).count();
  pending_calls.pop_back();
  record.threw = static_cast<bool>(call.exception());
  record.result = call.capture_return_value();
  // The signature goes on the function's first line in the file: decide and write under the file's lock.
  const std::lock_guard lock(f.file->mutex());
  const bool first = !f.signature_written.exchange(true);
  f.file->write(record_line(*f.info, record, first));
}

}  // namespace

void registry_link::record_from_environment(const function_info& info) noexcept {
  try {
    static const std::vector<record_target> targets = parse_record_targets(std::getenv("HOOKSCOPE_RECORD"));
    if (targets.empty()) return;  // the common case allocates nothing
    const std::string subject(info.name);
    for (const record_target& target : targets) {
      if (fnmatch(target.glob.c_str(), subject.c_str(), 0) != 0) continue;
      // Kept reachable from a static pointer (never destroyed, like the files): callbacks may outlive main().
      static auto* functions = new std::vector<std::unique_ptr<recorded_function>>();
      static std::mutex functions_mutex;
      recorded_function* f = nullptr;
      {
        const std::lock_guard lock(functions_mutex);
        f = functions->emplace_back(new recorded_function{&info, &file_for(target.path)}).get();
      }
      (void)info.pre().add_global([f](const erased_call& call) { record_pre(*f, call); }).release();
      (void)info.post().add_global([f](const erased_call& call) { record_post(*f, call); }).release();
      return;  // the first matching target records the function
    }
  } catch (...) {
    log_line("hookscope: HOOKSCOPE_RECORD: could not attach the recorder (out of memory)");
  }
}

}  // namespace detail
HOOKSCOPE_DETAIL_END_NAMESPACE

#endif  // HOOKSCOPE_ENABLED
