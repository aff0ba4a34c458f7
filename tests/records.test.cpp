#include "hookscope/records.hpp"

#include "hookscope/recorder.hpp"
#include "hookscope/value_errors.hpp"

#include <catch2/catch.hpp>

#include "random_values.hpp"

#include <cmath>
#include <cstddef>
#include <optional>
#include <span>
#include <random>
#include <limits>
#include <sstream>
#include <streambuf>
#include <string>
#include <system_error>
#include <vector>

using hookscope::call_record;
using hookscope::dtype;
using hookscope::parameter;
using hookscope::parameter_kind;
using hookscope::tensor_spec;
using hookscope::value;

namespace {

// The message of the format_error that parsing `line` throws ("" when it parses).
std::string parse_error(const std::string& line) {
  try {
    (void)hookscope::parse_record(line);
  } catch (const hookscope::format_error& e) {
    return e.what();
  }
  return "";
}

// A record whose function, args and kwargs are valid, with `extra` spliced in before the closing brace.
std::string record_with(const std::string& extra) { return R"({"function":"f","args":[],"kwargs":[])" + extra + "}"; }

// Every record of `text`, read by one record_reader named "in.jsonl".
std::vector<call_record> read_all(const std::string& text) {
  std::istringstream in(text);
  hookscope::record_reader reader(in, "in.jsonl");
  std::vector<call_record> records;
  call_record r;
  while (reader.next(r)) records.push_back(r);
  return records;
}

// The record_error that reading `text` throws ("" when every line reads).
std::string read_error(const std::string& text) {
  try {
    (void)read_all(text);
  } catch (const hookscope::record_error& e) {
    return e.what();
  }
  return "";
}

void check_same(const call_record& a, const call_record& b) {
  CHECK(a.function == b.function);
  CHECK(a.parameters == b.parameters);
  CHECK(a.inputs == b.inputs);
  CHECK(a.result == b.result);
  CHECK(a.threw == b.threw);
  CHECK(a.latency_ns == b.latency_ns);
}

tensor_spec ids(std::int64_t batch, std::int64_t length) { return {{batch, length}, dtype::int64}; }

// A stream buffer whose reads fail, as a disk error would.
struct failing_buffer : std::streambuf {
  int_type underflow() override { throw std::runtime_error("disk error"); }
};

}  // namespace

namespace llm {
namespace impl {
inline tensor_spec embed(const tensor_spec& input_ids, const std::optional<tensor_spec>& attention_mask, int layer) {
  (void)attention_mask;
  return {{input_ids.shape[0], input_ids.shape[1], 16 * layer}, dtype::float16};
}
}  // namespace impl
HOOKSCOPE_OBSERVABLE(embed, impl::embed, input_ids, attention_mask, layer);
}  // namespace llm

// A record with every field of the format (docs/record_format.md).
const std::string full_line =
    R"({"function":"Model::forward","signature":[{"name":"input_ids"},{"name":"attention_mask","default":null},)"
    R"({"name":"use_cache","default":{"bool":true}},{"name":"args","kind":"var_positional"},)"
    R"({"name":"kwargs","kind":"var_keyword"}],"args":[{"shape":[1,7],"dtype":"int64"}],)"
    R"("kwargs":[["attention_mask",{"shape":[1,7],"dtype":"int64"}],["past_key_values",null]],)"
    R"("result":{"tuple":[{"shape":[1,7,32],"dtype":"float32"},null]},"threw":true,"latency_ns":81234})";

