// What the environment asks of every observable as it registers: HOOKSCOPE_TRACE=<glob>[,<glob>...] here,
// HOOKSCOPE_RECORD=<glob>=<path>[,...] in recorder.cpp.
#include "hookscope/registry.hpp"

#include "hookscope/detail/fixed_string.hpp"
#include "hookscope/errors.hpp"

#if HOOKSCOPE_ENABLED

#include <fnmatch.h>

#include <cstdlib>
#include <string>
#include <vector>

HOOKSCOPE_DETAIL_BEGIN_NAMESPACE
namespace detail {
namespace {

std::vector<std::string> split_globs(const char* text) {
  std::vector<std::string> globs;
  if (text == nullptr) return globs;
  std::string_view rest = text;
  while (!rest.empty()) {
    const std::size_t comma = rest.find(',');
    const std::string_view glob = trim(rest.substr(0, comma));
    if (!glob.empty()) globs.emplace_back(glob);
    rest = comma == std::string_view::npos ? std::string_view{} : rest.substr(comma + 1);
  }
  return globs;
}

bool traced(std::string_view name) {
  static const std::vector<std::string> globs = split_globs(std::getenv("HOOKSCOPE_TRACE"));
  if (globs.empty()) return false;  // the common case allocates nothing
  const std::string subject(name);
  for (const std::string& glob : globs) {
    if (fnmatch(glob.c_str(), subject.c_str(), 0) == 0) return true;
  }
  return false;
}

void trace_call(const erased_call& call) {
  std::string line = "hookscope: trace: ";
  line.append(call.function().name).push_back('(');
  for (std::size_t i = 0; i < call.arg_count(); ++i) {
    if (i != 0) line.append(", ");
    line.append(call.arg_name(i)).push_back('=');
    line.append(call.format_arg(i));
  }
  line.push_back(')');
  log_line(line);
}

void trace_return(const erased_call& call) {
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

}  // namespace

void registry_link::on_registered(const function_info& info) noexcept {
  record_from_environment(info);
  try {
    if (!traced(info.name)) return;
    (void)info.pre().add_global(&trace_call).release();
    (void)info.post().add_global(&trace_return).release();
  } catch (...) {
    log_line("hookscope: HOOKSCOPE_TRACE: could not attach the trace (out of memory)");
  }
}

}  // namespace detail
HOOKSCOPE_DETAIL_END_NAMESPACE

#endif  // HOOKSCOPE_ENABLED
