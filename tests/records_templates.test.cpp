// record_reader::next(record_view&): lines that repeat a structure are read by their template (src/record_templates.*)
// and must give exactly what the full parse gives, record for record and error for error. The oracle is
// parse_record, which parses every line in full.
#include "hookscope/records.hpp"

#include "../src/record_templates.hpp"

#include <catch2/catch.hpp>

#include "random_values.hpp"
#include "records_support.hpp"

#include <cstdint>
#include <random>
#include <sstream>
#include <string>
#include <vector>

namespace {

using hookscope::call_record;
using hookscope::record_view;
using hookscope::value;

// Every tensor's sizes in leaf order: the args', the kwargs', then the result's.
std::vector<std::int64_t> sizes_of(const call_record& r) {
  std::vector<std::int64_t> out;
  const auto add = [&](const value& v) {
    hookscope::for_each_leaf(v, [&](const value& leaf) {
      if (leaf.is_tensor()) out.insert(out.end(), leaf.as_tensor().shape.begin(), leaf.as_tensor().shape.end());
    });
  };
  for (const value& a : r.inputs.args) add(a);
  for (const auto& kw : r.inputs.kwargs) add(kw.second);
  if (r.result) add(*r.result);
  return out;
}

// The same record with every tensor size drawn again (the same ranks) and another latency.
value with_new_sizes(const value& v, std::mt19937_64& rng) {
  if (v.is_tensor()) {
    hookscope::tensor_spec t = v.as_tensor();
    for (std::int64_t& d : t.shape) d = rng() % 3 == 0 ? 0 : static_cast<std::int64_t>(rng() >> (1 + rng() % 63));
    return t;
  }
  switch (v.type()) {
    case value::kind::tuple:
    case value::kind::list: {
      std::vector<value> items;
      for (const value& x : v.items()) items.push_back(with_new_sizes(x, rng));
      return v.type() == value::kind::tuple ? value::tuple(std::move(items)) : value::list(std::move(items));
    }
    case value::kind::dict:
    case value::kind::structure: {
      hookscope::value_fields fields;
      for (const auto& [name, x] : v.fields()) fields.emplace_back(name, with_new_sizes(x, rng));
      return v.type() == value::kind::dict ? value::dict(std::move(fields))
                                           : value::structure(v.struct_name(), std::move(fields));
    }
    case value::kind::variant: return value::variant(v.variant_index(), with_new_sizes(v.alternative(), rng));
    default: return v;
  }
}

call_record resized(const call_record& r, std::mt19937_64& rng) {
  call_record out = r;
  out.parameters.reset();
  for (value& a : out.inputs.args) a = with_new_sizes(a, rng);
  for (auto& kw : out.inputs.kwargs) kw.second = with_new_sizes(kw.second, rng);
  if (out.result) out.result = with_new_sizes(*out.result, rng);
  if (out.latency_ns) out.latency_ns = static_cast<std::int64_t>(rng() >> (1 + rng() % 63));
  return out;
}

call_record random_record(std::mt19937_64& rng, std::size_t n) {
  call_record r;
  r.function = "f" + std::to_string(n % 3);
  for (std::uint64_t i = rng() % 3; i > 0; --i) r.inputs.args.push_back(random_values::random_value(rng, 3));
  for (std::uint64_t i = rng() % 4; i > 0; --i)
    r.inputs.kwargs.emplace_back("k" + std::to_string(i), random_values::random_value(rng, 3));
  if (rng() % 2) r.result = random_values::random_value(rng, 2);
  if (rng() % 2) r.latency_ns = static_cast<std::int64_t>(rng() >> 2);
  r.threw = rng() % 5 == 0;
  return r;
}

// What reading `text` gives: each record as its line, or the error, in order.
struct read_outcome {
  std::vector<std::string> records;
  std::vector<std::vector<std::int64_t>> sizes;  // per record read by a structure: its sizes
  std::size_t by_template = 0;                   // records read by a template made by an earlier line
  std::string error;
};

read_outcome read_views(const std::string& text) {
  std::istringstream in(text);
  hookscope::record_reader reader(in, "in.jsonl");
  read_outcome out;
  record_view view;
  try {
    while (reader.next(view)) {
      out.records.push_back(hookscope::to_record_line(*view.record));
      out.sizes.emplace_back(view.sizes.begin(), view.sizes.end());
      if (view.structure) {
        CHECK(out.sizes.back() == sizes_of(*view.record));
        if (!view.new_structure) ++out.by_template;
      }
    }
  } catch (const hookscope::format_error& e) {
    out.error = std::string(e.sentence());
  }
  return out;
}

}  // namespace

