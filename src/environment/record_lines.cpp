// HOOKSCOPE_RECORD's writer: binary calls as record lines (see record_lines.hpp). The leaves are written by the value
// tree's own writers (json_writer.hpp), so both forms give one text; tests/environment/test_record_env.py checks it
// against to_record_line over random values.
#include "record_lines.hpp"

#include "../json_writer.hpp"
#include "../record_parts.hpp"
#include "../tick_clock.hpp"

#include "hookscope/detail/call_pairing.hpp"
#include "hookscope/detail/record_encoding.hpp"

#include <algorithm>
#include <array>
#include <charconv>
#include <cmath>
#include <cstring>
#include <new>
#include <span>

HOOKSCOPE_DETAIL_BEGIN_NAMESPACE
namespace detail {

line_parts::line_parts(const function_info& function) {
  usable = !function.name.empty() && is_utf8(function.name);
  for (std::string_view name : function.param_names) usable = usable && is_utf8(name);
  if (!usable) return;
  prefix = "{\"function\":";
  append_json_string(prefix, function.name);
  constexpr std::string_view arguments = ",\"args\":[],\"kwargs\":[";
  head = prefix;
  head += arguments;
  signed_head = prefix + ",\"signature\":";
  append_json_signature(signed_head, parameters_of(function));
  signed_head += arguments;
  keys.reserve(function.param_names.size());
  for (std::string_view name : function.param_names) {
    std::string key = keys.empty() ? "[" : "],[";
    append_json_string(key, name);
    key.push_back(',');
    keys.push_back(std::move(key));
  }
}

namespace {

template <class T>
T take(const std::byte*& at) noexcept {
  T v;
  std::memcpy(&v, at, sizeof v);
  at += sizeof v;
  return v;
}

value decoded_value(const std::byte*& at) {
  switch (static_cast<encoded_tag>(take<std::uint8_t>(at))) {
    case encoded_tag::boolean_false: return value(false);
    case encoded_tag::boolean_true: return value(true);
    case encoded_tag::integer: return value(take<std::int64_t>(at));
    case encoded_tag::floating: return value(take<double>(at));
    case encoded_tag::text: {
      const auto size = take<std::uint32_t>(at);
      std::string s(reinterpret_cast<const char*>(at), size);
      at += size;
      return value(std::move(s));
    }
    case encoded_tag::tensor: {
      tensor_spec t;
      t.dtype = static_cast<dtype>(take<std::uint8_t>(at));
      t.shape.resize(take<std::uint8_t>(at));
      for (std::int64_t& d : t.shape) d = take<std::int64_t>(at);
      return value(std::move(t));
    }
  }
  return {};
}

// One value of the binary form as JSON, moving `at` past it.
template <class Out>
void append_encoded_value(Out& out, const std::byte*& at) {
  switch (static_cast<encoded_tag>(take<std::uint8_t>(at))) {
    case encoded_tag::boolean_false: append_json_boolean(out, false); return;
    case encoded_tag::boolean_true: append_json_boolean(out, true); return;
    case encoded_tag::integer: append_json_integer(out, take<std::int64_t>(at)); return;
    case encoded_tag::floating: append_json_floating(out, take<double>(at)); return;
    case encoded_tag::text: {
      const auto size = take<std::uint32_t>(at);
      append_json_str(out, std::string_view(reinterpret_cast<const char*>(at), size));
      at += size;
      return;
    }
    case encoded_tag::tensor: {
      const auto type = static_cast<dtype>(take<std::uint8_t>(at));
      const std::size_t rank = take<std::uint8_t>(at);
      std::int64_t shape[max_encoded_rank];  // not zeroed: only its first `rank` are written and read
      std::memcpy(shape, at, 8 * rank);
      at += 8 * rank;
      append_json_tensor(out, std::span<const std::int64_t>(shape, rank), type);
      return;
    }
  }
}

// Only tensors and strings are remembered: a number's digits cost less than comparing and keeping them.
std::size_t remembered_bytes(const std::byte* at) noexcept {
  switch (static_cast<encoded_tag>(at[0])) {
    case encoded_tag::tensor: return 3 + 8 * std::size_t{std::to_integer<std::uint8_t>(at[2])};
    case encoded_tag::text: {
      std::uint32_t size = 0;
      std::memcpy(&size, at + 1, sizeof size);
      return 5 + std::size_t{size};
    }
    default: return 0;
  }
}

bool whole(const std::string&) noexcept { return true; }
bool whole(const fixed_text& out) noexcept { return !out.overflowed(); }

// append_encoded_value, or the remembered text of the same binary form; then remembers this one.
template <class Out>
void append_remembered_value(Out& out, const std::byte*& at, line_memo::remembered* slot) {
  const std::size_t n = slot == nullptr ? 0 : remembered_bytes(at);
  if (n == 0) return append_encoded_value(out, at);
  const std::string_view encoded(reinterpret_cast<const char*>(at), n);
  if (encoded == slot->encoded) {
    out += slot->text;
    at += n;
    return;
  }
  const std::size_t start = out.size();
  append_encoded_value(out, at);
  if (!whole(out)) return;
  try {
    slot->encoded.assign(encoded);
    slot->text.assign(out.data() + start, out.size() - start);
  } catch (const std::bad_alloc&) {
    slot->encoded.clear();  // nothing remembered; the line itself is whole
  }
}

// How many of the call's arguments, from the first, repeat the last call's byte for byte. The binary form delimits
// itself (a tag, then a length or a rank), so an argument whose bytes up to its end are equal is the same argument.
std::uint32_t repeated_arguments(const line_memo::last_arguments& last, const record_message& m) noexcept {
  if (last.kept != m.given) return 0;
  const char* before = last.encoded.data.get();
  const auto* now = reinterpret_cast<const char*>(m.args());
  std::uint32_t repeated = 0;
  for (std::uint32_t start = 0; repeated < m.given; start = last.encoded_ends[repeated++]) {
    const std::uint32_t end = last.encoded_ends[repeated];
    if (end > m.args_bytes || std::memcmp(now + start, before + start, end - start) != 0) break;
  }
  return repeated;
}

// The kwargs' items of the call (`["name",value]` joined by ',', the last one's `]` left to the caller): those that
// repeat the last call's copied from `memo`, the others written and kept there.
template <class Out>
void append_arguments(Out& out, const line_parts& parts, const record_message& message, line_memo* memo) {
  using last_arguments = line_memo::last_arguments;
  const std::byte* at = message.args();
  const std::size_t items = out.size();
  // Kept when the first argument is a tensor or a string: numbers cost less to write than to keep.
  const bool worth_keeping =
      message.given != 0 && message.given <= last_arguments::max_kept && remembered_bytes(message.args()) != 0;
  last_arguments* last = memo == nullptr || !worth_keeping ? nullptr : &memo->arguments();
  const std::uint32_t repeated = last == nullptr ? 0 : repeated_arguments(*last, message);
  if (repeated != 0) {
    out += std::string_view(last->text.data.get(), last->text_ends[repeated - 1]);
    at += last->encoded_ends[repeated - 1];
  }
  // Nothing kept while the ends below are rewritten: a std::string line that throws (no memory) leaves none half made.
  if (last != nullptr && repeated != message.given) last->kept = 0;
  for (std::uint32_t i = repeated; i < message.given; ++i) {
    out += parts.keys[i];
    append_remembered_value(out, at, memo == nullptr ? nullptr : memo->slot(i));
    if (last != nullptr) {
      last->text_ends[i] = static_cast<std::uint32_t>(out.size() - items);
      last->encoded_ends[i] = static_cast<std::uint32_t>(at - message.args());
    }
  }
  if (last == nullptr || repeated == message.given) return;
  const std::size_t kept_text = repeated == 0 ? 0 : last->text_ends[repeated - 1];
  const std::size_t kept_encoded = repeated == 0 ? 0 : last->encoded_ends[repeated - 1];
  const bool kept =
      whole(out) &&
      last->text.replace_tail(kept_text, out.data() + items + kept_text, out.size() - items - kept_text) &&
      last->encoded.replace_tail(kept_encoded, message.args() + kept_encoded, message.args_bytes - kept_encoded);
  last->kept = kept ? message.given : 0;
}

}  // namespace

bool line_memo::last_arguments::bytes::replace_tail(std::size_t keep, const void* from, std::size_t n) noexcept {
  if (keep + n > capacity) {
    const std::size_t grown = std::max(keep + n, 2 * capacity);
    std::unique_ptr<char[]> more(new (std::nothrow) char[grown]);
    if (more == nullptr) return false;
    if (keep != 0) std::memcpy(more.get(), data.get(), keep);
    data = std::move(more);
    capacity = grown;
  }
  if (n != 0) std::memcpy(data.get() + keep, from, n);
  return true;
}

value_fields decoded_args(const std::byte* args, std::uint32_t given, const function_info& function) {
  value_fields fields;
  fields.reserve(given);
  for (std::uint32_t i = 0; i < given; ++i)
    fields.emplace_back(std::string(function.param_names[i]), decoded_value(args));
  return fields;
}

template <class Out>
void append_record_line(Out& out, const line_parts& parts, bool sign, const record_message& message, double ns_per_tick,
                        line_memo* memo) {
  out += sign ? parts.signed_head : parts.head;
  append_arguments(out, parts, message, memo);
  // The last item's `]`, the kwargs' and what follows, in one piece.
  constexpr std::string_view after_items[2][2] = {{"]", "],\"result\":"}, {"]]", "]],\"result\":"}};
  out += after_items[message.given != 0][message.has_result];
  if (message.has_result) {
    const std::byte* at = message.result();
    append_remembered_value(out, at, memo == nullptr ? nullptr : memo->slot(parts.keys.size()));
  }
  out += message.threw ? std::string_view(",\"threw\":true,\"latency_ns\":") : std::string_view(",\"latency_ns\":");
  char digits[24];
  char* end = std::to_chars(digits, digits + sizeof digits - 1, latency_ns(message.latency_ticks, ns_per_tick)).ptr;
  *end++ = '}';
  out.append(digits, end);
}

template void append_record_line(std::string&, const line_parts&, bool, const record_message&, double, line_memo*);
template void append_record_line(fixed_text&, const line_parts&, bool, const record_message&, double, line_memo*);

}  // namespace detail
HOOKSCOPE_DETAIL_END_NAMESPACE
