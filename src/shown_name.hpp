// A name from a file (a function's, a reason's) as messages show it, so that whatever bytes it holds it reads as one
// piece of one line. Internal to the library.
#pragma once

#include "hookscope/config.hpp"

#include <cstddef>
#include <string>
#include <string_view>

HOOKSCOPE_DETAIL_BEGIN_NAMESPACE
namespace detail {

/// `name` with control characters escaped (a newline in a name must not forge a line of output), at most 200 bytes
/// of it ("..." after a longer one).
inline std::string shown(std::string_view name) {
  constexpr std::size_t most = 200;
  std::string out;
  for (const char c : name.substr(0, most)) {
    const auto u = static_cast<unsigned char>(c);
    if (u < 0x20 || u == 0x7f) {
      constexpr char hex[] = "0123456789abcdef";
      out += "\\x";
      out += hex[u >> 4];
      out += hex[u & 15];
    } else {
      out += c;
    }
  }
  if (name.size() > most) out += "...";
  return out;
}

}  // namespace detail
HOOKSCOPE_DETAIL_END_NAMESPACE