TEST_CASE("parse_record") {
  SECTION("every field") {
    const call_record r = hookscope::parse_record(full_line);
    CHECK(r.function == "Model::forward");
    REQUIRE(r.parameters.has_value());
    CHECK(*r.parameters == hookscope::parameter_list{
                               {"input_ids", parameter_kind::positional_or_keyword, std::nullopt},
                               {"attention_mask", parameter_kind::positional_or_keyword, value()},
                               {"use_cache", parameter_kind::positional_or_keyword, value(true)},
                               {"args", parameter_kind::var_positional, std::nullopt},
                               {"kwargs", parameter_kind::var_keyword, std::nullopt},
                           });
    CHECK(r.inputs.args == std::vector<value>{ids(1, 7)});
    CHECK(r.inputs.kwargs == hookscope::value_fields{{"attention_mask", ids(1, 7)}, {"past_key_values", value()}});
    CHECK(r.result == value::tuple({tensor_spec{{1, 7, 32}, dtype::float32}, value()}));
    CHECK(r.threw);
    CHECK(r.latency_ns == 81234);
  }

  SECTION("optional fields left out") {
    const call_record r = hookscope::parse_record(R"({"function":"f","args":[],"kwargs":[]})");
    CHECK(r.function == "f");
    CHECK_FALSE(r.parameters.has_value());
    CHECK(r.inputs.args.empty());
    CHECK(r.inputs.kwargs.empty());
    CHECK_FALSE(r.result.has_value());
    CHECK_FALSE(r.threw);
    CHECK_FALSE(r.latency_ns.has_value());
  }

  SECTION("a null result is a None result, not a missing one") {
    const call_record r = hookscope::parse_record(record_with(R"(,"result":null,"threw":false,"latency_ns":0)"));
    CHECK(r.result == value());
    CHECK_FALSE(r.threw);
    CHECK(r.latency_ns == 0);
  }

  SECTION("every value kind") {
    const call_record r = hookscope::parse_record(
        R"({"function":"f","args":[{"int":-3},{"float":0.5},{"float":"inf"},{"bool":false},{"str":"a\"b"},)"
        R"({"list":[{"int":1},null]},{"dict":[["k",{"int":2}]]},{"shape":[],"dtype":"bool"},)"
        R"({"struct":"DynamicCache","fields":[["key_0",{"shape":[1,8,7,64],"dtype":"bfloat16"}]]},{"int":7.0}],)"
        R"("kwargs":[["empty",{"tuple":[]}]]})");
    CHECK(r.inputs.args ==
          std::vector<value>{-3, 0.5, HUGE_VAL, false, "a\"b", value::list({1, value()}), value::dict({{"k", 2}}),
                             tensor_spec{{}, dtype::boolean},
                             value::structure("DynamicCache", {{"key_0", tensor_spec{{1, 8, 7, 64}, dtype::bfloat16}}}),
                             7});
    CHECK(r.inputs.kwargs == hookscope::value_fields{{"empty", value::tuple({})}});
  }

  SECTION("values read as value_from_json reads them, tensor contents included") {
    const std::string values[] = {R"({"shape":[2],"dtype":"int16","data":"AQIDBA=="})",
                                  R"({"shape":[1,3],"dtype":"uint8","data":"AAEC"})",
                                  R"({"tuple":[{"float":"nan"},{"float":1e300},{"str":"\u00e9"}]})",
                                  R"({"struct":"KV","fields":[["k",{"dict":[["a",{"list":[null,{"bool":true}]}]]}]]})"};
    for (const std::string& v : values) {
      const call_record r = hookscope::parse_record(R"({"function":"f","args":[)" + v + R"(],"kwargs":[]})");
      REQUIRE(r.inputs.args.size() == 1);
      CHECK(hookscope::to_json(r.inputs.args[0]) == hookscope::to_json(hookscope::value_from_json(v)));
    }
    const call_record r = hookscope::parse_record(R"({"function":"f","args":[)" + values[0] + R"(],"kwargs":[]})");
    CHECK(r.inputs.args[0].as_tensor().data ==
          std::vector<std::byte>{std::byte{1}, std::byte{2}, std::byte{3}, std::byte{4}});
  }

  SECTION("keys it does not know are ignored (records of newer writers)") {
    const call_record r = hookscope::parse_record(
        R"({"version":2,"function":"f","signature":[{"name":"x","annotation":"Tensor"}],"args":[],)"
        R"("kwargs":[["x",null]],"thread":{"id":3}})");
    CHECK(r.parameters == hookscope::parameter_list{{"x", parameter_kind::positional_or_keyword, std::nullopt}});
    CHECK(r.inputs.kwargs == hookscope::value_fields{{"x", value()}});
  }

  SECTION("an explicit positional_or_keyword kind") {
    const call_record r =
        hookscope::parse_record(record_with(R"(,"signature":[{"name":"x","kind":"positional_or_keyword"}])"));
    CHECK(r.parameters == hookscope::parameter_list{{"x", parameter_kind::positional_or_keyword, std::nullopt}});
  }

  SECTION("text that is not JSON") {
    CHECK(parse_error("not json") == "not JSON: syntax error at column 1");
    CHECK(parse_error(R"({"function":"f")") == "not JSON: incomplete JSON at column 16");
    CHECK(parse_error("{} {}") == "not JSON: extra data at column 4");
    CHECK(parse_error("{\"function\":\"\xff\"}") == "not JSON: syntax error at column 14");
  }

  SECTION("a record that is not an object, or misses a required key") {
    const std::string expected_record = R"(expected a record {"function", "args", "kwargs", ...}, found )";
    CHECK(parse_error("[]") == "$: " + expected_record + "an array");
    CHECK(parse_error("null") == "$: " + expected_record + "null");
    CHECK(parse_error(R"({"args":[],"kwargs":[]})") == R"($: missing "function")");
    CHECK(parse_error(R"({"function":"f","kwargs":[]})") == R"($: missing "args")");
    CHECK(parse_error(R"({"function":"f","args":[]})") == R"($: missing "kwargs")");
  }

  SECTION("function, args and kwargs of the wrong kind") {
    CHECK(parse_error(R"({"function":3,"args":[],"kwargs":[]})") == "$.function: expected a string, found a number");
    CHECK(parse_error(R"({"function":"","args":[],"kwargs":[]})") == "$.function: empty function name");
    CHECK(parse_error(R"({"function":"f","args":{},"kwargs":[]})") ==
          "$.args: expected an array of values, found an object");
    CHECK(parse_error(R"({"function":"f","args":[3],"kwargs":[]})") ==
          "$.args[0]: expected null or an object, found a number");
    CHECK(parse_error(R"({"function":"f","args":[],"kwargs":{}})") ==
          "$.kwargs: expected an array of [name, value] pairs, found an object");
    CHECK(parse_error(R"({"function":"f","args":[],"kwargs":[["x"]]})") ==
          R"($.kwargs[0]: expected a ["name", value] pair)");
    CHECK(parse_error(R"({"function":"f","args":[],"kwargs":[[1,null]]})") ==
          R"($.kwargs[0]: expected a ["name", value] pair)");
    CHECK(parse_error(R"({"function":"f","args":[],"kwargs":[["x",null],["y",null],["x",null]]})") ==
          R"($.kwargs[2][0]: duplicate keyword argument "x")");
  }

  SECTION("values that are not valid, named by their JSON path") {
    CHECK(parse_error(R"({"function":"f","args":[],"kwargs":[["a",null],["b",{"shape":[-3],"dtype":"int64"}]]})") ==
          "$.kwargs[1][1].shape[0]: negative dimension -3");
    CHECK(parse_error(R"({"function":"f","args":[{"shape":[1.5],"dtype":"int64"}],"kwargs":[]})") ==
          "$.args[0].shape[0]: expected an integer, found 1.5");
    CHECK(parse_error(R"({"function":"f","args":[{"shape":7,"dtype":"int64"}],"kwargs":[]})") ==
          "$.args[0].shape: expected an array of dimensions, found a number");
    CHECK(parse_error(R"({"function":"f","args":[{"shape":[1],"dtype":"float8"}],"kwargs":[]})") ==
          R"($.args[0].dtype: unknown dtype "float8" (expected one of float64 float32 float16 bfloat16 int64 int32 )"
          R"(int16 int8 uint8 bool))");
    CHECK(parse_error(R"({"function":"f","args":[{"shape":[1],"dtype":1}],"kwargs":[]})") ==
          "$.args[0].dtype: expected a string, found a number");
    CHECK(parse_error(R"({"function":"f","args":[{"shape":[1]}],"kwargs":[]})") ==
          R"($.args[0]: a tensor has the keys "shape" and "dtype" (and "data" when its contents were captured, or )"
          R"("data_too_large" when they were left out of the record))");
    CHECK(parse_error(R"({"function":"f","args":[{"shape":[2],"dtype":"int16","data":"AQID"}],"kwargs":[]})") ==
          "$.args[0].data: 3 bytes for a tensor that holds 4");
    CHECK(parse_error(R"({"function":"f","args":[{"shape":[2],"dtype":"int16","data":"AQ?D"}],"kwargs":[]})") ==
          "$.args[0].data: invalid base64 character at offset 2");
    CHECK(parse_error(R"({"function":"f","args":[{"complex":1}],"kwargs":[]})") ==
          R"($.args[0]: unknown value kind "complex")");
    CHECK(parse_error(R"({"function":"f","args":[{"int":1,"float":2}],"kwargs":[]})") ==
          "$.args[0]: expected one key (int, float, bool, str, bytes, tuple, list, dict), found 2");
    CHECK(parse_error(R"({"function":"f","args":[{"int":"3"}],"kwargs":[]})") ==
          "$.args[0].int: expected an integer, found a string");
    CHECK(parse_error(R"({"function":"f","args":[{"int":18446744073709551615}],"kwargs":[]})") ==
          "$.args[0].int: expected an integer, found 18446744073709551615");
    CHECK(parse_error(R"({"function":"f","args":[{"float":"many"}],"kwargs":[]})") ==
          "$.args[0].float: expected a number, found a string");
    CHECK(parse_error(R"({"function":"f","args":[{"bool":1}],"kwargs":[]})") ==
          "$.args[0].bool: expected true or false, found a number");
    CHECK(parse_error(R"({"function":"f","args":[{"str":null}],"kwargs":[]})") ==
          "$.args[0].str: expected a string (or {\"base64\":\"...\"} for bytes that are not UTF-8), found null");
    CHECK(parse_error(R"({"function":"f","args":[{"list":{}}],"kwargs":[]})") ==
          "$.args[0].list: expected an array, found an object");
    CHECK(parse_error(R"({"function":"f","args":[{"struct":"C","fields":{}}],"kwargs":[]})") ==
          "$.args[0].fields: expected an array of [name, value] pairs, found an object");
    CHECK(parse_error(R"({"function":"f","args":[{"struct":1,"fields":[]}],"kwargs":[]})") ==
          "$.args[0].struct: expected a string (or {\"base64\":\"...\"} for bytes that are not UTF-8), found a number");
    CHECK(parse_error(R"({"function":"f","args":[{"struct":"C"}],"kwargs":[]})") ==
          R"($.args[0]: a struct has exactly the keys "struct" and "fields")");
    CHECK(parse_error(R"({"function":"f","args":[{"tuple":[null,{"list":[{"dict":[["k",{"shape":[2,"x"],)"
                      R"("dtype":"int64"}]]}]}]}],"kwargs":[]})") ==
          "$.args[0].tuple[1].list[0].dict[0][1].shape[1]: expected an integer, found a string");
  }

  SECTION("a signature that is not valid") {
    CHECK(parse_error(record_with(R"(,"signature":{})")) ==
          "$.signature: expected an array of parameters, found an object");
    CHECK(parse_error(record_with(R"(,"signature":["x"])")) ==
          R"($.signature[0]: expected a parameter {"name", "kind", "default"}, found a string)");
    CHECK(parse_error(record_with(R"(,"signature":[{"kind":"var_keyword"}])")) == R"($.signature[0]: missing "name")");
    CHECK(parse_error(record_with(R"(,"signature":[{"name":null}])")) ==
          "$.signature[0].name: expected a string, found null");
    CHECK(parse_error(record_with(R"(,"signature":[{"name":""}])")) == "$.signature[0].name: empty parameter name");
    CHECK(parse_error(record_with(R"(,"signature":[{"name":"x","kind":"keyword_only"}])")) ==
          R"($.signature[0].kind: unknown parameter kind "keyword_only" (expected positional_or_keyword, )"
          R"(var_positional or var_keyword))");
    CHECK(parse_error(record_with(R"(,"signature":[{"name":"x"},{"name":"x"}])")) ==
          R"($.signature[1].name: duplicate parameter "x")");
    CHECK(parse_error(record_with(
              R"(,"signature":[{"name":"a","kind":"var_positional"},{"name":"b","kind":"var_positional"}])")) ==
          "$.signature[1].kind: a second var_positional parameter");
    CHECK(parse_error(record_with(R"(,"signature":[{"name":"x","default":3}])")) ==
          "$.signature[0].default: expected null or an object, found a number");
  }

  SECTION("a note is no record") {
    CHECK(parse_error(R"({"function":"f","dropped":{"count":2,"reason":"buffer_full"}})") ==
          "$: a note of records its writer dropped, not a record (a record_reader skips it)");
    CHECK(parse_error(R"({"function":"f","dropped":{"count":0,"reason":"buffer_full"}})") ==
          "$.dropped.count: expected a count >= 1, found 0");
  }

  SECTION("result, threw and latency_ns of the wrong kind") {
    CHECK(parse_error(record_with(R"(,"result":[])")) == "$.result: expected null or an object, found an array");
    CHECK(parse_error(record_with(R"(,"threw":"yes")")) == "$.threw: expected true or false, found a string");
    CHECK(parse_error(record_with(R"(,"latency_ns":-5)")) == "$.latency_ns: negative latency -5");
    CHECK(parse_error(record_with(R"(,"latency_ns":1.5)")) == "$.latency_ns: expected an integer, found 1.5");
  }
}

