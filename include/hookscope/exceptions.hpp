// hookscope/exceptions.hpp — every exception hookscope throws, declared in one place: value_error and format_error (a
// value used as a kind it is not, text that is not a valid value encoding), record_error (a line that is not a valid
// record), inference_error and merge_error (recorded calls that allow no inference, engine states that do not merge),
// load_error (a source or an option the front door refuses). Each layer throws its own; the header depends on the
// standard library alone, so that any layer includes it. (What happens when a callback throws is callback_errors.hpp.)
#pragma once

#include "hookscope/config.hpp"

#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>

HOOKSCOPE_DETAIL_BEGIN_NAMESPACE

//=== the value tree (capture) ===//

/// Thrown when a value is used as a kind it is not; the message names both kinds.
class value_error : public std::logic_error {
 public:
  using std::logic_error::logic_error;
};

/// Thrown when text is not a valid value encoding; the message names the JSON path and what was wrong.
class format_error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

//=== records ===//

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

//=== the shape engine ===//

/// Thrown when the recorded calls do not allow an inference (nothing recorded, ranks that differ, ...); the
/// message is a sentence naming the argument path and the shapes seen.
class inference_error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// Thrown by shape_engine::merge for states that were not recorded alike; `reason()` says which way.
class merge_error : public inference_error {
 public:
  enum class reason : std::uint8_t { not_every_call, signatures_differ, values_if_missing_differ };
  merge_error(reason why, const std::string& message) : inference_error(message), reason_(why) {}
  reason why() const noexcept { return reason_; }

 private:
  reason reason_;
};

//=== the front door (load_engine) ===//

/// What a source or a load option got wrong; each front end decides from it how to answer (the command's exit
/// status and `--help` hint, Python's exception), never from the message.
enum class load_error_kind : std::uint8_t {
  bad_option,          ///< an option that does not apply to these sources (e.g. --store-n-calls N with summaries)
  unreadable,          ///< a source that does not open or read, or is a directory
  mixed_sources,       ///< record files and summaries given together
  bad_summary,         ///< a file that starts as a summary and is not a valid one
  several_functions,   ///< the records hold several functions and none was chosen
  no_such_function,    ///< the function asked for is not in the records, or a summary is of another one
  summaries_disagree,  ///< summaries that do not merge: other functions, value_if_missing, a state not of every call
  signatures_differ,   ///< summaries of one function recorded with different signatures (--signature-from helps)
};

/// Thrown by load_engine; what() is one sentence naming the source (and the option) concerned.
class load_error : public std::runtime_error {
 public:
  load_error(load_error_kind kind, const std::string& message) : std::runtime_error(message), kind_(kind) {}
  load_error_kind kind() const noexcept { return kind_; }

 private:
  load_error_kind kind_;
};

HOOKSCOPE_DETAIL_END_NAMESPACE
