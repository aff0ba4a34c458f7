// The helpers the tests of the record format share (records.test.cpp, records_notes.test.cpp,
// records_writer.test.cpp): records parsed, read by a record_reader, compared, and a record with every field.
#pragma once

#include "hookscope/records.hpp"

#include <catch2/catch.hpp>

#include <sstream>
#include <string>
#include <vector>

namespace records_test {

using hookscope::call_record;

// The message of the format_error that parsing `line` throws ("" when it parses).
inline std::string parse_error(const std::string& line) {
  try {
    (void)hookscope::parse_record(line);
  } catch (const hookscope::format_error& e) {
    return std::string(e.sentence());  // what() is "hookscope: " and the sentence
  }
  return "";
}

// A record whose function, args and kwargs are valid, with `extra` spliced in before the closing brace.
inline std::string record_with(const std::string& extra) {
  return R"({"function":"f","args":[],"kwargs":[])" + extra + "}";
}

// Every record of `text`, read by one record_reader named "in.jsonl".
inline std::vector<call_record> read_all(const std::string& text) {
  std::istringstream in(text);
  hookscope::record_reader reader(in, "in.jsonl");
  std::vector<call_record> records;
  call_record r;
  while (reader.next(r)) records.push_back(r);
  return records;
}

// The record_error that reading `text` throws ("" when every line reads).
inline std::string read_error(const std::string& text) {
  try {
    (void)read_all(text);
  } catch (const hookscope::record_error& e) {
    return std::string(e.sentence());
  }
  return "";
}

inline void check_same(const call_record& a, const call_record& b) {
  CHECK(a.function == b.function);
  CHECK(a.parameters == b.parameters);
  CHECK(a.inputs == b.inputs);
  CHECK(a.result == b.result);
  CHECK(a.threw == b.threw);
  CHECK(a.latency_ns == b.latency_ns);
}

// A record with every field of the format (docs/record_format.md).
inline const std::string full_line =
    R"({"function":"Model::forward","signature":[{"name":"input_ids"},{"name":"attention_mask","default":null},)"
    R"({"name":"use_cache","default":{"bool":true}},{"name":"args","kind":"var_positional"},)"
    R"({"name":"kwargs","kind":"var_keyword"}],"args":[{"shape":[1,7],"dtype":"int64"}],)"
    R"("kwargs":[["attention_mask",{"shape":[1,7],"dtype":"int64"}],["past_key_values",null]],)"
    R"("result":{"tuple":[{"shape":[1,7,32],"dtype":"float32"},null]},"threw":true,"latency_ns":81234})";

}  // namespace records_test