TEST_CASE("record_reader") {
  SECTION("one record per line, with its line number; blank lines skipped") {
    std::istringstream in("\n" + record_with("") + "\n  \t\n" + full_line + "\n\n");
    hookscope::record_reader reader(in, "forward.jsonl");
    CHECK(reader.source() == "forward.jsonl");
    call_record r;
    REQUIRE(reader.next(r));
    CHECK(reader.line() == 2);
    CHECK(r.function == "f");
    REQUIRE(reader.next(r));
    CHECK(reader.line() == 4);
    check_same(r, hookscope::parse_record(full_line));
    CHECK_FALSE(reader.next(r));
    CHECK_FALSE(reader.next(r));
  }

  SECTION("an empty stream holds no record") {
    CHECK(read_all("").empty());
    CHECK(read_all("\n\n").empty());
  }

  SECTION("CRLF line ends") {
    const auto records = read_all(record_with("") + "\r\n\r\n" + full_line + "\r\n");
    REQUIRE(records.size() == 2);
    CHECK(records[1].latency_ns == 81234);
  }

  SECTION("the fields of a record do not leak into the next one") {
    const auto records = read_all(full_line + "\n" + R"({"function":"Model::forward","args":[],"kwargs":[]})" + "\n");
    REQUIRE(records.size() == 2);
    check_same(records[1], hookscope::parse_record(R"({"function":"Model::forward","args":[],"kwargs":[]})"));
  }

  SECTION("a valid last line without its newline is read") {
    const auto records = read_all(record_with("") + "\n" + full_line);
    REQUIRE(records.size() == 2);
    CHECK(records[1].function == "Model::forward");
  }

  SECTION("a last line cut short is left out with a warning; a bad line before the end is an error") {
    std::istringstream in(record_with("") + "\n" + R"({"function":"f","ar)");
    hookscope::record_reader reader(in, "in.jsonl");
    call_record r;
    CHECK(reader.next(r));
    CHECK(reader.warnings().empty());
    CHECK_FALSE(reader.next(r));
    CHECK(reader.warnings() ==
          std::vector<std::string>{"in.jsonl:2: the last line is cut (no newline at the end, and not JSON: incomplete "
                                   "JSON at column 20); ignored: its writer was probably stopped while writing it"});
    CHECK(read_error(record_with("") + "\n" + R"({"function":"f","ar)" + "\n") ==
          "in.jsonl:2: not JSON: incomplete JSON at column 20");
    CHECK(read_error(record_with("") + "\n" + R"({"function":"f","ar)" + "\n" + record_with("") + "\n") ==
          "in.jsonl:2: not JSON: incomplete JSON at column 20");
  }

  SECTION("a bad line names the source, the line and the JSON path") {
    const std::string text = record_with("") + "\n\n" +
                             R"({"function":"f","args":[],"kwargs":[["a",null],["b",{"shape":[-3],"dtype":"int64"}]]})";
    std::istringstream in(text + "\n");
    hookscope::record_reader reader(in, "forward.jsonl");
    call_record r;
    REQUIRE(reader.next(r));
    try {
      (void)reader.next(r);
      FAIL("no record_error");
    } catch (const hookscope::record_error& e) {
      CHECK(std::string(e.what()) == "forward.jsonl:3: $.kwargs[1][1].shape[0]: negative dimension -3");
      CHECK(e.source() == "forward.jsonl");
      CHECK(e.line() == 3);
    }
  }

  SECTION("the signature of a function never changes") {
    const std::string first = R"({"function":"f","signature":[{"name":"x"}],"args":[],"kwargs":[]})";
    const std::string same = first;
    const std::string other = R"({"function":"f","signature":[{"name":"y"}],"args":[],"kwargs":[]})";
    CHECK(read_all(first + "\n" + record_with("") + "\n" + same + "\n").size() == 3);
    CHECK(read_error(first + "\n" + record_with("") + "\n" + other + "\n") ==
          R"(in.jsonl:3: $.signature: the signature of "f" changed since in.jsonl:1 (it must stay the same for every )"
          R"(record of a function))");
    CHECK(read_error(first + "\n" +
                     R"({"function":"f","signature":[{"name":"x","default":null}],"args":[],"kwargs":[]})") ==
          R"(in.jsonl:2: $.signature: the signature of "f" changed since in.jsonl:1 (it must stay the same for every )"
          R"(record of a function))");
  }

  SECTION("a signature comes with the first record of its function") {
    CHECK(read_error(record_with("") + "\n" + R"({"function":"f","signature":[],"args":[],"kwargs":[]})") ==
          R"(in.jsonl:2: $.signature: "f" had no signature on its first record (in.jsonl:1); a signature comes with )"
          R"(a function's first record)");
  }

  SECTION("two functions in one stream, each with its signature") {
    const auto records = read_all(R"({"function":"f","signature":[{"name":"x"}],"args":[],"kwargs":[]})"
                                  "\n"
                                  R"({"function":"g","signature":[{"name":"y"},{"name":"z"}],"args":[],"kwargs":[]})"
                                  "\n"
                                  R"({"function":"f","signature":[{"name":"x"}],"args":[],"kwargs":[["x",{"int":1}]]})"
                                  "\n"
                                  R"({"function":"g","args":[],"kwargs":[["y",null]]})"
                                  "\n");
    REQUIRE(records.size() == 4);
    CHECK(records[1].parameters ==
          hookscope::parameter_list{{"y", parameter_kind::positional_or_keyword, std::nullopt},
                                    {"z", parameter_kind::positional_or_keyword, std::nullopt}});
    CHECK(records[2].inputs.kwargs == hookscope::value_fields{{"x", 1}});
    CHECK(records[3].function == "g");
  }

  SECTION("open() goes on with another stream, as if concatenated") {
    std::istringstream a(R"({"function":"f","signature":[{"name":"x"}],"args":[],"kwargs":[]})"
                         "\n");
    std::istringstream b(
        "\n"
        R"({"function":"f","signature":[{"name":"y"}],"args":[],"kwargs":[]})"
        "\n");
    hookscope::record_reader reader(a, "a.jsonl");
    call_record r;
    REQUIRE(reader.next(r));
    CHECK_FALSE(reader.next(r));
    reader.open(b, "b.jsonl");
    CHECK(reader.source() == "b.jsonl");
    CHECK_THROWS_WITH(reader.next(r), R"(b.jsonl:2: $.signature: the signature of "f" changed since a.jsonl:1 (it )"
                                      R"(must stay the same for every record of a function))");
  }

  SECTION("many lines longer than the parser's first memory block") {
    std::string kwargs;
    for (int i = 0; i < 2000; ++i)
      kwargs += std::string(i == 0 ? "" : ",") + R"(["k)" + std::to_string(i) + R"(",{"shape":[1,2],"dtype":"int64"}])";
    const std::string line = R"({"function":"f","args":[],"kwargs":[)" + kwargs + "]}\n";
    std::string text;
    for (int i = 0; i < 300; ++i) text += line;
    const auto records = read_all(text);
    REQUIRE(records.size() == 300);
    CHECK(records[299].inputs.kwargs.size() == 2000);
  }

  SECTION("a stream that fails to read") {
    failing_buffer buffer;
    std::istream in(&buffer);
    hookscope::record_reader reader(in, "disk.jsonl");
    call_record r;
    CHECK_THROWS_AS(reader.next(r), std::system_error);
  }
}

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

