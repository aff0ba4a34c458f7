// The record line limit (records.hpp: max_record_line_bytes): to_record_line elides a record's largest values so that
// its line fits, and record_reader skips a longer line with a warning. Part of the `records` test.
#include "hookscope/records.hpp"

#include "hookscope/recorder.hpp"
#include "hookscope/value_errors.hpp"

#include <catch2/catch.hpp>

#include "random_values.hpp"

#include <sys/resource.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <fstream>
#include <limits>
#include <optional>
#include <random>
#include <sstream>
#include <streambuf>
#include <string>
#include <vector>

using hookscope::call_record;
using hookscope::dtype;
using hookscope::tensor_spec;
using hookscope::value;

namespace {

constexpr std::size_t unlimited = std::numeric_limits<std::size_t>::max();

call_record record_of(hookscope::value_fields kwargs, std::optional<value> result = std::nullopt) {
  call_record r;
  r.function = "f";
  r.inputs.kwargs = std::move(kwargs);
  r.result = std::move(result);
  return r;
}

std::size_t full_size(const call_record& r) { return hookscope::to_record_line(r, unlimited).size(); }

value marker(std::string kind, std::optional<std::uint64_t> length) {
  hookscope::opaque_leaf leaf;
  leaf.type_name = std::move(kind);
  leaf.length = length;
  leaf.too_large = true;
  return value::opaque(std::move(leaf));
}

value ints(std::size_t n) {
  std::vector<value> items;
  for (std::size_t i = 0; i < n; ++i) items.emplace_back(static_cast<std::int64_t>(i));
  return value::list(std::move(items));
}

value raw_bytes(std::size_t n) {
  const std::vector<std::byte> raw(n, std::byte{7});
  return value::bytes(raw);
}

tensor_spec with_data(std::vector<std::int64_t> shape, dtype type) {
  tensor_spec t{std::move(shape), type};
  t.data.assign(static_cast<std::size_t>(t.numel()) * hookscope::dtype_size(type), std::byte{1});
  return t;
}

// The line written under `limit`: at most that long, and read back by parse_record and record_reader (with that limit).
call_record written_under(const call_record& r, std::size_t limit) {
  const std::string line = hookscope::to_record_line(r, limit);
  CHECK(line.size() <= limit);
  const call_record back = hookscope::parse_record(line);
  std::istringstream in(line + "\n");
  hookscope::record_reader reader(in, "limit.jsonl");
  reader.set_max_line_bytes(limit);
  call_record read;
  REQUIRE(reader.next(read));
  CHECK(reader.warnings().empty());
  CHECK(hookscope::to_record_line(read, unlimited) == line);
  return back;
}

//=== elisions, as the record format describes them ===//

// What docs/record_format.md says an elided value is written as; nothing for the kinds never elided.
std::optional<value> documented_marker(const value& v) {
  switch (v.type()) {
    case value::kind::string: return marker("str", v.as_string().size());
    case value::kind::bytes: return marker("bytes", v.as_bytes().size());
    case value::kind::tuple: return marker("tuple", v.items().size());
    case value::kind::list: return marker("list", v.items().size());
    case value::kind::dict: return marker("dict", v.fields().size());
    case value::kind::structure: return marker("struct " + v.struct_name(), v.fields().size());
    case value::kind::variant: return marker("variant", std::nullopt);
    case value::kind::tensor: {
      if (v.as_tensor().data.empty()) return std::nullopt;
      tensor_spec t{v.as_tensor().shape, v.as_tensor().dtype};
      t.data_too_large = true;
      return value(t);
    }
    default: return std::nullopt;
  }
}

// `back` is `original` with some values elided, each as its documented marker; counts them.
void check_elided(const value& original, const value& back, std::size_t& elisions) {
  if (original == back) return;
  if (const auto m = documented_marker(original); m && back == *m) {
    ++elisions;
    return;
  }
  REQUIRE(original.type() == back.type());
  REQUIRE(is_container(original));
  if (original.type() == value::kind::variant) {
    REQUIRE(original.variant_index() == back.variant_index());
    check_elided(original.alternative(), back.alternative(), elisions);
  } else if (is_sequence(original)) {
    REQUIRE(original.items().size() == back.items().size());
    for (std::size_t i = 0; i < original.items().size(); ++i)
      check_elided(original.items()[i], back.items()[i], elisions);
  } else {
    if (original.type() == value::kind::structure) REQUIRE(original.struct_name() == back.struct_name());
    REQUIRE(original.fields().size() == back.fields().size());
    for (std::size_t i = 0; i < original.fields().size(); ++i) {
      REQUIRE(original.fields()[i].first == back.fields()[i].first);
      check_elided(original.fields()[i].second, back.fields()[i].second, elisions);
    }
  }
}

std::size_t elisions_between(const call_record& original, const call_record& back) {
  REQUIRE(back.function == original.function);
  REQUIRE(back.parameters == original.parameters);
  REQUIRE(back.threw == original.threw);
  REQUIRE(back.latency_ns == original.latency_ns);
  REQUIRE(back.inputs.args.size() == original.inputs.args.size());
  REQUIRE(back.inputs.kwargs.size() == original.inputs.kwargs.size());
  REQUIRE(back.result.has_value() == original.result.has_value());
  std::size_t n = 0;
  for (std::size_t i = 0; i < original.inputs.args.size(); ++i) {
    check_elided(original.inputs.args[i], back.inputs.args[i], n);
  }
  for (std::size_t i = 0; i < original.inputs.kwargs.size(); ++i) {
    REQUIRE(back.inputs.kwargs[i].first == original.inputs.kwargs[i].first);
    check_elided(original.inputs.kwargs[i].second, back.inputs.kwargs[i].second, n);
  }
  if (original.result) check_elided(*original.result, *back.result, n);
  return n;
}

}  // namespace