TEST_CASE("record_reader::next(record_view)") {
  SECTION("reads every record as parse_record does, structures met before by their template") {
    std::mt19937_64 rng(20261207);
    std::size_t by_template = 0;
    for (int round = 0; round < 150; ++round) {
      std::vector<call_record> shapes;
      for (std::size_t n = 0; n < 1 + rng() % 4; ++n) shapes.push_back(random_record(rng, n));
      std::string text;
      std::vector<std::string> lines;
      for (int i = 0; i < 12; ++i) {
        const call_record r = resized(shapes[rng() % shapes.size()], rng);
        lines.push_back(hookscope::to_record_line(r));
        text += lines.back() + "\n";
      }
      const read_outcome got = read_views(text);
      REQUIRE(got.error.empty());
      REQUIRE(got.records.size() == lines.size());
      for (std::size_t i = 0; i < lines.size(); ++i) {
        INFO(lines[i]);
        CHECK(got.records[i] == hookscope::to_record_line(hookscope::parse_record(lines[i])));
      }
      // next(call_record&) takes the same path
      const std::vector<call_record> again = records_test::read_all(text);
      REQUIRE(again.size() == lines.size());
      for (std::size_t i = 0; i < lines.size(); ++i) CHECK(hookscope::to_record_line(again[i]) == got.records[i]);
      by_template += got.by_template;
    }
    CHECK(by_template > 1000);  // the templates were used, not only the full parse
  }

  SECTION("a line that differs from its structure beyond sizes and latency is read in full: same record or error") {
    const std::string first =
        R"({"function":"f","args":[{"shape":[2,3],"dtype":"float32"}],"kwargs":[["x",{"shape":[1],"dtype":"int32",)"
        R"("data":"AQAAAA=="}],["n",{"int":7}]],"result":{"tuple":[{"shape":[2],"dtype":"int64"}]},"latency_ns":5})";
    const auto with = [&](const std::string& from, const std::string& to) {
      std::string line = first;
      const std::size_t at = line.find(from);
      REQUIRE(at != std::string::npos);
      return line.replace(at, from.size(), to);
    };
    const std::vector<std::string> lines = {
        with("[2,3]", "[20,30]"),                                       // sizes only: by the template
        with("[2,3]", "[-2,3]"),                                        // negative size
        with("[2,3]", "[9223372036854775808,3]"),                       // past int64
        with("[2,3]", "[1234567890123456789,3]"),                       // 19 digits: read in full, and it fits
        with("[2,3]", "[02,3]"),                                        // a leading zero is not JSON
        with("[2,3]", "[2.0,3]"),                                       // a fraction
        with("[2,3]", "[2e0,3]"),                                       // an exponent
        with("[2,3]", "[2, 3]"),                                        // a blank
        with("[2,3]", "[2,3,4]"),                                       // another rank
        with("\"shape\":[1]", "\"shape\":[2]"),                         // a tensor whose data no longer fits its size
        with("{\"int\":7}", "{\"int\":8}"),                             // another constant
        with("\"latency_ns\":5", "\"latency_ns\":-5"),                  // negative latency
        with("\"latency_ns\":5", "\"latency_ns\":5.5"),                 // a fraction of latency
        with("\"latency_ns\":5", "\"latency_ns\":5,\"latency_ns\":6"),  // a duplicate key
        with("\"shape\":[2]", "\"sh\\u0061pe\":[2]"),                   // a key spelled with an escape
        first + " ",                                                    // a blank after the record
        first + "}",                                                    // a byte after the record
    };
    // The first line twice: its skeleton met a second time makes it a template, which each line below then meets.
    const std::string twice = first + "\n" + first + "\n";
    for (const std::string& line : lines) {
      INFO(line);
      const read_outcome got = read_views(twice + line + "\n");
      const std::string refused = records_test::parse_error(line);
      if (refused.empty()) {
        REQUIRE(got.error.empty());
        REQUIRE(got.records.size() == 3);
        CHECK(got.records[2] == hookscope::to_record_line(hookscope::parse_record(line)));
      } else {
        CHECK(got.error == "in.jsonl:3: " + refused);
      }
    }
    // A line of other sizes only was read by the template.
    CHECK(read_views(twice + lines[0] + "\n").by_template == 1);
  }

  SECTION("a structure met again after other ones, and a last line cut after a template") {
    const std::string a = R"({"function":"f","args":[{"shape":[1],"dtype":"int64"}],"kwargs":[]})";
    const std::string b = R"({"function":"f","args":[null],"kwargs":[]})";
    const std::string ab = a + "\n" + b + "\n";
    const read_outcome got = read_views(ab + ab + ab + a.substr(0, 30));
    CHECK(got.error.empty());
    CHECK(got.records.size() == 6);
    CHECK(got.by_template == 2);  // a and b each made a template the second time, read by it the third
  }
  SECTION("names that differ only in digits, in turn: each read by its own template") {
    std::string text;
    for (int round = 0; round < 5; ++round) {
      for (int layer = 0; layer < 12; ++layer) {
        text += R"({"function":"model.layers.)" + std::to_string(layer) + R"(.forward","args":[{"shape":[)" +
                std::to_string(round + 1) + R"(,4],"dtype":"float32"}],"kwargs":[]})" + "\n";
      }
    }
    const read_outcome got = read_views(text);
    CHECK(got.error.empty());
    CHECK(got.by_template >= 36);  // from the third round on, every line (12 names in turn, one skeleton)
  }
  SECTION("a line longer than longest_line is read in full every time: templates hold little") {
    const std::string long_line = R"({"function":"f","args":[{"shape":[1],"dtype":"int64"},{"str":")" +
                                  std::string(hookscope::detail::record_templates::longest_line, 'x') +
                                  R"("}],"kwargs":[]})";
    std::istringstream in(long_line + "\n" + long_line + "\n" + long_line + "\n");
    hookscope::record_reader reader(in, "in.jsonl");
    record_view view;
    std::size_t read = 0;
    while (reader.next(view)) {
      CHECK_FALSE(view.structure);
      ++read;
    }
    CHECK(read == 3);
  }
  SECTION("lines that never repeat a structure make no template") {
    std::string text;
    for (int i = 0; i < 100; ++i)
      text += R"({"function":"f","args":[{"str":"v)" + std::string(1, 'a' + i % 26) +
              std::string(static_cast<std::size_t>(i / 26), 'z') + R"("}],"kwargs":[]})" + "\n";
    std::istringstream in(text);
    hookscope::record_reader reader(in, "in.jsonl");
    record_view view;
    while (reader.next(view)) CHECK_FALSE(view.structure);
  }
}
