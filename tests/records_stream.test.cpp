// record_reader reading its stream: by what the stream holds (a file by blocks), never waiting past a line (a pipe's
// records as they come), keeping the records a failing stream gave, whatever the line limit.
#include "hookscope/records.hpp"

#include <catch2/catch.hpp>

#include <cstddef>
#include <istream>
#include <limits>
#include <sstream>
#include <stdexcept>
#include <streambuf>
#include <string>
#include <system_error>
#include <vector>

namespace {

std::string line(std::size_t i, std::size_t text_bytes = 1) {
  return R"({"function":"f","args":[{"shape":[)" + std::to_string(i + 1) + R"(],"dtype":"float32"},{"str":")" +
         std::string(text_bytes, 'a') + R"("}],"kwargs":[]})";
}

// Serves `lines` one underflow at a time, as a pipe whose writer sends a line and waits; `served` counts them. With
// `fail_at`, the underflow that would serve that line gives half of it and then throws, as a device failing mid-read.
class line_by_line : public std::streambuf {
 public:
  explicit line_by_line(std::vector<std::string> lines, std::size_t fail_at = std::numeric_limits<std::size_t>::max())
      : lines_(std::move(lines)), fail_at_(fail_at) {}
  std::size_t served = 0;

 protected:
  int_type underflow() override {
    if (gptr() != egptr()) return traits_type::to_int_type(*gptr());
    if (served == lines_.size()) return traits_type::eof();
    if (served == fail_at_) {
      if (half_given_) throw std::runtime_error("the device failed");
      half_given_ = true;
      current_ = lines_[served].substr(0, lines_[served].size() / 2);
    } else {
      current_ = lines_[served++] + "\n";
    }
    setg(current_.data(), current_.data(), current_.data() + current_.size());
    return traits_type::to_int_type(current_[0]);
  }

 private:
  std::vector<std::string> lines_;
  std::size_t fail_at_;
  bool half_given_ = false;
  std::string current_;
};

}  // namespace

TEST_CASE("record_reader: reading the stream") {
  SECTION("records that come through a pipe are read as they come, not once a block has come") {
    line_by_line source({line(0), line(1), line(2)});
    std::istream in(&source);
    hookscope::record_reader reader(in, "pipe");
    hookscope::call_record r;
    REQUIRE(reader.next(r));
    CHECK(source.served == 1);  // the first record, with the writer's second line not yet asked for
    REQUIRE(reader.next(r));
    CHECK(source.served == 2);
    REQUIRE(reader.next(r));
    CHECK_FALSE(reader.next(r));
  }
  SECTION("a stream failing mid-line: the records before it, then the error naming the last line read") {
    line_by_line source({line(0), line(1), line(2), line(3), line(4), line(5), line(6)}, 5);
    std::istream in(&source);
    hookscope::record_reader reader(in, "device");
    hookscope::call_record r;
    std::size_t read = 0;
    try {
      while (reader.next(r)) ++read;
      FAIL("no error");
    } catch (const std::system_error& e) {
      CHECK(std::string(e.what()).find("cannot read device after line 5") != std::string::npos);
    }
    CHECK(read == 5);
  }
  SECTION("a limit of SIZE_MAX (no limit) reads lines longer than a block") {
    const std::string text = line(0, 300'000) + "\n" + line(1) + "\n";
    std::istringstream in(text);
    hookscope::record_reader reader(in, "long");
    reader.set_max_line_bytes(std::numeric_limits<std::size_t>::max());
    hookscope::call_record r;
    REQUIRE(reader.next(r));
    CHECK(r.inputs.args[1].as_string().size() == 300'000);
    REQUIRE(reader.next(r));
    CHECK_FALSE(reader.next(r));
  }
  SECTION("lines across block boundaries, the last one cut: every line read once, in order") {
    for (const std::size_t text : {std::size_t{1}, std::size_t{1000}, std::size_t{262'100}}) {
      std::string all;
      for (std::size_t i = 0; i < 40; ++i) all += line(i, text + i) + "\n";
      all += line(40).substr(0, 20);
      std::istringstream in(all);
      hookscope::record_reader reader(in, "blocks");
      hookscope::call_record r;
      std::size_t i = 0;
      while (reader.next(r)) {
        CHECK(r.inputs.args[0].as_tensor().shape[0] == static_cast<std::int64_t>(i + 1));
        CHECK(r.inputs.args[1].as_string().size() == text + i);
        ++i;
      }
      CHECK(i == 40);
      CHECK(reader.warnings().size() == 1);  // the cut last line
    }
  }
}
