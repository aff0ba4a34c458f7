// libFuzzer target for the record reader: any bytes, read as a record stream, either give records or a
// record_error / format_error. Anything else (another exception, a crash, a sanitizer report) is a bug.
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

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  std::istringstream in(std::string(reinterpret_cast<const char*>(data), size));
  hookscope::record_reader reader(in, "fuzz.jsonl");
  hookscope::call_record record;
  try {
    while (reader.next(record)) check_round_trip(record);
  } catch (const hookscope::format_error&) {  // record_error too: bad input, reported as it should be
  } catch (const std::exception& e) {
    std::fprintf(stderr, "unexpected exception: %s\n", e.what());
    std::abort();
  }
  return 0;
}
