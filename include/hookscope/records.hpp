// hookscope/records.hpp — the record format (JSON Lines, one call per line) read back: what `call_recorder`
// and `HOOKSCOPE_RECORD` write and what any other process may produce, so files from anywhere merge.
//
// ```cpp
// std::ifstream in("forward.jsonl");
// hookscope::record_reader reader(in, "forward.jsonl");
// hookscope::call_record r;
// while (reader.next(r)) engine.add_call(r.inputs);      // a bad line throws "forward.jsonl:12: ..."
// ```
//
// A record is an object with "function" (string), "args" (array of values), "kwargs" (array of ["name", value]
// pairs), and optionally "signature" (array of {"name", "kind"?, "default"?}), "result" (a value), "threw" (bool)
// and "latency_ns" (integer >= 0). Keys a record or a parameter does not know are ignored, so that readers keep
// reading the records of newer writers (forward compatibility). A line whose object holds "dropped" is a note, not a
// record: {"function":"F","dropped":{"count":N,"reason":"buffer_full"}}, N records of F its writer dropped.
#pragma once

#include "hookscope/call_inputs.hpp"
#include "hookscope/config.hpp"
#include "hookscope/detail/records.hpp"
#include "hookscope/exceptions.hpp"
#include "hookscope/value.hpp"

#include <cstddef>
#include <cstdint>
#include <functional>
#include <iosfwd>
#include <limits>
#include <map>
#include <memory>
#include <optional>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

HOOKSCOPE_DETAIL_BEGIN_NAMESPACE

/// The longest record line (bytes, without its newline) that hookscope writes and that record_reader reads by default:
/// the writer elides a record's largest values to stay within it (to_record_line), the reader skips a longer line with
/// a warning. 64 MiB.
inline constexpr std::size_t max_record_line_bytes = std::size_t{64} << 20;

/// Parses one record line (no trailing newline needed); throws format_error naming the JSON path, e.g.
/// `$.kwargs[1][1].shape[0]: negative dimension -3` (value errors read as those of value_from_json). A note (a line
/// holding "dropped") is no record: format_error, after the note's own checks.
call_record parse_record(std::string_view line);

/// Parses one call given alone, as a record without "function" ({"args":[...],"kwargs":[...],"result":V?}): how
/// front ends in other languages hand the engine a call. Same errors as parse_record.
call_record parse_call(std::string_view text);

/// Parses a signature given alone, as a record's "signature" ([{"name":..., "kind":..., "default":V}, ...]).
parameter_list parse_signature(std::string_view text);

/// The records not written, per function's name: what the notes of a record stream count (record_reader).
using dropped_record_counts = std::map<std::string, std::uint64_t, std::less<>>;

/// A record as record_reader::next(record_view&) gives it, without copying it: valid until the reader's next call.
/// Records alike in every byte but their tensors' sizes and their latency share a structure, whose record the
/// reader keeps and writes each one's sizes into: a consumer that knows the structure reads only `sizes`.
struct record_view {
  const call_record* record = nullptr;
  /// The reader's number for the record's structure (at most 64 are held at once; a number is reused when its
  /// structure is replaced, and `new_structure` says so), or none for a record read on its own.
  std::optional<std::size_t> structure;
  bool new_structure = false;
  /// Every tensor's sizes, in leaf order: the args', the kwargs', then the result's (a structure's records only).
  std::span<const std::int64_t> sizes;
};

namespace detail {
class record_parser;  // Boost.JSON's parser and memory, reused from line to line (records.cpp)
struct dropped_note;  // one note line, read (records.cpp)
}  // namespace detail

/// Reads records from a stream, one per line, in constant memory; blank lines (and a CR before the newline)
/// are skipped.
///
/// Checks what a single line cannot: the signature of a function never changes within a stream, and comes with
/// its first record if at all. A last line without its newline that is not valid JSON is left out, and so is a line
/// longer than the limit (see warnings()). A note of records its writer dropped is checked and skipped, with a
/// warning, its count added to dropped_records().
class record_reader {
 public:
  /// `source` names the stream in errors (usually the file name).
  record_reader(std::istream& in, std::string source);
  ~record_reader();
  record_reader(record_reader&&) noexcept;
  record_reader& operator=(record_reader&&) noexcept;

  /// Goes on with another stream as if it were concatenated to the previous ones (files merge so): the
  /// signatures seen so far still bind; line numbers restart at 1 under the new `source`.
  void open(std::istream& in, std::string source);