TEST_CASE("to_record_line: a record over the line limit is written with its largest values elided") {
  constexpr std::size_t limit = 4096;

  SECTION("one huge list: the list is a marker with its length, the small arguments stay") {
    const call_record r = record_of({{"values", ints(5000)}, {"n", 3}, {"name", "model"}});
    const call_record back = written_under(r, limit);
    CHECK(back.inputs.kwargs == hookscope::value_fields{{"values", marker("list", 5000)}, {"n", 3}, {"name", "model"}});
    CHECK(hookscope::to_record_line(r, limit) ==
          R"({"function":"f","args":[],"kwargs":[["values",{"opaque":"list","length":5000,"too_large":true}],)"
          R"(["n",{"int":3}],["name",{"str":"model"}]]})");
  }
  SECTION("a huge string and huge bytes: their byte counts") {
    const call_record r = record_of({{"text", std::string(100000, 'x')}, {"raw", raw_bytes(2000)}, {"k", 1}});
    CHECK(written_under(r, limit).inputs.kwargs ==
          hookscope::value_fields{{"text", marker("str", 100000)}, {"raw", raw_bytes(2000)}, {"k", 1}});
    const call_record both = record_of({{"text", std::string(100000, 'x')}, {"raw", raw_bytes(100000)}});
    CHECK(written_under(both, limit).inputs.kwargs ==
          hookscope::value_fields{{"text", marker("str", 100000)}, {"raw", marker("bytes", 100000)}});
  }
  SECTION("a struct with one huge field among small ones keeps the small ones") {
    const value cache = value::structure(
        "KVCache", {{"layers", 32}, {"keys", ints(10000)}, {"dtype", "float16"}, {"shape", tensor_spec{{1, 8}}}});
    const call_record back = written_under(record_of({{"cache", cache}, {"step", 7}}), limit);
    CHECK(back.inputs.kwargs[0].second ==
          value::structure(
              "KVCache",
              {{"layers", 32}, {"keys", marker("list", 10000)}, {"dtype", "float16"}, {"shape", tensor_spec{{1, 8}}}}));
    CHECK(back.inputs.kwargs[1].second == value(7));
  }
  SECTION("a huge value deep in containers: only it is elided") {
    const value deep = value::tuple({1, value::dict({{"a", "x"}, {"b", value::variant(1, std::string(9000, 'y'))}})});
    const call_record back = written_under(record_of({{"deep", deep}}), limit);
    CHECK(back.inputs.kwargs[0].second ==
          value::tuple({1, value::dict({{"a", "x"}, {"b", value::variant(1, marker("str", 9000))}})}));
  }
  SECTION("a tensor with huge data keeps its shape and dtype, its data marked too large") {
    const call_record r = record_of({{"x", with_data({64, 64}, dtype::float32)}, {"y", with_data({2}, dtype::int8)}});
    const call_record back = written_under(r, limit);
    tensor_spec left{{64, 64}, dtype::float32};
    left.data_too_large = true;
    CHECK(back.inputs.kwargs == hookscope::value_fields{{"x", left}, {"y", with_data({2}, dtype::int8)}});
    CHECK(hookscope::to_record_line(r, limit).find(
              R"(["x",{"shape":[64,64],"dtype":"float32","data_too_large":true}])") != std::string::npos);
  }
  SECTION("many medium arguments that only together exceed the limit: the largest go, the others stay") {
    hookscope::value_fields kwargs;
    for (int i = 0; i < 10; ++i) kwargs.emplace_back("s" + std::to_string(i), std::string(500 + 10 * i, 'a'));
    const call_record r = record_of(kwargs);
    CHECK(full_size(r) == 5667);  // each string alone is far under the limit
    const call_record back = written_under(r, limit);
    CHECK(elisions_between(r, back) == 3);  // 1,571 bytes to save: the three longest save 1,629, two 1,096
    for (int i = 0; i < 7; ++i) CHECK(back.inputs.kwargs[i] == kwargs[i]);
    for (int i = 7; i < 10; ++i) CHECK(back.inputs.kwargs[i].second == marker("str", 500 + 10 * i));
  }
  SECTION("a list of a few large strings keeps those it can; a list of many small values goes whole") {
    const value few = value::list({std::string(3000, 'a'), std::string(2000, 'b'), std::string(100, 'c')});
    CHECK(written_under(record_of({{"few", few}}), limit).inputs.kwargs[0].second ==
          value::list({marker("str", 3000), std::string(2000, 'b'), std::string(100, 'c')}));
    std::vector<value> many(2000, value(std::string(4, 'd')));
    CHECK(written_under(record_of({{"many", value::list(many)}}), limit).inputs.kwargs[0].second ==
          marker("list", 2000));
  }
  SECTION("the result, positional arguments and a struct elided whole") {
    call_record r = record_of({}, value::structure("Out", {{"a", ints(400)}, {"b", ints(400)}, {"c", ints(400)}}));
    r.inputs.args = {ints(10), std::string(300, 'p')};
    const call_record back = written_under(r, 2000);
    CHECK(back.result == marker("struct Out", 3));
    CHECK(back.inputs.args == r.inputs.args);
  }
  SECTION("values that have nothing to give up are never elided: numbers, tensors without data, opaque leaves") {
    hookscope::value_fields kwargs;
    for (int i = 0; i < 400; ++i)
      kwargs.emplace_back("k" + std::to_string(i), i % 2 ? value(i) : value(tensor_spec{{i}}));
    const call_record r = record_of(kwargs);
    CHECK_THROWS_WITH(hookscope::to_record_line(r, limit),
                      Catch::StartsWith("hookscope: to_record_line: the record takes ") &&
                          Catch::Contains("more than the line limit of 4096 bytes"));
  }
}

