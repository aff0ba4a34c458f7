// libFuzzer target for the record reader: any bytes, read as a record stream, either give records or a
// record_error / format_error. Anything else (another exception, a crash, a sanitizer report) is a bug. The stream
// is read a second time under a small line limit (skipping long lines), and each record written under it. Each record
// read must be the one parse_record reads from its line alone: the reader's templates (a line repeating an earlier
// one's structure) never read a line otherwise than the full parse.
//
//   build-fuzz/record_reader_fuzz -max_total_time=60 CORPUS_DIR tests/data
#include "hookscope/records.hpp"

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <sstream>
#include <string>
#include <string_view>

namespace {

// Every record read back must write and re-read to the same record: checks to_record_line on fuzzed values too.
void check_round_trip(const hookscope::call_record& r) {
  const hookscope::call_record again = hookscope::parse_record(hookscope::to_record_line(r));
  // NaN floats never compare equal: compare the text, which spells them "nan".
  if (hookscope::to_record_line(again) != hookscope::to_record_line(r)) {
    std::fprintf(stderr, "round trip changed the record:\n%s\n", hookscope::to_record_line(r).c_str());
    std::abort();
  }
}

// Under a small line limit, a record is written at most that long and reads back, or refused (format_error).
void check_line_limit(const hookscope::call_record& r, std::size_t limit) {
  std::string line;
  try {
    line = hookscope::to_record_line(r, limit);
  } catch (const hookscope::format_error&) {
    return;  // its names alone do not fit
  }
  if (line.size() > limit) {
    std::fprintf(stderr, "a line of %zu bytes under a limit of %zu:\n%s\n", line.size(), limit, line.c_str());
    std::abort();
  }
  if (hookscope::to_record_line(hookscope::parse_record(line), limit) != line) {
    std::fprintf(stderr, "the elided record does not write back the same:\n%s\n", line.c_str());
    std::abort();
  }
}

// Line `n` (1-based) of `text` without its newline or a CR before it.
std::string_view line_of(std::string_view text, std::size_t n) {
  for (; n > 1; --n) text.remove_prefix(text.find('\n') + 1);
  text = text.substr(0, text.find('\n'));
  if (!text.empty() && text.back() == '\r') text.remove_suffix(1);
  return text;
}

// A record the reader gave (by a template of an earlier line, or in full) is what parse_record reads from its line.
void check_as_parsed(const hookscope::call_record& r, std::string_view line) {
  const std::string expected = hookscope::to_record_line(hookscope::parse_record(line));
  if (hookscope::to_record_line(r) != expected) {
    std::fprintf(stderr, "the reader's record differs from its line's:\n%s\n%s\n", hookscope::to_record_line(r).c_str(),
                 expected.c_str());
    std::abort();
  }
}

void read_stream(const std::uint8_t* data, std::size_t size, std::size_t limit) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  std::istringstream in(text);
  hookscope::record_reader reader(in, "fuzz.jsonl");
  if (limit != 0) reader.set_max_line_bytes(limit);
  hookscope::call_record record;
  try {
    while (reader.next(record)) {
      std::string_view line = line_of(text, reader.line());
      if (reader.line() == 1 && line.starts_with("\xEF\xBB\xBF")) line.remove_prefix(3);
      check_as_parsed(record, line);
      check_round_trip(record);
      if (limit != 0) check_line_limit(record, limit);
    }
  } catch (const hookscope::format_error&) {  // record_error too: bad input, reported as it should be
  } catch (const std::exception& e) {
    std::fprintf(stderr, "unexpected exception: %s\n", e.what());
    std::abort();
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  read_stream(data, size, 0);
  if (size > 0) read_stream(data + 1, size - 1, 16 + data[0] % 240);  // a limit from 16 to 255 bytes
  return 0;
}
