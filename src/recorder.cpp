// call_recorder's output: its calls as JSON Lines, through the record format's one writer.
#include "hookscope/recorder.hpp"

#include "hookscope/callback_errors.hpp"

#include <cerrno>
#include <fstream>
#include <system_error>

HOOKSCOPE_DETAIL_BEGIN_NAMESPACE

void call_recorder::refuse(const std::exception& e) noexcept {
  if (refused_.fetch_add(1, std::memory_order_relaxed) != 0) return;
  try {
    detail::log_line("hookscope: call_recorder: '" + std::string(function_->name) +
                     "': a call is not recorded: " + e.what() +
                     " (later calls that cannot be captured are left out "
                     "without a message; refused_calls() counts them)");
  } catch (...) {
    detail::log_line("hookscope: call_recorder: a call is not recorded (a value cannot be captured)");
  }
}

std::string call_recorder::to_jsonl() const {
  std::string text;
  bool first = true;
  for (call_record& call : calls()) {
    if (first) call.parameters = detail::parameters_of(*function_);  // a function's first line carries them
    text += to_record_line(call);
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
