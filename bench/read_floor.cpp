// The parsing floor of bench/read.bench.cpp: simdjson's on-demand parser reading every line of a file of records in
// place and summing every number of every "shape" array as int64. Compiled once per kernel (bench/meson.build:
// READ_FLOOR_KERNEL names the namespace; -march=haswell selects simdjson's AVX2 kernel at compile time).
#include "read_lines.hpp"

#include <simdjson.h>

namespace read_floor {
namespace {

namespace od = simdjson::ondemand;

std::int64_t sum_value(od::value v);

std::int64_t sum_object(od::object o) {
  std::int64_t sum = 0;
  for (auto field : o) {
    const od::raw_json_string key = field.key();
    if (key == "shape") {
      for (auto n : field.value().get_array()) sum += n.get_int64();
    } else {
      sum += sum_value(field.value());
    }
  }
  return sum;
}

std::int64_t sum_value(od::value v) {
  const od::json_type type = v.type();
  std::int64_t sum = 0;
  if (type == od::json_type::object) {
    sum = sum_object(v.get_object());
  } else if (type == od::json_type::array) {
    for (auto element : v.get_array()) sum += sum_value(element.value());
  }
  return sum;  // a string, a number out of a shape, a boolean or a null: skipped by the next step
}

}  // namespace

result simdjson_read(const std::string& path) {
  od::parser parser;
  result r;
  r.records = for_each_line(path, [&](const char* line, std::size_t length, std::size_t capacity) {
    od::document doc = parser.iterate(simdjson::padded_string_view(line, length, capacity));
    r.shape_sum += sum_object(doc.get_object());
  });
  return r;
}

}  // namespace read_floor
