// Async-signal-safe text output (see fd_writer.hpp).
#include "fd_writer.hpp"
#include "../cancellation.hpp"

#include "json_text.hpp"
#include "pipe_lines.hpp"

#include <unistd.h>

#include <cerrno>

HOOKSCOPE_DETAIL_BEGIN_NAMESPACE
namespace detail {

fd_writer::fd_writer(int fd) noexcept : fd_(fd), may_raise_sigpipe_(may_raise_sigpipe(fd)) {}

void fd_writer::put(char c) noexcept {
  if (size_ == sizeof buffer_) flush();
  buffer_[size_++] = c;
  ++written_since_mark_;
}

void fd_writer::flush() noexcept {
  const cancellation_deferred no_cancellation;  // system calls: see cancellation.hpp
  if (hub_sink_ != nullptr) {
    if (size_ > 0) hub_sink_->text(hub_sink_->context, buffer_, size_);
    size_ = 0;
    return;
  }
  if (sink_ != nullptr) {
    if (size_ > 0) sink_(std::string_view(buffer_, size_));
    size_ = 0;
    return;
  }
  const char* data = buffer_;
  std::size_t left = size_;
  const sigpipe_blocked no_sigpipe(may_raise_sigpipe_ && left > 0);  // a reader gone: EPIPE reported, no SIGPIPE
  while (left > 0 && error_ == 0) {
    const ssize_t n = ::write(fd_, data, left);
    if (n < 0) {
      if (errno != EINTR) error_ = errno;
      continue;
    }
    data += n;
    left -= static_cast<std::size_t>(n);
  }
  size_ = 0;
}

fd_writer& fd_writer::text(std::string_view s) noexcept {
  for (char c : s) put(c);
  return *this;
}

fd_writer& fd_writer::number(std::uint64_t n) noexcept {
  char digits[20];
  std::size_t count = 0;
  do {
    digits[count++] = static_cast<char>('0' + n % 10);
    n /= 10;
  } while (n != 0);
  while (count > 0) put(digits[--count]);
  return *this;
}

fd_writer& fd_writer::signed_number(std::int64_t n) noexcept {
  if (n < 0) {
    put('-');
    return number(static_cast<std::uint64_t>(-(n + 1)) + 1);
  }
  return number(static_cast<std::uint64_t>(n));
}

fd_writer& fd_writer::microseconds(std::int64_t ns) noexcept {
  if (ns < 0) {
    put('-');
    ns = -ns;
  }
  number(static_cast<std::uint64_t>(ns / 1000)).put('.');
  const auto fraction = static_cast<unsigned>(ns % 1000);
  put(static_cast<char>('0' + fraction / 100));
  put(static_cast<char>('0' + fraction / 10 % 10));
  put(static_cast<char>('0' + fraction % 10));
  return *this;
}

fd_writer& fd_writer::duration(std::uint64_t ns) noexcept {
  static constexpr std::string_view units[] = {" ns", " \u00b5s", " ms", " s"};
  if (ns < 1000) return number(ns).text(units[0]);
  // Scale to the unit where the value is in [1, 1000), keeping three significant digits.
  std::size_t unit = 0;
  std::uint64_t scale = 1;
  while (unit + 1 < std::size(units) && ns >= scale * 1000) {
    scale *= 1000;
    ++unit;
  }
  const std::uint64_t whole = ns / scale;
  const std::uint64_t decimals = whole >= 100 ? 0 : whole >= 10 ? 1 : 2;
  std::uint64_t factor = 1;
  for (std::uint64_t i = 0; i < decimals; ++i) factor *= 10;
  const std::uint64_t rounded = (ns * factor + scale / 2) / scale;  // value x 10^decimals
  number(rounded / factor);
  if (decimals > 0) {
    put('.');
    std::uint64_t rest = rounded % factor;
    for (std::uint64_t f = factor / 10; f > 0; f /= 10) {
      put(static_cast<char>('0' + rest / f));
      rest %= f;
    }
  }
  return text(units[unit]);
}

fd_writer& fd_writer::json_string(std::string_view s) noexcept {
  put('"');
  json_string_body(s, [this](char c) { put(c); });
  put('"');
  return *this;
}

fd_writer& fd_writer::end_line() noexcept {
  if (sink_ != nullptr) {
    flush();
  } else {
    put('\n');
  }
  return mark();
}

fd_writer& fd_writer::item() noexcept {
  if (hub_sink_ != nullptr) {
    flush();
    hub_sink_->item(hub_sink_->context);
  }
  return mark();
}

fd_writer& fd_writer::mark() noexcept {
  written_since_mark_ = 0;
  return *this;
}

fd_writer& fd_writer::pad_to(std::size_t width) noexcept {
  while (written_since_mark_ < width) put(' ');
  return *this;
}

}  // namespace detail
HOOKSCOPE_DETAIL_END_NAMESPACE
