// The notes of a record file (docs/record_format.md, "Notes"): how record_reader skips them, sums the records they
// say were dropped, and refuses a malformed one. Part of the `records` test.
#include "hookscope/records.hpp"

#include <catch2/catch.hpp>

#include "records_support.hpp"

#include <sstream>
#include <string>
#include <string_view>
#include <vector>

using hookscope::call_record;
using namespace records_test;

namespace {

// A note line (docs/record_format.md, "Notes").
std::string note(const std::string& function, const std::string& count, const std::string& reason = "buffer_full") {
  return R"({"function":")" + function + R"(","dropped":{"count":)" + count + R"(,"reason":")" + reason + R"("}})";
}

// The error reading `line` after a valid record gives, without its "in.jsonl:2: ".
std::string note_error(const std::string& line) {
  const std::string error = read_error(record_with("") + "\n" + line + "\n");
  constexpr std::string_view where = "in.jsonl:2: ";
  return error.starts_with(where) ? error.substr(where.size()) : "(not at line 2) " + error;
}

}  // namespace

TEST_CASE("record_reader::dropped_records") {
  SECTION("notes are skipped with a warning each, their counts summed per function") {
    std::istringstream in(record_with("") + "\n" + note("Model::forward", "1234") + "\n" + note("f", "1", "other") +
                          "\n\n" + note("Model::forward", "6") + "\n" + record_with("") + "\n");
    hookscope::record_reader reader(in, "f.jsonl");
    CHECK(reader.dropped_records().empty());
    call_record r;
    REQUIRE(reader.next(r));
    CHECK(reader.line() == 1);
    REQUIRE(reader.next(r));
    CHECK(reader.line() == 6);
    CHECK_FALSE(reader.next(r));
    CHECK(reader.warnings() ==
          std::vector<std::string>{"f.jsonl:2: the writer dropped 1234 records of 'Model::forward' (buffer_full)",
                                   "f.jsonl:3: the writer dropped 1 record of 'f' (other)",
                                   "f.jsonl:5: the writer dropped 6 records of 'Model::forward' (buffer_full)"});
    CHECK(reader.dropped_records() == hookscope::dropped_record_counts{{"Model::forward", 1240}, {"f", 1}});
  }

  SECTION("the records around notes read unchanged") {
    const std::string later = R"({"function":"Model::forward","args":[{"int":2}],"kwargs":[],"latency_ns":5})";
    const std::string text = note("Model::forward", "3") + "\n" + full_line + "\n" +
                             note("Model::forward", "3", "too_large_at_signal") + "\n" + later + "\n" +
                             note("g", "18446744073709551615") + "\n" + full_line;
    const auto records = read_all(text);
    REQUIRE(records.size() == 3);
    check_same(records[0], hookscope::parse_record(full_line));
    check_same(records[1], hookscope::parse_record(later));
    check_same(records[2], hookscope::parse_record(full_line));
  }

  SECTION("a note takes no place among a function's records: its signature still binds") {
    const std::string signed_record = R"({"function":"f","signature":[{"name":"x"}],"args":[],"kwargs":[]})";
    CHECK(read_all(note("f", "1") + "\n" + signed_record + "\n").size() == 1);
    CHECK(read_error(record_with("") + "\n" + note("f", "1") + "\n" + signed_record + "\n") ==
          R"(in.jsonl:3: $.signature: "f" had no signature on its first record (in.jsonl:1); a signature comes with )"
          R"(a function's first record)");
  }

  SECTION("a note as the last line, whole or cut") {
    std::istringstream whole(record_with("") + "\n" + note("f", "2"));
    hookscope::record_reader reader(whole, "in.jsonl");
    call_record r;
    REQUIRE(reader.next(r));
    CHECK_FALSE(reader.next(r));
    CHECK(reader.dropped_records() == hookscope::dropped_record_counts{{"f", 2}});
    const std::string cut = note("f", "2").substr(0, 30);
    std::istringstream cut_in(record_with("") + "\n" + cut);
    hookscope::record_reader cut_reader(cut_in, "in.jsonl");
    REQUIRE(cut_reader.next(r));
    CHECK_FALSE(cut_reader.next(r));
    CHECK(cut_reader.dropped_records().empty());
    REQUIRE(cut_reader.warnings().size() == 1);
    CHECK(cut_reader.warnings()[0].starts_with("in.jsonl:2: the last line is cut"));
  }

  SECTION("open() goes on summing") {
    std::istringstream a(note("f", "2") + "\n");
    std::istringstream b(note("f", "3") + "\n");
    hookscope::record_reader reader(a, "a.jsonl");
    call_record r;
    CHECK_FALSE(reader.next(r));
    reader.open(b, "b.jsonl");
    CHECK_FALSE(reader.next(r));
    CHECK(reader.dropped_records() == hookscope::dropped_record_counts{{"f", 5}});
    CHECK(reader.warnings().back() == "b.jsonl:1: the writer dropped 3 records of 'f' (buffer_full)");
  }

  SECTION("names are shown on one line in the warning, counted as written") {
    std::istringstream in(R"({"function":"a\nb","dropped":{"count":1,"reason":"r\u0000"}})"
                          "\n");
    hookscope::record_reader reader(in, "in.jsonl");
    call_record r;
    CHECK_FALSE(reader.next(r));
    CHECK(reader.warnings() ==
          std::vector<std::string>{R"(in.jsonl:1: the writer dropped 1 record of 'a\x0ab' (r\x00))"});
    CHECK(reader.dropped_records() == hookscope::dropped_record_counts{{"a\nb", 1}});
  }

  SECTION("a malformed note names its JSON path") {
    const std::string exactly = R"(a note holds exactly "function" and "dropped" (a line with "dropped" is a note, )"
                                R"(not a record))";
    CHECK(note_error(R"({"function":"f","dropped":{"reason":"buffer_full"}})") == R"($.dropped: missing "count")");
    CHECK(note_error(R"({"function":"f","dropped":{"count":1}})") == R"($.dropped: missing "reason")");
    CHECK(note_error(note("f", "0")) == "$.dropped.count: expected a count >= 1, found 0");
    CHECK(note_error(note("f", "-3")) == "$.dropped.count: expected a count >= 1, found -3");
    CHECK(note_error(note("f", "1.5")) == "$.dropped.count: expected an integer, found 1.5");
    CHECK(note_error(note("f", "\"12\"")) == "$.dropped.count: expected an integer, found a string");
    CHECK(note_error(note("f", "null")) == "$.dropped.count: expected an integer, found null");
    CHECK(note_error(note("f", "18446744073709551616")) ==
          "$.dropped.count: a count larger than 18446744073709551615 (found 18446744073709551616)");
    CHECK(note_error(note("f", "1e300")) == "$.dropped.count: a count larger than 18446744073709551615 (found 1e+300)");
    CHECK(note_error(note("f", "3", "")) == "$.dropped.reason: empty reason");
    CHECK(note_error(R"({"function":"f","dropped":{"count":1,"reason":7}})") ==
          "$.dropped.reason: expected a string, found a number");
    CHECK(note_error(R"({"function":"f","dropped":{"count":1,"reason":"r","since":0}})") ==
          R"($.dropped.since: "dropped" holds exactly "count" and "reason")");
    CHECK(note_error(R"({"function":"f","args":[],"kwargs":[],"dropped":{"count":1,"reason":"r"}})") ==
          "$.args: " + exactly);
    CHECK(note_error(R"({"function":"f","dropped":{"count":1,"reason":"r"},"latency_ns":3})") ==
          "$.latency_ns: " + exactly);
    CHECK(note_error(R"({"function":"f","dropped":[1,"buffer_full"]})") ==
          R"($.dropped: expected an object {"count", "reason"}, found an array)");
    CHECK(note_error(R"({"function":"f","dropped":null})") ==
          R"($.dropped: expected an object {"count", "reason"}, found null)");
    CHECK(note_error(R"({"dropped":{"count":1,"reason":"r"}})") == R"($: missing "function")");
    CHECK(note_error(R"({"function":"","dropped":{"count":1,"reason":"r"}})") == "$.function: empty function name");
    CHECK(note_error(R"({"function":{"base64":"/w=="},"dropped":{"count":1,"reason":"r"}})") ==
          "$.function: expected a string, found an object");
    CHECK(note_error(R"({"function":"f","dropped":{"count":1,"count":2,"reason":"r"}})") ==
          R"(duplicate key "count" in the object that ends at column 60)");
  }

  SECTION("counts that add up past 2^64 - 1") {
    CHECK(read_all(note("f", "18446744073709551614") + "\n" + note("f", "1") + "\n").empty());
    CHECK(read_error(note("f", "18446744073709551614") + "\n" + note("g", "5") + "\n" + note("f", "2") + "\n") ==
          R"(in.jsonl:3: $.dropped.count: the records of "f" dropped add up to more than 18446744073709551615)");
  }
}
