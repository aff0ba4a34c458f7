// HOOKSCOPE_RECORD's writer: a call copied in binary form (record_buffers.hpp, detail/record_encoding.hpp) as the
// record format's line, the same text to_record_line writes for the call's value trees.
#pragma once

#include "hookscope/config.hpp"
#include "hookscope/function_info.hpp"
#include "hookscope/value.hpp"

#include "record_buffers.hpp"

#include <cstdint>
#include <memory>
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
  std::string prefix;  // {"function":"<name>"
  // The line up to its first argument: prefix, then `,"args":[],"kwargs":[`; signed: with `,"signature":[...]`.
  std::string head;
  std::string signed_head;
  // For each parameter, what comes before its value: `["<name>",`, after the first `],["<name>",` (the last item's
  // `]` is the end's: few pieces a line, each a copy).
  std::vector<std::string> keys;
};

/// What the writer keeps of one function's last line. A function's calls repeat their shapes (a decoder's cache, its
/// mask, its logits): arguments that repeat the last call's from the first on cost one comparison of their binary
/// form and one copy of their text; a tensor or string that repeats its parameter's last value, a comparison and a
/// copy of its text; neither costs its digits and escapes again.
class line_memo {
 public:
  struct remembered {
    std::string encoded;  // the value's binary form
    std::string text;     // and its JSON
  };
  /// The last call's arguments: their binary form and their text (the kwargs' items, `["name",value]` joined by
  /// ','), and where each of the first `kept` arguments ends in both; kept = 0: nothing kept.
  struct last_arguments {
    static constexpr std::uint32_t max_kept = 64;  // a function of more parameters writes its arguments each time
    struct bytes {
      std::unique_ptr<char[]> data;
      std::size_t capacity = 0;
      /// Keeps the first `keep` bytes and appends `n` from `from`; false (nothing changed) without memory.
      bool replace_tail(std::size_t keep, const void* from, std::size_t n) noexcept;
    };
    bytes encoded, text;
    std::uint32_t kept = 0;
    std::uint32_t encoded_ends[max_kept];
    std::uint32_t text_ends[max_kept];
  };
  /// The slot of parameter `index` (the result's is the function's parameter count); null when there is none.
  remembered* slot(std::size_t index) noexcept { return index < slots_.size() ? &slots_[index] : nullptr; }
  last_arguments& arguments() noexcept { return arguments_; }
  explicit line_memo(std::size_t parameters) : slots_(parameters + 1) {}

 private:
  std::vector<remembered> slots_;
  last_arguments arguments_;
};

/// Appends the line of `message` (no newline); `sign`: with the function's signature. `ns_per_tick` converts its
/// latency. Out: std::string, or fixed_text in a signal handler (json_writer.hpp). `memo`: the writer's texts of the
/// function's last values (used and updated; null in a signal handler, which allocates nothing).
template <class Out>
void append_record_line(Out& out, const line_parts& parts, bool sign, const record_message& message, double ns_per_tick,
                        line_memo* memo);

/// The arguments of a call in binary form as the value tree holds them (the fields capture_args gives): for a call
/// finished on the value tree's path after all (its result has no binary form, or no buffer could take it).
value_fields decoded_args(const std::byte* args, std::uint32_t given, const function_info& function);

}  // namespace detail
HOOKSCOPE_DETAIL_END_NAMESPACE
