// The compiled part of detail/format.hpp: numbers through std::to_chars and streamed values through an
// ostringstream, so that neither <charconv> nor <sstream> is parsed by every translation unit calling an observable.
#include "hookscope/detail/format.hpp"

#include <charconv>
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

std::string format_streamed(void (*write)(std::ostream&, const void*), const void* value) {
  std::ostringstream out;
  write(out, value);
  return std::move(out).str();
}

}  // namespace detail
HOOKSCOPE_DETAIL_END_NAMESPACE