TEST_CASE("to_record_line: names and the signature that alone exceed the limit are refused") {
  call_record r = record_of({{"text", std::string(10000, 'x')}});
  r.function = std::string(5000, 'f');
  CHECK_THROWS_AS(hookscope::to_record_line(r, 4096), hookscope::format_error);
  r.function = "f";
  r.parameters = hookscope::parameter_list{{"text", hookscope::parameter_kind::positional_or_keyword, ints(2000)}};
  CHECK_THROWS_AS(hookscope::to_record_line(r, 4096), hookscope::format_error);  // defaults are kept whole
  CHECK(written_under(r, 30000).inputs.kwargs[0].second == marker("str", 10000));
}

TEST_CASE("to_record_line: a line exactly at the limit and a byte either side") {
  const call_record r = record_of({{"a", std::string(1000, 'a')}, {"n", 2}}, std::string(300, 'r'));
  const std::string full = hookscope::to_record_line(r, unlimited);
  const std::size_t size = full.size();
  CHECK(hookscope::to_record_line(r) == full);
  CHECK(hookscope::to_record_line(r, size) == full);
  CHECK(hookscope::to_record_line(r, size + 1) == full);
  const call_record under = written_under(r, size - 1);
  CHECK(under.inputs.kwargs[0].second == marker("str", 1000));  // the largest value, although one byte would do
  CHECK(under.result == r.result);
}