TEST_CASE("to_record_line") {
  SECTION("every field, in the order call_recorder writes them") {
    CHECK(hookscope::to_record_line(hookscope::parse_record(full_line)) == full_line);
  }

  SECTION("optional fields only when present") {
    call_record r;
    r.function = "f";
    r.inputs.args = {1, value()};
    r.inputs.kwargs = {{"x", ids(2, 3)}};
    CHECK(hookscope::to_record_line(r) ==
          R"({"function":"f","args":[{"int":1},null],"kwargs":[["x",{"shape":[2,3],"dtype":"int64"}]]})");
    r.result = value();
    r.latency_ns = 12;
    CHECK(hookscope::to_record_line(r) ==
          R"({"function":"f","args":[{"int":1},null],"kwargs":[["x",{"shape":[2,3],"dtype":"int64"}]],)"
          R"("result":null,"latency_ns":12})");
  }

  SECTION("round trip through parse_record") {
    call_record r;
    r.function = "ns::step";
    r.parameters = hookscope::parameter_list{{"a", parameter_kind::positional_or_keyword, value(0.25)},
                                             {"rest", parameter_kind::var_positional, std::nullopt},
                                             {"options", parameter_kind::var_keyword, std::nullopt}};
    r.inputs.args = {value::structure("Cache", {{"k", ids(1, 2)}}), "text\nwith \"quotes\""};
    r.inputs.kwargs = {{"flag", false}, {"d", value::dict({{"n", value::list({})}})}};
    r.threw = true;
    check_same(hookscope::parse_record(hookscope::to_record_line(r)), r);
  }

#if HOOKSCOPE_ENABLED
  SECTION("what call_recorder writes reads back, and writes back to the same text") {
    hookscope::call_recorder rec(llm::embed);
    (void)llm::embed(ids(1, 7), ids(1, 7), 2);
    (void)llm::embed(ids(2, 1), std::nullopt, 3);
    const std::string text = rec.to_jsonl();
    std::istringstream in(text);
    hookscope::record_reader reader(in, "embed.jsonl");
    call_record r;
    std::string written;
    REQUIRE(reader.next(r));
    CHECK(r.function == "llm::embed");
    CHECK(r.parameters ==
          hookscope::parameter_list{{"input_ids", parameter_kind::positional_or_keyword, std::nullopt},
                                    {"attention_mask", parameter_kind::positional_or_keyword, std::nullopt},
                                    {"layer", parameter_kind::positional_or_keyword, std::nullopt}});
    CHECK(r.inputs.kwargs ==
          hookscope::value_fields{{"input_ids", ids(1, 7)}, {"attention_mask", ids(1, 7)}, {"layer", 2}});
    CHECK(r.result == value(tensor_spec{{1, 7, 32}, dtype::float16}));
    CHECK(r.latency_ns.has_value());
    written += hookscope::to_record_line(r) + "\n";
    REQUIRE(reader.next(r));
    CHECK_FALSE(r.parameters.has_value());
    CHECK(r.inputs.kwargs ==
          hookscope::value_fields{{"input_ids", ids(2, 1)}, {"attention_mask", value()}, {"layer", 3}});
    written += hookscope::to_record_line(r) + "\n";
    CHECK_FALSE(reader.next(r));
    CHECK(written == text);
  }
#endif
}

