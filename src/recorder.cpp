// The record format's JSON Lines: one call per line, the first line of a function carrying its signature.
#include "hookscope/recorder.hpp"

#include <cerrno>
#include <fstream>
#include <system_error>

HOOKSCOPE_DETAIL_BEGIN_NAMESPACE

std::string record_line(const function_info& function, const recorded_call& call, bool with_signature) {
  std::string line = "{\"function\":";
  detail::append_json_string(line, function.name);
  if (with_signature) {
    line += ",\"signature\":[";
    for (std::size_t i = 0; i < function.param_names.size(); ++i) {
      if (i != 0) line.push_back(',');
      line += "{\"name\":";
      detail::append_json_string(line, function.param_names[i]);
      line.push_back('}');
    }
    line.push_back(']');
  }
  line += ",\"args\":[],\"kwargs\":";
  detail::append_json_fields(line, call.kwargs);
  if (call.result) {
    line += ",\"result\":";
    detail::append_json(line, *call.result);
  }
  if (call.threw) line += ",\"threw\":true";
  line += ",\"latency_ns\":" + std::to_string(call.latency_ns) + "}";
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
