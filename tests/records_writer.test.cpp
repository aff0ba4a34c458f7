// What to_record_line promises: whatever it writes, record_reader reads back equal, and what the reader would refuse
// it does not write (random trees, names that are not UTF-8, nestings at the limit, the edges of the format). Part of
// the `records` test.
#include "hookscope/records.hpp"

#include "hookscope/value_errors.hpp"

#include <catch2/catch.hpp>

#include "random_values.hpp"
#include "records_support.hpp"

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <optional>
#include <random>
#include <string>
#include <vector>

using hookscope::call_record;
using hookscope::dtype;
using hookscope::parameter_kind;
using hookscope::tensor_spec;
using hookscope::value;
using namespace records_test;

namespace {
value random_record_value(std::mt19937_64& rng, int depth, bool hostile) {
  return random_values::random_value(rng, depth, {.negative_dims = hostile});
}

value nested_lists(int levels) {
  value v = value(std::int64_t{1});
  for (int i = 0; i < levels; ++i) v = value::list({v});
  return v;
}

// What to_record_line promises of a record it accepts: parse_record reads the line back equal. It may refuse
// instead (format_error), never write a line the reader refuses.
void check_line_reads_back(const call_record& r) {
  std::string line;
  try {
    line = hookscope::to_record_line(r);
  } catch (const hookscope::format_error& e) {
    SUCCEED(e.what());
    return;
  }
  INFO(line);
  call_record back;
  REQUIRE_NOTHROW(back = hookscope::parse_record(line));
  check_same(back, r);
}

value variants_around(value v, std::size_t n) {
  for (std::size_t i = 0; i < n; ++i) v = value::variant(i % 2, std::move(v));
  return v;
}
}  // namespace

TEST_CASE("to_record_line round trip: whatever the writer writes, record_reader reads back equal") {
  std::mt19937_64 rng(Catch::rngSeed());
  std::string text;
  std::vector<call_record> written;
  std::size_t refused = 0;
  for (int i = 0; i < 1500; ++i) {
    const bool hostile = i % 3 == 0;
    call_record r;
    r.function = i % 7 == 0 ? std::string() : "f" + std::to_string(i % 5);
    for (std::uint64_t k = rng() % 4; k > 0; --k) {  // unique names: empty, UTF-8, and (hostile) not UTF-8
      std::string name = k == 1 ? std::string() : std::string(k, 'k') + "\xc3\xa9";
      if (hostile && k == 3 && rng() % 4 == 0) name = "\xff";
      r.inputs.kwargs.emplace_back(std::move(name), random_record_value(rng, 5, hostile));
    }
    if (rng() % 2) r.result = random_record_value(rng, 5, hostile);
    if (i % 50 == 0) r.result = nested_lists(i % 100 == 0 ? 200 : 60);  // past the reader's depth, and within it
    r.threw = rng() % 5 == 0;
    r.latency_ns = static_cast<std::int64_t>(rng() >> 1);
    std::string line;
    try {
      line = hookscope::to_record_line(r);
    } catch (const hookscope::value_error&) {  // a negative dimension, no function name: refused, never written
      ++refused;
      continue;
    } catch (const hookscope::format_error&) {  // deeper than the reader accepts, a name that is not UTF-8
      ++refused;
      continue;
    }
    INFO(line);
    call_record back;
    REQUIRE_NOTHROW(back = hookscope::parse_record(line));
    CHECK(hookscope::to_record_line(back) == line);  // NaN compares by its encoding
    text += line + "\n";
    written.push_back(std::move(r));
  }
  CHECK(refused > 0);
  // The whole stream through record_reader: no line refused, each read back as written.
  std::istringstream in(text);
  hookscope::record_reader reader(in, "random.jsonl");
  call_record r;
  std::size_t n = 0;
  while (reader.next(r)) {
    REQUIRE(n < written.size());
    CHECK(r.function == written[n].function);
    CHECK(r.inputs.kwargs.size() == written[n].inputs.kwargs.size());
    r.parameters.reset();
    CHECK(hookscope::to_record_line(r) == hookscope::to_record_line(written[n]));
    ++n;
  }
  CHECK(n == written.size());
}

