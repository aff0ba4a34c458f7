// HOOKSCOPE_RECORD's writer: a call copied in binary form (record_buffers.hpp, detail/record_encoding.hpp) as the
// record format's line, the same text to_record_line writes for the call's value trees.
#pragma once

#include "hookscope/config.hpp"
#include "hookscope/function_info.hpp"
#include "hookscope/value.hpp"

#include "record_buffers.hpp"

#include <cstdint>
#include <string>
#include <vector>

HOOKSCOPE_DETAIL_BEGIN_NAMESPACE
namespace detail {

/// What every line of one function shares, made once when the recorder attaches.
struct line_parts {
  explicit line_parts(const function_info& function);
  /// False when a name is not text (UTF-8) or the function's name is empty: to_record_line refuses such records, so the
  /// function's calls take the value tree, which refuses them with its message.
  bool usable = true;
  std::string prefix;             // {"function":"<name>"
  std::string signature;          // ,"signature":[...]
  std::vector<std::string> keys;  // ["<name>",  for each parameter
};

/// Appends the line of `message` (no newline); `sign`: with the function's signature. `ns_per_tick` converts its
/// latency. Out: std::string, or fixed_text in a signal handler (json_writer.hpp).
template <class Out>
void append_record_line(Out& out, const line_parts& parts, bool sign, const record_message& message,
                        double ns_per_tick);

/// The arguments of a call in binary form as the value tree holds them (the fields capture_args gives): for a call
/// finished on the value tree's path after all (its result has no binary form, or no buffer could take it).
value_fields decoded_args(const std::byte* args, std::uint32_t given, const function_info& function);

}  // namespace detail
HOOKSCOPE_DETAIL_END_NAMESPACE
