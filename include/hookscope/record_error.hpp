// hookscope/record_error.hpp — the exception of the record reader (records layer): a line that is not a valid record,
// with the source and line it came from.
#pragma once

#include "hookscope/config.hpp"
#include "hookscope/value_errors.hpp"

#include <cstddef>
#include <string>

HOOKSCOPE_DETAIL_BEGIN_NAMESPACE

/// Thrown for a record that is not valid; `what()` is "<source>:<line>: <what was wrong>" and names the JSON path.
class record_error : public format_error {
 public:
  record_error(std::string source, std::size_t line, const std::string& message);
  const std::string& source() const noexcept { return source_; }
  std::size_t line() const noexcept { return line_; }

 private:
  std::string source_;
  std::size_t line_;
};

HOOKSCOPE_DETAIL_END_NAMESPACE