TEST_CASE("to_record_line: max_record_line_bytes (64 MiB) on real records over it") {
  STATIC_REQUIRE(hookscope::max_record_line_bytes == std::size_t{64} << 20);
  STATIC_REQUIRE(hookscope::record_reader::default_max_line_bytes == hookscope::max_record_line_bytes);
  SECTION("a 70 MiB string beside small arguments") {
    const call_record r = record_of({{"text", std::string(std::size_t{70} << 20, 't')}, {"n", 1}});
    const std::string line = hookscope::to_record_line(r);
    CHECK(line == R"({"function":"f","args":[],"kwargs":[["text",{"opaque":"str","length":73400320,"too_large":true}],)"
                  R"(["n",{"int":1}]]})");
  }
  SECTION("five 15 MiB strings: one goes, the line of ~60 MiB reads back with the default limit") {
    hookscope::value_fields kwargs;
    for (char c = 'a'; c < 'f'; ++c) kwargs.emplace_back(std::string(1, c), std::string(std::size_t{15} << 20, c));
    const call_record r = record_of(kwargs);
    const std::string line = hookscope::to_record_line(r);
    CHECK(line.size() <= hookscope::max_record_line_bytes);
    CHECK(line.size() > std::size_t{60} << 20);
    std::istringstream in(line + "\n");
    hookscope::record_reader reader(in, "big.jsonl");
    call_record back;
    REQUIRE(reader.next(back));
    CHECK(reader.warnings().empty());
    CHECK(elisions_between(r, back) == 1);
    CHECK(back.inputs.kwargs[0].second == marker("str", std::size_t{15} << 20));
    CHECK(back.inputs.kwargs[4] == kwargs[4]);
  }
}

namespace big {
namespace impl {
inline std::size_t measure(const std::string& text, int n) { return text.size() + static_cast<std::size_t>(n); }
}  // namespace impl
HOOKSCOPE_OBSERVABLE(measure, impl::measure, text, n);
}  // namespace big

#if HOOKSCOPE_ENABLED
TEST_CASE("call_recorder::to_jsonl: a call over the line limit is written elided") {
  hookscope::call_recorder rec(big::measure);
  const std::string text(std::size_t{70} << 20, 't');
  (void)big::measure(text, 3);
  (void)big::measure("short", 4);
  const std::string jsonl = rec.to_jsonl();
  std::istringstream in(jsonl);
  hookscope::record_reader reader(in, "measure.jsonl");
  call_record r;
  REQUIRE(reader.next(r));
  CHECK(reader.line() == 1);
  REQUIRE(r.inputs.kwargs.size() == 2);
  // An opaque leaf too large to hold, whether the capture or the writer left the text out.
  const value& elided = r.inputs.kwargs[0].second;
  REQUIRE(elided.type() == value::kind::opaque);
  CHECK(elided.as_opaque().too_large);
  CHECK(elided.as_opaque().length == std::uint64_t{70} << 20);
  CHECK(r.inputs.kwargs[1].second == value(3));
  REQUIRE(reader.next(r));
  CHECK(r.inputs.kwargs == hookscope::value_fields{{"text", "short"}, {"n", 4}});
  CHECK_FALSE(reader.next(r));
  CHECK(reader.warnings().empty());
}
#endif

