// The compiled part of detail/format.hpp: numbers through std::to_chars and streamed values through an
// ostringstream, so that neither <charconv> nor <sstream> is parsed by every translation unit calling an observable.
#include "hookscope/detail/format.hpp"

#include <bit>
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

std::string_view text_of(text_kind kind, std::uint64_t bits, char (&buffer)[text_buffer_size]) noexcept {
  char* const end = buffer + text_buffer_size;
  switch (kind) {
    case text_kind::signed_integer: return {buffer, std::to_chars(buffer, end, static_cast<long long>(bits)).ptr};
    case text_kind::unsigned_integer:
      return {buffer, std::to_chars(buffer, end, static_cast<unsigned long long>(bits)).ptr};
    case text_kind::float32:
      return {buffer, std::to_chars(buffer, end, std::bit_cast<float>(static_cast<std::uint32_t>(bits))).ptr};
    case text_kind::float64: return {buffer, std::to_chars(buffer, end, std::bit_cast<double>(bits)).ptr};
    case text_kind::boolean: return bits != 0 ? "true" : "false";
    case text_kind::address: {
      if (bits == 0) return "nullptr";
      buffer[0] = '0';
      buffer[1] = 'x';
      return {buffer, std::to_chars(buffer + 2, end, static_cast<std::uintptr_t>(bits), 16).ptr};
    }
    case text_kind::type_name: return *reinterpret_cast<const std::string_view*>(static_cast<std::uintptr_t>(bits));
    case text_kind::formatted: break;
  }
  return {};
}

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
