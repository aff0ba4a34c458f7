// Arbitrary bytes as the body of a JSON string, for the display formats the environment features write (the
// timeline, the statistics table's names): every output is valid JSON and valid UTF-8, and nothing is lost.
// Valid UTF-8 is copied; `"` and `\` are escaped; control characters become `\u00XX`; each byte that is not part
// of a valid UTF-8 sequence (overlong forms, surrogates and code points past U+10FFFF included) becomes the
// visible text `\xNN` (written `\\xNN` in JSON). Allocation-free and async-signal-safe.
#pragma once

#include "hookscope/config.hpp"

#include <cstddef>
#include <string_view>

HOOKSCOPE_DETAIL_BEGIN_NAMESPACE
namespace detail {

/// How many bytes the UTF-8 character led by `lead` has (2 to 4), and the range of its second byte (which excludes
/// overlong forms, surrogates and code points past U+10FFFF); 0 bytes for a byte that leads no character.
struct utf8_lead {
  std::size_t bytes = 0;
  unsigned char low = 0x80, high = 0xbf;
};
constexpr utf8_lead utf8_lead_of(unsigned char lead) noexcept {
  if (lead >= 0xc2 && lead <= 0xdf) return {2};
  if (lead == 0xe0) return {3, 0xa0, 0xbf};
  if (lead == 0xed) return {3, 0x80, 0x9f};
  if (lead >= 0xe1 && lead <= 0xef) return {3};
  if (lead == 0xf0) return {4, 0x90, 0xbf};
  if (lead == 0xf4) return {4, 0x80, 0x8f};
  if (lead >= 0xf1 && lead <= 0xf3) return {4};
  return {};
}

/// How many bytes at the start of `s` follow a multi-byte lead validly (at most the character's length - 1).
constexpr std::size_t utf8_valid_continuation(std::string_view s, const utf8_lead& lead) noexcept {
  std::size_t i = 1;
  for (; i < lead.bytes && i < s.size(); ++i) {
    const auto b = static_cast<unsigned char>(s[i]);
    if (b < (i == 1 ? lead.low : 0x80) || b > (i == 1 ? lead.high : 0xbf)) break;
  }
  return i - 1;
}

/// The length of the valid UTF-8 sequence at the start of `s` (1 to 4), or 0 when it does not start with one.
constexpr std::size_t utf8_sequence_length(std::string_view s) noexcept {
  if (s.empty()) return 0;
  const auto b0 = static_cast<unsigned char>(s[0]);
  if (b0 < 0x80) return 1;
  const utf8_lead lead = utf8_lead_of(b0);
  if (lead.bytes == 0 || utf8_valid_continuation(s, lead) != lead.bytes - 1) return 0;
  return lead.bytes;
}

/// `s` without a trailing partial UTF-8 character (a name cut by a byte bound inside a character); other invalid
/// bytes stay.
constexpr std::string_view without_cut_character(std::string_view s) noexcept {
  for (std::size_t back = 1; back <= 3 && back <= s.size(); ++back) {  // a cut character keeps at most 3 bytes
    const std::string_view tail = s.substr(s.size() - back);
    const utf8_lead lead = utf8_lead_of(static_cast<unsigned char>(tail[0]));
    if (lead.bytes == 0) continue;  // not a lead: look further back
    const bool cut = lead.bytes > back && utf8_valid_continuation(tail, lead) == back - 1;
    return cut ? s.substr(0, s.size() - back) : s;
  }
  return s;
}

/// Where escaped text goes: a JSON string's body, or a log line (text for people: only what is not UTF-8 and
/// control characters are escaped, each as `\xNN`, once).
enum class escape_for { json, log };

/// Calls `put(char)` for the first character of `s` escaped for `where` (a valid UTF-8 sequence, or one byte that
/// is not part of one); returns how many bytes of `s` it took (0 for an empty `s`).
template <class Put>
constexpr std::size_t escape_first(std::string_view s, escape_for where, Put&& put) {
  constexpr char hex[] = "0123456789abcdef";
  if (s.empty()) return 0;
  const bool json = where == escape_for::json;
  const std::size_t n = utf8_sequence_length(s);
  const auto u = static_cast<unsigned char>(s[0]);
  if (n == 0 || (!json && u < 0x20)) {  // not UTF-8 (or, in a log line, a control character): visible text
    put('\\');
    if (json) put('\\');
    put('x');
    put(hex[u >> 4]);
    put(hex[u & 15]);
    return 1;
  }
  if (json && (s[0] == '"' || s[0] == '\\')) {
    put('\\');
    put(s[0]);
  } else if (json && u < 0x20) {
    put('\\');
    put('u');
    put('0');
    put('0');
    put(hex[u >> 4]);
    put(hex[u & 15]);
  } else {
    for (std::size_t i = 0; i < n; ++i) put(s[i]);
  }
  return n;
}

/// Calls `put(char)` for each character of `s` escaped for `where` (no quotes).
template <class Put>
constexpr void escape_text(std::string_view s, escape_for where, Put&& put) {
  while (!s.empty()) s.remove_prefix(escape_first(s, where, put));
}

/// Calls `put(char)` for each character of the JSON string body of `s` (no quotes).
template <class Put>
constexpr void json_string_body(std::string_view s, Put&& put) {
  escape_text(s, escape_for::json, put);
}

/// The length of the JSON string body of `s`, counted up to `limit`: a longer body gives `limit + 1` (so that a huge
/// value costs no more than its first bytes).
constexpr std::size_t json_body_length(std::string_view s, std::size_t limit) noexcept {
  std::size_t length = 0;
  while (!s.empty() && length <= limit)
    s.remove_prefix(escape_first(s, escape_for::json, [&length](char) { ++length; }));
  return length <= limit ? length : limit + 1;
}

/// Calls `put(char)` for the longest start of the JSON string body of `s` that fits in `room` bytes, cut between
/// characters: never inside a UTF-8 sequence or an escape (`\\xNN`, `\"`, `\u00XX`). Returns the bytes put.
template <class Put>
constexpr std::size_t json_body_prefix(std::string_view s, std::size_t room, Put&& put) {
  std::size_t used = 0;
  while (!s.empty()) {
    std::size_t unit = 0;
    (void)escape_first(s, escape_for::json, [&unit](char) { ++unit; });
    if (used + unit > room) break;
    used += unit;
    s.remove_prefix(escape_first(s, escape_for::json, put));
  }
  return used;
}

}  // namespace detail
HOOKSCOPE_DETAIL_END_NAMESPACE