TEST_CASE("to_record_line: names that are not UTF-8 are refused or read back") {
  SECTION("the function's name") {
    call_record r;
    r.function = "step\xff";
    check_line_reads_back(r);
  }
  SECTION("a parameter's name") {
    call_record r;
    r.function = "f";
    r.parameters = hookscope::parameter_list{{"p\xc0\x80", parameter_kind::positional_or_keyword, std::nullopt}};
    check_line_reads_back(r);
  }
  SECTION("a keyword argument's name (written as {\"base64\": ...}) reads back") {
    call_record r;
    r.function = "f";
    r.inputs.kwargs = {{"k\xff", value(1)}};
    check_line_reads_back(r);
  }
}

TEST_CASE("to_record_line: a signature's default nesting deeper than a value may is refused or read back") {
  // Args, kwargs and the result are checked against the 125 levels a value may use; a default sits as deep as a
  // keyword argument's value (record, signature array, parameter object).
  call_record r;
  r.function = "f";
  SECTION("125 levels read back") {
    r.parameters = hookscope::parameter_list{{"p", parameter_kind::positional_or_keyword, variants_around(1, 124)}};
    check_line_reads_back(r);
  }
  SECTION("126 levels") {
    r.parameters = hookscope::parameter_list{{"p", parameter_kind::positional_or_keyword, variants_around(1, 125)}};
    check_line_reads_back(r);
  }
}

TEST_CASE("parse_record: the new kinds in every position read back both ways") {
  const std::byte raw[] = {std::byte{0}, std::byte{0xff}};
  const value kinds = value::tuple({value::bytes(raw), value::opaque("std::mutex"), value::opaque("\xff", true),
                                    value::variant(7, value(-0.0)), value(std::string("a\xff")), value(5e-324),
                                    value(HUGE_VAL), value::dict({{"\xfe", value(1.7976931348623157e308)}})});
  call_record r;
  r.function = "f";
  r.parameters = hookscope::parameter_list{{"a", parameter_kind::positional_or_keyword, kinds},
                                           {"b", parameter_kind::positional_or_keyword, value::bytes({})}};
  r.inputs.args = {kinds};
  r.inputs.kwargs = {{"b", kinds}};
  r.result = kinds;
  const std::string line = hookscope::to_record_line(r);
  check_same(hookscope::parse_record(line), r);
  CHECK(hookscope::to_record_line(hookscope::parse_record(line)) == line);
}

TEST_CASE("parse_record: a key repeated under a \\u escape leaves the other floats of the line as written") {
  const std::string line =
      R"({"function":"f","args":[{"tuple":[{"float":1.5,"\u0066loat":2.5},{"float":0.1}]}],"kwargs":[]})";
  call_record r;
  try {
    r = hookscope::parse_record(line);
  } catch (const hookscope::format_error& e) {
    SUCCEED(e.what());
    return;
  }
  REQUIRE(r.inputs.args.size() == 1);
  CHECK(r.inputs.args[0].items()[1] == value(0.1));
}

// to_record_line never writes what the record reader refuses, and HOOKSCOPE_RECORD's every line written reads back:
// each value below is written and read back as it is, or refused by the writer with a value_error.
namespace {

// The line written for one keyword argument `x`, or nullopt when the writer refuses it (a refusal keeps the promise).
std::optional<std::string> written_for(const value& v) {
  call_record r;
  r.function = "f";
  r.inputs.kwargs.push_back({"x", v});
  try {
    return hookscope::to_record_line(r);
  } catch (const std::exception&) {
    return std::nullopt;
  }
}

bool reads_back(const value& v) {
  const auto line = written_for(v);
  if (!line) return true;  // refused by the writer: nothing written
  try {
    return hookscope::parse_record(*line).inputs.kwargs.at(0).second == v;
  } catch (const std::exception& e) {
    UNSCOPED_INFO(*line << " is refused: " << e.what());
    return false;
  }
}

}  // namespace

// A value tree may hold a dict whose keys repeat (value::dict takes any pairs, a flatten_traits may name two children
// alike), though capture makes none (a std::multimap is a list of (key, value) tuples): the writer refuses it.
TEST_CASE("to_record_line: a dict whose keys repeat is refused") {
  CHECK(reads_back(value::dict({{"yes", value(1)}, {"yes", value(2)}})));
  CHECK(reads_back(value::structure("s", {{"a", value(1)}, {"a", value(2)}})));
  call_record r;
  r.function = "f";
  r.inputs.kwargs.push_back({"x", value::list({value::dict({{"yes", value(1)}, {"yes", value(2)}})})});
  CHECK_THROWS_WITH(hookscope::to_record_line(r), "hookscope: x[0]: the key \"yes\" given twice");

  SECTION("few keys, compared pairwise, and many, through a set: the first and the last repeated, or none") {
    for (const std::size_t n : {2u, 16u, 17u, 64u}) {
      hookscope::value_fields distinct;
      for (std::size_t i = 0; i < n; ++i) distinct.push_back({"k" + std::to_string(i), value(static_cast<int>(i))});
      INFO(n << " keys");
      CHECK(written_for(value::dict(distinct)));
      CHECK(reads_back(value::dict(distinct)));
      hookscope::value_fields repeated = distinct;
      repeated.back().first = repeated.front().first;
      CHECK_FALSE(written_for(value::dict(repeated)));
      CHECK_FALSE(written_for(value::structure("s", repeated)));
    }
  }
}