  /// Reads the next record into `out` (reusing its memory), past the notes; false at the end of the stream. The stream
  /// is read ahead by what it holds (a file: by blocks; a pipe: what has come, never waiting past a line), so what
  /// follows the last record read may be consumed from it. Throws
  /// record_error on a bad line (a note of another form than docs/record_format.md's "Notes" too), std::system_error
  /// when the stream fails to read.
  bool next(call_record& out);
  /// Reads the next record without copying it (record_view); the fastest way through a long recording.
  bool next(record_view& out);

  /// What was accepted with a doubt or left out, as sentences naming the source and line: a last line cut short (no
  /// newline, not JSON), which a writer stopped mid-line leaves; a line longer than the limit, skipped (its length
  /// named), the lines after it read; a note, skipped (`f.jsonl:12: the writer dropped 1234 records of
  /// 'Model::forward' (buffer_full)`).
  const std::vector<std::string>& warnings() const noexcept { return warnings_; }

  /// The records the writers dropped, per function: the sum of the counts of the notes read so far, over every stream
  /// given (a function absent when no note names it). A sum past 2^64 - 1 is a record_error at the note that makes it.
  const dropped_record_counts& dropped_records() const noexcept { return dropped_; }

  /// The longest line read (bytes, without its newline, a CR before it or a byte-order mark): max_record_line_bytes,
  /// the writers' limit, so that whatever hookscope writes reads back. A longer line is skipped with a warning, read in
  /// chunks so that memory stays bounded; one that cannot be JSON text (a NUL byte, a byte UTF-8 never uses, a first
  /// byte other than '{': `/dev/zero`, a binary file) is an error (record_error) met as soon as the byte is read.
  static constexpr std::size_t default_max_line_bytes = max_record_line_bytes;
  /// Another limit: higher to read longer lines of other producers, lower in tests. Writers keep to
  /// max_record_line_bytes whatever a reader's limit is.
  void set_max_line_bytes(std::size_t n) noexcept { max_line_bytes_ = n; }

  /// The line number of the record last returned (1-based).
  std::size_t line() const noexcept { return line_; }
  const std::string& source() const noexcept { return source_; }

 private:
  struct seen_function {
    std::optional<parameter_list> parameters;  // as given by the function's first record
    std::string where;                         // "source:line" of that record
  };
  enum class line_status { line, end, too_long };
  [[noreturn]] void fail(const std::string& message) const;
  void check_signature(const call_record& record);
  std::string_view next_line(line_status& status, bool& unterminated, std::size_t cap);
  void read_more();
  void skip_long_line(std::string_view start, bool whole);
  void release_buffer();
  void add_note(const detail::dropped_note& note);

  std::istream* in_;
  std::string source_;
  std::size_t line_ = 0;
  std::string buffer_;     // a block of the stream read ahead: the current line and what follows it
  std::size_t begin_ = 0;  // the bytes of buffer_ not yet read as lines: [begin_, end_)
  std::size_t end_ = 0;
  bool ended_ = false;   // the stream gave its last byte
  bool failed_ = false;  // and then failed (bad): the line it cut is not given
  std::size_t max_line_bytes_ = default_max_line_bytes;
  std::unique_ptr<detail::record_parser> parser_;
  std::vector<std::string> warnings_;
  std::map<std::string, seen_function, std::less<>> functions_;  // by name: one entry per function seen
  dropped_record_counts dropped_;
};

/// One call as a line of the record format, without the newline (`"signature"` only when `parameters` is set).
/// Never writes what the record reader refuses: throws value_error for an empty function name or a negative
/// dimension (naming its path), format_error for a value nested deeper than the reader accepts.
///
/// A line is at most `max_line_bytes`: a record that would be longer is written with its largest values elided, each
/// as `{"opaque":"list","length":N,"too_large":true}` (its kind and its element or byte count; a tensor keeps its
/// shape and dtype and loses its `data`, marked `"data_too_large":true`), descending into a container whose part is
/// large so that its other parts stay (docs/record_format.md, "Lines"); what reads back is that elided record. When
/// the names and the signature alone do not fit, throws format_error.
std::string to_record_line(const call_record& record, std::size_t max_line_bytes = max_record_line_bytes);

HOOKSCOPE_DETAIL_END_NAMESPACE