namespace {

// Values with large parts: long strings and bytes, tensors with data, long lists, nested in containers, beside the
// small values of every kind.
value random_large_value(std::mt19937_64& rng, int depth) {
  auto pick = [&](std::uint64_t n) { return rng() % n; };
  switch (pick(depth > 0 ? 9 : 5)) {
    case 0: {
      std::string s(pick(3000), 'a');
      for (char& c : s) c = static_cast<char>(pick(8) == 0 ? pick(256) : 'a' + pick(26));  // escapes, base64
      return value(std::move(s));
    }
    case 1: return raw_bytes(pick(3000));
    case 2: return with_data({static_cast<std::int64_t>(pick(300))}, pick(2) ? dtype::float32 : dtype::uint8);
    case 3: return ints(pick(500));
    case 4: return random_values::random_value(rng, 2, {.nan = false});
    default: break;
  }
  std::vector<value> items;
  hookscope::value_fields fields;
  for (std::uint64_t i = pick(5); i > 0; --i) {
    items.push_back(random_large_value(rng, depth - 1));
    fields.emplace_back("f" + std::to_string(i), random_large_value(rng, depth - 1));
  }
  switch (pick(4)) {
    case 0: return value::list(std::move(items));
    case 1: return value::dict(std::move(fields));
    case 2: return value::structure("S" + std::to_string(pick(3)), std::move(fields));
    default: return value::variant(pick(3), random_large_value(rng, depth - 1));
  }
}

}  // namespace

TEST_CASE("to_record_line: random records under random limits (property)") {
  // Written line <= limit; it reads back to the record with some values replaced by their documented markers; nothing
  // is elided from a record that fits; a refusal only when eliding every value whole would not fit either.
  std::mt19937_64 rng(Catch::rngSeed());
  std::size_t elided = 0, refused = 0;
  for (int i = 0; i < 600; ++i) {
    call_record r;
    r.function = "f" + std::to_string(i % 3);
    for (std::uint64_t k = rng() % 6; k > 0; --k)
      r.inputs.kwargs.emplace_back("k" + std::to_string(k), random_large_value(rng, 3));
    for (std::uint64_t k = rng() % 3; k > 0; --k) r.inputs.args.push_back(random_large_value(rng, 3));
    if (rng() % 2) r.result = random_large_value(rng, 3);
    if (rng() % 4 == 0)
      r.parameters = hookscope::parameter_list{{"k1", hookscope::parameter_kind::positional_or_keyword, 0.5}};
    r.latency_ns = static_cast<std::int64_t>(rng() % 1000);
    const std::string full = hookscope::to_record_line(r, unlimited);
    const std::size_t limit = full.size() / 4 + static_cast<std::size_t>(rng() % (full.size() + 20));
    INFO("record " << i << ", limit " << limit << ": " << full);
    std::string line;
    try {
      line = hookscope::to_record_line(r, limit);
    } catch (const hookscope::format_error&) {
      ++refused;
      call_record whole = r;  // every value that has a marker written as it
      auto elide = [](value& v) {
        if (const auto m = documented_marker(v); m && hookscope::to_json(*m).size() < hookscope::to_json(v).size())
          v = *m;
      };
      for (value& a : whole.inputs.args) elide(a);
      for (auto& kw : whole.inputs.kwargs) elide(kw.second);
      if (whole.result) elide(*whole.result);
      CHECK(full_size(whole) > limit);
      continue;
    }
    REQUIRE(line.size() <= limit);
    const call_record back = hookscope::parse_record(line);
    const std::size_t n = elisions_between(r, back);
    if (full.size() <= limit) {
      CHECK(line == full);
    } else {
      CHECK(n > 0);
      ++elided;
    }
    CHECK(hookscope::to_record_line(back, limit) == line);  // the elided record fits as it is
    CHECK(hookscope::to_record_line(r, limit) == line);     // deterministic
  }
  CHECK(elided > 100);
  CHECK(refused < 100);
}

