#include "hookscope/records.hpp"

#include "hookscope/recorder.hpp"
#include "hookscope/value_errors.hpp"

#include <catch2/catch.hpp>

#include "random_values.hpp"
#include "records_support.hpp"

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
using namespace records_test;

namespace {

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
      CHECK(std::string(e.what()) == "hookscope: forward.jsonl:3: $.kwargs[1][1].shape[0]: negative dimension -3");
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
    CHECK_THROWS_WITH(reader.next(r),
                      R"(hookscope: b.jsonl:2: $.signature: the signature of "f" changed since a.jsonl:1 (it )"
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
                      "hookscope: $: duplicate key \"function\" in the record");
    CHECK_THROWS_WITH(
        hookscope::parse_record(R"({"function":"f","args":[{"shape":[1],"shape":[2],"dtype":"int64"}],"kwargs":[]})"),
        Catch::Contains("duplicate key \"shape\""));
    CHECK_THROWS_WITH(
        hookscope::parse_record(
            R"({"function":"f","args":[],"kwargs":[["x",{"struct":"C","fields":[["a",null],["a",null]]}]]})"),
        "hookscope: $.kwargs[0][1].fields[1][0]: duplicate key \"a\"");
    CHECK_THROWS_WITH(
        hookscope::parse_record(R"({"function":"f","args":[{"dict":[["a",null],["a",null]]}],"kwargs":[]})"),
        "hookscope: $.args[0].dict[1][0]: duplicate key \"a\"");
    CHECK_THROWS_WITH(
        hookscope::parse_record(R"({"function":"f","args":[],"kwargs":[],"result":{"dict":[["a",null],["a",null]]}})"),
        "hookscope: $.result.dict[1][0]: duplicate key \"a\"");
    CHECK_NOTHROW(hookscope::parse_record(
        R"({"function":"f","args":[{"dict":[["a",null],["b",{"dict":[["a",null]]}]]}],"kwargs":[]})"));
  }
  SECTION("40,000 keyword arguments: the duplicate found by sorting, the first repeat named") {
    std::string line = R"({"function":"f","args":[],"kwargs":[)";
    for (int i = 0; i < 40000; ++i) line += (i ? "," : "") + std::string("[\"k") + std::to_string(i) + "\",null]";
    CHECK(hookscope::parse_record(line + "]}").inputs.kwargs.size() == 40000);
    CHECK_THROWS_WITH(hookscope::parse_record(line + R"(,["k7",null],["k3",null]]})"),
                      "hookscope: $.kwargs[40000][0]: duplicate keyword argument \"k7\"");
  }
}
