// Standard base64 (RFC 4648, with padding), the record format's encoding of tensor contents: the library's one
// encoder and decoder. Internal to the library (header-only, like json_reader.hpp).
#pragma once

#include "hookscope/config.hpp"

#include <cstddef>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

HOOKSCOPE_DETAIL_BEGIN_NAMESPACE
namespace detail {

inline constexpr std::string_view base64_alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

/// Appends `bytes` to `out` (anything with push_back(char)) in base64, padded with '=' to a multiple of 4 characters.
template <class Out>
void append_base64(Out& out, std::span<const std::byte> bytes) {
  std::size_t i = 0;
  for (; i + 2 < bytes.size(); i += 3) {
    const auto n = std::to_integer<unsigned>(bytes[i]) << 16 | std::to_integer<unsigned>(bytes[i + 1]) << 8 |
                   std::to_integer<unsigned>(bytes[i + 2]);
    for (int shift : {18, 12, 6, 0}) out.push_back(base64_alphabet[(n >> shift) & 63]);
  }
  if (i == bytes.size()) return;
  const bool two = i + 1 < bytes.size();
  const auto n = std::to_integer<unsigned>(bytes[i]) << 16 | (two ? std::to_integer<unsigned>(bytes[i + 1]) << 8 : 0U);
  out.push_back(base64_alphabet[(n >> 18) & 63]);
  out.push_back(base64_alphabet[(n >> 12) & 63]);
  out.push_back(two ? base64_alphabet[(n >> 6) & 63] : '=');
  out.push_back('=');
}

/// Decodes padded base64 `text` (a multiple of 4 characters: check first) into `bytes`; nothing on success, else
/// the offset of the first character that is neither a digit nor padding where padding may stand.
inline std::optional<std::size_t> decode_base64(std::string_view text, std::vector<std::byte>& bytes) {
  bytes.clear();
  bytes.reserve(text.size() / 4 * 3);
  for (std::size_t i = 0; i + 4 <= text.size(); i += 4) {
    unsigned n = 0;
    int padding = 0;
    for (std::size_t k = 0; k < 4; ++k) {
      const char c = text[i + k];
      const std::size_t digit = base64_alphabet.find(c);
      const bool pad = c == '=' && i + 4 == text.size() && k >= 2 && (k == 3 || text[i + 3] == '=');
      if (digit == std::string_view::npos && !pad) return i + k;
      padding += pad ? 1 : 0;
      n = n << 6 | (pad ? 0U : static_cast<unsigned>(digit));
    }
    bytes.push_back(static_cast<std::byte>(n >> 16));
    if (padding < 2) bytes.push_back(static_cast<std::byte>(n >> 8 & 0xFF));
    if (padding < 1) bytes.push_back(static_cast<std::byte>(n & 0xFF));
  }
  return std::nullopt;
}

}  // namespace detail
HOOKSCOPE_DETAIL_END_NAMESPACE
