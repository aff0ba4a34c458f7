// Text written to a file descriptor without allocating or locking, so that the same code prints at exit and from
// a fatal signal handler (where only async-signal-safe calls are allowed): a fixed buffer, write(2) when it fills.
#pragma once

#include "hookscope/config.hpp"

#include "hub.hpp"

#include <cstddef>
#include <cstdint>
#include <string_view>

HOOKSCOPE_DETAIL_BEGIN_NAMESPACE
namespace detail {

class fd_writer {
 public:
  explicit fd_writer(int fd) noexcept;
  /// Hands each line (without its newline) to `sink` instead of writing it: for the log sink, at exit only.
  explicit fd_writer(void (*sink)(std::string_view) noexcept) noexcept : fd_(-1), sink_(sink) {}
  /// Hands its bytes to another copy's sink (hub.hpp), which owns the file; `item()` starts each item.
  explicit fd_writer(const hookscope_hub_sink& sink) noexcept : fd_(-1), hub_sink_(&sink) {}
  fd_writer(const fd_writer&) = delete;
  fd_writer& operator=(const fd_writer&) = delete;
  ~fd_writer() { flush(); }

  fd_writer& text(std::string_view s) noexcept;
  fd_writer& number(std::uint64_t n) noexcept;
  fd_writer& signed_number(std::int64_t n) noexcept;
  /// Microseconds with three decimals (the trace-event format's `ts` and `dur`), from nanoseconds.
  fd_writer& microseconds(std::int64_t ns) noexcept;
  /// A duration for people: three significant digits and a unit (ns, µs, ms, s).
  fd_writer& duration(std::uint64_t ns) noexcept;
  /// `s` as a JSON string, quotes included; bytes that are not UTF-8 as the text `\\xNN` (json_text.hpp).
  fd_writer& json_string(std::string_view s) noexcept;
  /// Pads with spaces to `width` characters since the last `mark()` (for tables).
  fd_writer& pad_to(std::size_t width) noexcept;
  fd_writer& mark() noexcept;
  /// Ends a line: a newline, or the line handed to the sink.
  fd_writer& end_line() noexcept;
  /// Starts an item of a hub sink (what goes between items is the owner's), and marks.
  fd_writer& item() noexcept;

  void flush() noexcept;
  /// Whether every write so far succeeded; else the errno of the first failure.
  int error() const noexcept { return error_; }

 private:
  void put(char c) noexcept;

  int fd_;
  bool may_raise_sigpipe_ = false;  // fd_ is a pipe or a socket: SIGPIPE blocked around its writes
  void (*sink_)(std::string_view) noexcept = nullptr;
  const hookscope_hub_sink* hub_sink_ = nullptr;
  int error_ = 0;
  std::size_t size_ = 0;
  std::size_t written_since_mark_ = 0;
  char buffer_[4096];
};

}  // namespace detail
HOOKSCOPE_DETAIL_END_NAMESPACE