TEST_CASE("record_reader: long lines and repeated keys") {
  SECTION("a line under the cap, read across chunks, is whole") {
    const std::string name(200000, 'n');
    std::istringstream in("{\"function\":\"" + name + "\",\"args\":[],\"kwargs\":[]}");  // no newline at the end
    hookscope::record_reader reader(in, "long.jsonl");
    hookscope::call_record r;
    REQUIRE(reader.next(r));
    CHECK(r.function == name);
    CHECK_FALSE(reader.next(r));
  }
  SECTION("keys given twice") {
    CHECK_THROWS_WITH(hookscope::parse_record(R"({"function":"f","function":"g","args":[],"kwargs":[]})"),
                      "$: duplicate key \"function\" in the record");
    CHECK_THROWS_WITH(
        hookscope::parse_record(R"({"function":"f","args":[{"shape":[1],"shape":[2],"dtype":"int64"}],"kwargs":[]})"),
        Catch::Contains("duplicate key \"shape\""));
    CHECK_THROWS_WITH(
        hookscope::parse_record(
            R"({"function":"f","args":[],"kwargs":[["x",{"struct":"C","fields":[["a",null],["a",null]]}]]})"),
        "$.kwargs[0][1].fields[1][0]: duplicate key \"a\"");
    CHECK_THROWS_WITH(
        hookscope::parse_record(R"({"function":"f","args":[{"dict":[["a",null],["a",null]]}],"kwargs":[]})"),
        "$.args[0].dict[1][0]: duplicate key \"a\"");
    CHECK_THROWS_WITH(
        hookscope::parse_record(R"({"function":"f","args":[],"kwargs":[],"result":{"dict":[["a",null],["a",null]]}})"),
        "$.result.dict[1][0]: duplicate key \"a\"");
    CHECK_NOTHROW(hookscope::parse_record(
        R"({"function":"f","args":[{"dict":[["a",null],["b",{"dict":[["a",null]]}]]}],"kwargs":[]})"));
  }
  SECTION("40,000 keyword arguments: the duplicate found by sorting, the first repeat named") {
    std::string line = R"({"function":"f","args":[],"kwargs":[)";
    for (int i = 0; i < 40000; ++i) line += (i ? "," : "") + std::string("[\"k") + std::to_string(i) + "\",null]";
    CHECK(hookscope::parse_record(line + "]}").inputs.kwargs.size() == 40000);
    CHECK_THROWS_WITH(hookscope::parse_record(line + R"(,["k7",null],["k3",null]]})"),
                      "$.kwargs[40000][0]: duplicate keyword argument \"k7\"");
  }
}

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
  CHECK_THROWS_WITH(hookscope::to_record_line(r), "x[0]: the key \"yes\" given twice");

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
        return std::string(e.what());
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