namespace {

const std::string small_line = R"({"function":"f","args":[],"kwargs":[["n",{"int":1}]]})";

// A record line of exactly `size` bytes.
std::string line_of_size(std::size_t size) {
  const std::string start = R"({"function":"f","args":[],"kwargs":[["s",{"str":")";
  const std::string end = R"("}]]})";
  return start + std::string(size - start.size() - end.size(), 'x') + end;
}

struct read_result {
  std::vector<call_record> records;
  std::vector<std::size_t> lines;
  std::vector<std::string> warnings;
};

read_result read_with_limit(const std::string& text, std::size_t limit) {
  std::istringstream in(text);
  hookscope::record_reader reader(in, "in.jsonl");
  reader.set_max_line_bytes(limit);
  read_result out;
  call_record r;
  while (reader.next(r)) {
    out.records.push_back(r);
    out.lines.push_back(reader.line());
  }
  out.warnings = reader.warnings();
  return out;
}

std::string skipped(std::size_t line, std::size_t length, std::size_t limit) {
  return "in.jsonl:" + std::to_string(line) + ": skipped a line of " + std::to_string(length) +
         " bytes, longer than the reader's limit of " + std::to_string(limit) +
         " (hookscope::max_record_line_bytes, which hookscope's writers keep to)";
}

std::string read_error_with_limit(const std::string& text, std::size_t limit) {
  try {
    (void)read_with_limit(text, limit);
  } catch (const hookscope::record_error& e) {
    return std::string(e.sentence());
  }
  return "";
}

// A stream of `size` bytes: `start`, then `fill` repeated, then "\n"; made as it is read (nothing held).
class generated_line : public std::streambuf {
 public:
  generated_line(std::string start, char fill, std::size_t size)
      : start_(std::move(start)), chunk_(1 << 16, fill), left_(size) {}

 protected:
  int_type underflow() override {
    if (left_ == 0) {
      if (newline_done_) return traits_type::eof();
      newline_done_ = true;
      setg(&newline_, &newline_, &newline_ + 1);
      return '\n';
    }
    std::string& from = first_ ? start_ : chunk_;
    first_ = false;
    const std::size_t n = std::min(left_, from.size());
    left_ -= n;
    setg(from.data(), from.data(), from.data() + n);
    return traits_type::to_int_type(from[0]);
  }

 private:
  std::string start_, chunk_;
  std::size_t left_;
  bool first_ = true, newline_done_ = false;
  char newline_ = '\n';
};

long max_resident_kib() {
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  return usage.ru_maxrss;
}

}  // namespace