TEST_CASE("to_record_line: opaque leaves the reader refuses are not written") {
  hookscope::opaque_leaf unreadable_without_address;
  unreadable_without_address.type_name = "p";
  unreadable_without_address.unreadable = true;
  CHECK(reads_back(value::opaque(unreadable_without_address)));
  hookscope::opaque_leaf length_without_too_large;
  length_without_too_large.type_name = "p";
  length_without_too_large.length = 5;
  CHECK(reads_back(value::opaque(length_without_too_large)));
  hookscope::opaque_leaf length_past_int64;
  length_past_int64.type_name = "p";
  length_past_int64.length = std::uint64_t{1} << 63;
  length_past_int64.too_large = true;
  CHECK(reads_back(value::opaque(length_past_int64)));
  for (const auto& refused : {unreadable_without_address, length_without_too_large, length_past_int64}) {
    CHECK_FALSE(written_for(value::opaque(refused)));
  }
}

TEST_CASE("to_record_line: tensors whose contents the reader refuses are not written") {
  tensor_spec short_data{{2}, dtype::float32};
  short_data.data.resize(3);  // 8 bytes expected
  CHECK(reads_back(value(short_data)));
  tensor_spec both{{2}, dtype::float32};
  both.data.resize(8);
  both.data_too_large = true;
  CHECK(reads_back(value(both)));
  CHECK_FALSE(written_for(value(short_data)));
  CHECK_FALSE(written_for(value(both)));

  SECTION("the writer's reasons, the reader's size rule (a dimension 0 holds no element, whatever the others)") {
    tensor_spec no_element{{std::int64_t{1} << 62, 0}, dtype::float32};
    no_element.data.resize(4);
    tensor_spec too_many{{std::int64_t{1} << 62, 8}, dtype::float32};
    too_many.data.resize(4);
    auto refusal = [](const tensor_spec& t) {
      call_record r;
      r.function = "f";
      r.inputs.kwargs.push_back({"x", value(t)});
      try {
        (void)hookscope::to_record_line(r);
      } catch (const std::exception& e) {
        return std::string(hookscope::sentence_of(e));
      }
      return std::string("written");
    };
    CHECK(refusal(short_data) == "x.data: 3 bytes of contents for a tensor that holds 8");
    CHECK(refusal(no_element) == "x.data: 4 bytes of contents for a tensor of no element");
    CHECK(refusal(too_many) == "x: too many elements");
    CHECK(reads_back(value(no_element)));
    CHECK(reads_back(value(too_many)));
    no_element.data.clear();  // no contents: a tensor of no element is written, and reads back
    CHECK(written_for(value(no_element)));
    CHECK(reads_back(value(no_element)));
  }
}

TEST_CASE("to_record_line: values at the edges of the format read back") {
  hookscope::opaque_leaf all_markers{
      .type_name = "p", .depth_limited = true, .address = 0, .unreadable = true, .length = 0, .too_large = true};
  CHECK(reads_back(value::opaque(all_markers)));
  hookscope::opaque_leaf not_utf8;
  not_utf8.type_name = "\xff\xfe";
  not_utf8.address = ~std::uint64_t{0};
  CHECK(reads_back(value::opaque(not_utf8)));
  CHECK(reads_back(value::structure("\xc0\xaf", {{"\xff", value(1)}})));
  CHECK(reads_back(value::variant(~std::size_t{0}, value(1))));
  CHECK(reads_back(value(tensor_spec{{std::int64_t{1} << 32, std::int64_t{1} << 32, 0}, dtype::float32})));
  CHECK(reads_back(value(std::numeric_limits<std::int64_t>::min())));
  CHECK(reads_back(value(-std::numeric_limits<double>::infinity())));
}
