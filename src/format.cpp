// The compiled part of detail/format.hpp: numbers through std::to_chars and streamed values through an
// ostringstream, so that neither <charconv> nor <sstream> is parsed by every translation unit calling an observable.
#include "hookscope/detail/format.hpp"

#include <charconv>
#include <cstdint>
#include <ostream>
#include <sstream>
#include <string>

HOOKSCOPE_DETAIL_BEGIN_NAMESPACE
namespace detail {
namespace {

template <class N>
std::string to_chars_text(N value) {
  char digits[64];  // the longest long double in its shortest exact form is well under 64 characters
  const auto result = std::to_chars(digits, digits + sizeof digits, value);
  return std::string(digits, result.ptr);
}

}  // namespace

std::string format_integer(long long value) { return to_chars_text(value); }
std::string format_integer(unsigned long long value) { return to_chars_text(value); }
std::string format_floating(float value) { return to_chars_text(value); }
std::string format_floating(double value) { return to_chars_text(value); }
std::string format_floating(long double value) { return to_chars_text(value); }

std::string format_address(std::uintptr_t address) {
  char digits[2 + 2 * sizeof address] = {'0', 'x'};
  const auto result = std::to_chars(digits + 2, digits + sizeof digits, address, 16);
  return std::string(digits, result.ptr);
}

std::string format_quoted(std::string_view text) {
  std::string out;
  if (text.size() <= max_quoted_bytes) {
    out.reserve(text.size() + 2);
    out.push_back('"');
    out.append(text).push_back('"');
    return out;
  }
  std::size_t kept = max_quoted_bytes;  // back to the start of a character: no UTF-8 sequence cut in two
  for (std::size_t back = 0; back < 3 && (static_cast<unsigned char>(text[kept]) & 0xc0) == 0x80; ++back) --kept;
  out.push_back('"');
  out.append(text.substr(0, kept)).append("\"\xe2\x80\xa6(").append(std::to_string(text.size())).append(" bytes)");
  return out;
}

std::string format_unreadable(std::uintptr_t address) { return format_address(address) + " (unreadable)"; }

std::string format_c_string(const char* p, std::size_t bound) {
  c_string_read read = read_c_string(p, bound);
  switch (read.result) {
    case c_string_read::status::read: return format_quoted(read.text);
    case c_string_read::status::unreadable: break;
    case c_string_read::status::too_large:
      return format_address(reinterpret_cast<std::uintptr_t>(p)) + " (no NUL in its first " + std::to_string(bound) +
             " bytes)";
  }
  return format_unreadable(reinterpret_cast<std::uintptr_t>(p));
}

std::string format_streamed(void (*write)(std::ostream&, const void*), const void* value) {
  std::ostringstream out;
  write(out, value);
  return std::move(out).str();
}

}  // namespace detail
HOOKSCOPE_DETAIL_END_NAMESPACE