TEST_CASE("record_reader: a line longer than the limit is skipped with a warning, the other lines read") {
  constexpr std::size_t limit = 4096;
  SECTION("in the middle of a stream: the next lines read, line numbers kept") {
    const std::string text =
        small_line + "\n" + line_of_size(limit + 1) + "\n" + small_line + "\n\n" + small_line + "\n";
    const read_result read = read_with_limit(text, limit);
    CHECK(read.lines == std::vector<std::size_t>{1, 3, 5});
    CHECK(read.warnings == std::vector<std::string>{skipped(2, limit + 1, limit)});
  }
  SECTION("a line of exactly the limit reads, also with a CR (CRLF) or a byte-order mark that are no part of it") {
    const std::string exact = line_of_size(limit);
    CHECK(read_with_limit(exact + "\n" + exact + "\r\n", limit).records.size() == 2);
    CHECK(read_with_limit("\xEF\xBB\xBF" + exact + "\r\n", limit).records.size() == 1);
    const read_result crlf =
        read_with_limit(small_line + "\r\n" + line_of_size(limit + 1) + "\r\n" + small_line + "\r\n", limit);
    CHECK(crlf.lines == std::vector<std::size_t>{1, 3});
    CHECK(crlf.warnings == std::vector<std::string>{skipped(2, limit + 1, limit)});
  }
  SECTION("much longer than a read's chunk: dropped as it is read, its length counted") {
    const read_result read = read_with_limit(small_line + "\n" + line_of_size(1'000'000) + "\n" + small_line, limit);
    CHECK(read.lines == std::vector<std::size_t>{1, 3});
    CHECK(read.warnings == std::vector<std::string>{skipped(2, 1'000'000, limit)});
  }
  SECTION("the last line, without its newline") {
    for (const std::size_t size : {limit + 1, std::size_t{300'000}}) {
      const read_result read = read_with_limit(small_line + "\n" + line_of_size(size), limit);
      CHECK(read.lines == std::vector<std::size_t>{1});
      CHECK(read.warnings == std::vector<std::string>{skipped(2, size, limit)});
    }
  }
  SECTION("a reader with a higher limit reads the line") {
    CHECK(read_with_limit(line_of_size(limit + 1), limit + 1).records.size() == 1);
  }
  SECTION("a line of 256 MiB is skipped in bounded memory") {
    const long before = max_resident_kib();
    generated_line source(R"({"function":"f","args":[],"kwargs":[["s",{"str":")", 'x', std::size_t{256} << 20);
    std::istream in(&source);
    hookscope::record_reader reader(in, "in.jsonl");
    reader.set_max_line_bytes(std::size_t{1} << 20);
    call_record r;
    CHECK_FALSE(reader.next(r));
    REQUIRE(reader.warnings().size() == 1);
    CHECK_THAT(reader.warnings()[0], Catch::StartsWith("in.jsonl:1: skipped a line of 268435456 bytes"));
    CHECK(max_resident_kib() - before < 64 * 1024);  // never the line: a few MiB of buffers at most
  }
}

TEST_CASE("record_reader: a stream that is not text ends with an error, not a loop") {
  constexpr std::size_t limit = 4096;
  const std::string start = R"({"function":"f","args":[],"kwargs":[["s",{"str":")";
  SECTION("/dev/zero: the first byte, once a line is longer than the limit") {
    std::ifstream zero("/dev/zero", std::ios::binary);
    REQUIRE(zero);
    hookscope::record_reader reader(zero, "/dev/zero");
    call_record r;
    CHECK_THROWS_WITH(reader.next(r),
                      "hookscope: /dev/zero:1: the line holds the byte 0x00 at column 1, which JSON text never "
                      "holds, and is longer than 67108864 bytes, the reader's limit: not a record file");
  }
  SECTION("a NUL byte, a byte UTF-8 never uses, read while the line is skipped") {
    CHECK(read_error_with_limit(small_line + "\n" + start + std::string(200'000, 'x') + '\0' + "\n", limit) ==
          "in.jsonl:2: the line holds the byte 0x00 at column " + std::to_string(start.size() + 200'001) +
              ", which JSON text never holds, and is longer than 4096 bytes, the reader's limit: not a record file");
    CHECK_THAT(
        read_error_with_limit(start + std::string(5000, 'x') + "\xff", limit),
        Catch::StartsWith("in.jsonl:1: the line holds the byte 0xff at column " + std::to_string(start.size() + 5001)));
    CHECK_THAT(
        read_error_with_limit(start + std::string(5000, 'x') + "\x01\n", limit),
        Catch::StartsWith("in.jsonl:1: the line holds the byte 0x01 at column " + std::to_string(start.size() + 5001)));
  }
  SECTION("a long line that does not start as a record does") {
    CHECK(read_error_with_limit("  [" + std::string(5000, 'x') + "\n", limit) ==
          "in.jsonl:1: the line starts with the byte 0x5b, not the '{' of a record, and is longer than 4096 bytes, "
          "the reader's limit: not a record file");
  }
}
