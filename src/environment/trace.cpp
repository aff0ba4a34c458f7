// HOOKSCOPE_TRACE=<glob>[,<glob>...]: every call of a matching observable is logged with its arguments and how
// it ended, without any code change.
#include "settings.hpp"

#if HOOKSCOPE_ENABLED

#include "hookscope/callback_errors.hpp"
#include "hookscope/registry.hpp"

#include "lifecycle.hpp"

#include "../reentry_scope.hpp"

#include <atomic>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <vector>

HOOKSCOPE_DETAIL_BEGIN_NAMESPACE
namespace detail {
namespace {

// Read once, before any hook runs (install_trace is called from a static initialiser); never destroyed, so that
// observables registered by late static initialisers still find it.
const std::vector<std::string>* trace_globs = nullptr;

// Whether this thread is writing a trace line: a call that a signal handler makes meanwhile is not traced (the frame
// below may be inside malloc, or hold the logger's lock) but counted, and the count is logged at exit.
constinit thread_local bool tracing = false;
constinit std::atomic<std::uint64_t> untraced{0};

void trace_call(const erased_call& call) {
  const reentry_scope scope(tracing);
  if (scope.reentered()) {
    untraced.fetch_add(1, std::memory_order_relaxed);
    return;
  }
  std::string line = "hookscope: trace: ";
  line.append(call.function().name).push_back('(');
  for (std::size_t i = 0; i < call.args_given(); ++i) {  // an omitted argument is absent, not "b="
    if (i != 0) line.append(", ");
    line.append(call.arg_name(i)).push_back('=');
    line.append(call.format_arg(i));
  }
  line.push_back(')');
  log_line(line);
}

void trace_return(const erased_call& call) {
  const reentry_scope scope(tracing);
  if (scope.reentered()) return;  // its call was counted (the same frames below)
  std::string line = "hookscope: trace: ";
  line.append(call.function().name);
  if (call.exception()) {
    line.append(" threw: ").append(describe_exception(call.exception()));
  } else {
    const std::string result = call.format_return_value();
    line.append(result.empty() ? " returned" : " returned " + result);
  }
  log_line(line);
}

void report_untraced() noexcept {
  const std::uint64_t n = untraced.load(std::memory_order_relaxed);
  if (n == 0) return;
  try {
    log_line("hookscope: HOOKSCOPE_TRACE: " + std::to_string(n) +
             " calls not traced: a signal handler made them while its thread was writing a trace line");
  } catch (...) {
    log_line("hookscope: HOOKSCOPE_TRACE: calls made by a signal handler while its thread traced are not traced");
  }
}

void trace_if_matching(const function_info& info) noexcept {
  if (matches_any(*trace_globs, info.name)) attach_for_good(info, "HOOKSCOPE_TRACE", &trace_call, &trace_return);
}

}  // namespace

void install_trace() noexcept {
  try {
    const char* text = std::getenv("HOOKSCOPE_TRACE");
    globs_and_path setting = parse_globs_and_path("HOOKSCOPE_TRACE", text, "<glob>[,<glob>...]");
    if (!setting.ok) return;
    if (setting.path) {
      report_setting("HOOKSCOPE_TRACE", text, "a '=' (the trace goes to the log, not to a file)", "<glob>[,<glob>...]",
                     "the variable is ignored");
      return;
    }
    std::vector<std::string> globs = std::move(setting.globs);
    if (globs.empty()) return;  // the common case: no hook, nothing allocated
    trace_globs = new std::vector<std::string>(std::move(globs));
    add_exit_action({&report_untraced, []() noexcept {}});
    add_registration_hook(&trace_if_matching);
  } catch (...) {
    log_line("hookscope: HOOKSCOPE_TRACE: could not read the variable (out of memory)");
  }
}

}  // namespace detail
HOOKSCOPE_DETAIL_END_NAMESPACE

#endif  // HOOKSCOPE_ENABLED
