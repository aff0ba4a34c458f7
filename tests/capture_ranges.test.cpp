// The capture of ranges and strings (hookscope/detail/capture_classify.hpp, capture_rules.hpp): captured only when
// iterating them cannot change them or run the program's code (single-pass ranges and views that are not contiguous
// are opaque, and left as they were), and bounded (capture_options::max_elements, max_bytes: an opaque leaf with the
// length and "too_large", decided before anything is copied).
#include "hookscope/capture.hpp"

#include <catch2/catch.hpp>

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <forward_list>
#include <fstream>
#include <iterator>
#include <list>
#include <map>
#include <span>
#include <sstream>
#include <string>
#include <unordered_map>
#include <vector>

#if !defined(__clang__)  // Clang 14 cannot compile libstdc++ 12's views (view_interface)
#include <ranges>
#endif

using hookscope::value;

namespace {

// A single-pass range of a stream's characters (as std::ranges::subrange<std::istreambuf_iterator<char>>).
struct stream_chars {
  std::istreambuf_iterator<char> first;
  std::istreambuf_iterator<char> last;
  std::istreambuf_iterator<char> begin() const { return first; }
  std::istreambuf_iterator<char> end() const { return last; }
};

// A view that calls a function of the program's on each element it gives, counting the calls (as
// std::views::transform would run its function).
int calls = 0;
int counted_twice(int x) {
  ++calls;
  return 2 * x;
}
struct counting_view : std::ranges::view_base {
  std::span<const int> items;
  struct iterator {
    using value_type = int;
    using difference_type = std::ptrdiff_t;
    const int* at = nullptr;
    int operator*() const { return counted_twice(*at); }
    iterator& operator++() {
      ++at;
      return *this;
    }
    iterator operator++(int) {
      iterator before = *this;
      ++at;
      return before;
    }
    bool operator==(const iterator& o) const { return at == o.at; }
  };
  iterator begin() const { return {items.data()}; }
  iterator end() const { return {items.data() + items.size()}; }
};

// A forward range that counts the elements it is asked for (for the bound on the walk of ranges without a size).
struct counted_forward {
  int n;
  mutable int stepped = 0;
  struct iterator {
    using value_type = int;
    using difference_type = std::ptrdiff_t;
    int at = 0;
    const counted_forward* r = nullptr;
    int operator*() const { return at; }
    iterator& operator++() {
      ++at;
      ++r->stepped;
      return *this;
    }
    iterator operator++(int) {
      iterator before = *this;
      ++*this;
      return before;
    }
    bool operator==(const iterator& o) const { return at == o.at; }
  };
  iterator begin() const { return {0, this}; }
  iterator end() const { return {n, this}; }
};

std::size_t count(const auto& range) {
  std::size_t n = 0;
  for (auto it = range.begin(); it != range.end(); ++it) ++n;
  return n;
}

value too_large(std::string type, std::optional<std::uint64_t> length) {
  return value::opaque({std::move(type), false, std::nullopt, false, length, true});
}

}  // namespace

TEST_CASE("ranges: a single-pass input range is an opaque leaf, left for the function to read") {
  SECTION("a stream's characters") {
    std::istringstream in("fourteen chars");
    const stream_chars chars{std::istreambuf_iterator<char>(in), {}};
    STATIC_REQUIRE_FALSE(hookscope::capturable<stream_chars>);
    CHECK(hookscope::capture_value(chars).type() == value::kind::opaque);
    CHECK(count(chars) == 14);  // everything is still there
  }
#if !defined(__clang__)
  SECTION("std::ranges::subrange of std::istreambuf_iterator") {
    std::istringstream in("fourteen chars");
    const std::ranges::subrange<std::istreambuf_iterator<char>, std::istreambuf_iterator<char>> chars(
        std::istreambuf_iterator<char>(in), {});
    CHECK(hookscope::capture_value(chars).type() == value::kind::opaque);
    CHECK(count(chars) == 14);
  }
#endif
  SECTION("std::filesystem::directory_iterator") {
    const std::filesystem::path dir =
        std::filesystem::temp_directory_path() / ("hookscope-ranges-" + std::to_string(::getpid()));
    std::filesystem::create_directories(dir);
    for (const char* name : {"a", "b", "c"}) std::ofstream(dir / name) << name;
    const std::filesystem::directory_iterator entries(dir);
    CHECK(hookscope::capture_value(entries).opaque_type().find("directory_iterator") != std::string::npos);
    std::size_t n = 0;
    for (const auto& entry : entries) n += entry.is_regular_file() ? 1 : 0;
    CHECK(n == 3);
    std::filesystem::remove_all(dir);
  }
}

TEST_CASE("ranges: a view that may run the program's code is an opaque leaf; contiguous views are captured") {
  const std::vector<int> numbers{1, 2, 3};
  SECTION("a transform view: its function is never called") {
    calls = 0;
    const counting_view doubled{{}, numbers};
    STATIC_REQUIRE_FALSE(hookscope::capturable<counting_view>);
    CHECK(hookscope::capture_value(doubled).type() == value::kind::opaque);
    CHECK(hookscope::capture_value(std::vector<counting_view>{doubled}).items()[0].type() == value::kind::opaque);
    CHECK(calls == 0);
  }
#if !defined(__clang__)
  SECTION("std::views::transform, filter, take_while: none of their functions called") {
    int called = 0;
    const auto twice = [&called](int x) {
      ++called;
      return 2 * x;
    };
    const auto odd = [&called](int x) {
      ++called;
      return x % 2 == 1;
    };
    CHECK(hookscope::capture_value(std::views::transform(numbers, twice)).type() == value::kind::opaque);
    CHECK(hookscope::capture_value(std::views::filter(numbers, odd)).type() == value::kind::opaque);
    CHECK(hookscope::capture_value(std::views::take_while(numbers, odd)).type() == value::kind::opaque);
    CHECK(hookscope::capture_value(std::views::iota(0, 3)).type() == value::kind::opaque);
    CHECK(called == 0);
  }
  SECTION("contiguous views: subrange of pointers, ref_view") {
    CHECK(hookscope::capture_value(std::ranges::subrange(numbers.data(), numbers.data() + 2)) == value::list({1, 2}));
    CHECK(hookscope::capture_value(std::views::all(numbers)) == value::list({1, 2, 3}));
  }
#endif
  SECTION("std::span, containers of every kind") {
    CHECK(hookscope::capture_value(std::span<const int>(numbers)) == value::list({1, 2, 3}));
    CHECK(hookscope::capture_value(std::list<int>{1, 2}) == value::list({1, 2}));
    CHECK(hookscope::capture_value(std::forward_list<int>{4}) == value::list({4}));
  }
}

TEST_CASE("maps: dicts when their keys are unique standard strings, else lists of (key, value) tuples") {
  CHECK(hookscope::capture_value(std::map<std::string, int>{{"a", 1}}) == value::dict({{"a", 1}}));
  CHECK(hookscope::capture_value(std::unordered_map<std::string, int>{{"a", 1}}) == value::dict({{"a", 1}}));
  // A dict may not repeat a key (the readers refuse one that does): a multimap's keys repeat.
  CHECK(hookscope::capture_value(std::multimap<std::string, int>{{"yes", 1}, {"yes", 2}}) ==
        value::list({value::tuple({"yes", 1}), value::tuple({"yes", 2})}));
  const value unordered = hookscope::capture_value(std::unordered_multimap<std::string, int>{{"yes", 1}, {"yes", 2}});
  CHECK(unordered.items().size() == 2);
  CHECK(unordered.items()[0].items()[0] == value("yes"));
  CHECK(hookscope::value_from_json(hookscope::to_json(unordered)) == unordered);
}

TEST_CASE("capture_options::max_elements and max_bytes") {
  SECTION("the defaults") {
    const hookscope::capture_options defaults;
    CHECK(defaults.max_elements == 262'144);
    CHECK(defaults.max_bytes == 1'048'576);
    CHECK_FALSE(defaults.read_pointee);
  }
  SECTION("a range over the bound: its length, too_large; at the bound: captured") {
    const std::vector<int> three{1, 2, 3};
    CHECK(hookscope::capture_value(three, {.max_elements = 3}) == value::list({1, 2, 3}));
    const value left_out = hookscope::capture_value(three, {.max_elements = 2});
    CHECK(left_out == too_large(std::string(hookscope::detail::type_name<std::vector<int>>()), 3));
    CHECK(hookscope::to_json(left_out).ends_with(R"(,"length":3,"too_large":true})"));
    CHECK(hookscope::value_from_json(hookscope::to_json(left_out)) == left_out);
    CHECK(hookscope::capture_value(std::vector<int>(300'000)).as_opaque().length == 300'000);  // the default bound
  }
  SECTION("strings, bytes, dicts, char arrays") {
    CHECK(hookscope::capture_value(std::string("abcd"), {.max_bytes = 4}) == value("abcd"));
    CHECK(hookscope::capture_value(std::string("abcd"), {.max_bytes = 3}).as_opaque().length == 4);
    CHECK(hookscope::capture_value(std::string_view("abcd"), {.max_bytes = 3}).as_opaque().too_large);
    const std::vector<std::byte> bytes(5);
    CHECK(hookscope::capture_value(bytes, {.max_bytes = 4}).as_opaque().length == 5);
    const std::map<std::string, int> dict{{"a", 1}, {"b", 2}};
    CHECK(hookscope::capture_value(dict, {.max_elements = 1}).as_opaque().length == 2);
    CHECK(hookscope::capture_value(dict, {.max_bytes = 1}).as_opaque().too_large);  // its keys take 2 bytes
    const char name[8] = "relu";
    CHECK(hookscope::capture_value(name, {.max_bytes = 3}).as_opaque().length == 4);
    CHECK(hookscope::capture_value(std::filesystem::path("/a/b"), {.max_bytes = 3}).as_opaque().length == 4);
  }
  SECTION("one budget for the whole value: what the parts before took is gone") {
    const std::vector<std::vector<int>> rows{{1, 2}, {3, 4}, {5, 6}};
    // 3 rows + 2 + 2 elements fit in 7; the third row's 2 do not.
    const value captured = hookscope::capture_value(rows, {.max_elements = 7});
    CHECK(captured.items()[1] == value::list({3, 4}));
    CHECK(captured.items()[2].as_opaque().length == 2);
    const value strings = hookscope::capture_value(std::vector<std::string>{"abc", "de", "f"}, {.max_bytes = 5});
    CHECK(strings ==
          value::list({"abc", "de", too_large(std::string(hookscope::detail::type_name<std::string>()), 1)}));
  }
  SECTION("a forward range without a size is walked at most bound + 1 elements") {
    const counted_forward huge{1'000'000};
    const value captured = hookscope::capture_value(huge, {.max_elements = 10});
    CHECK(captured.as_opaque().too_large);
    CHECK_FALSE(captured.as_opaque().length.has_value());  // not known without walking it all
    CHECK(huge.stepped <= 11);
    const counted_forward small{3};
    CHECK(hookscope::capture_value(small, {.max_elements = 3}) == value::list({0, 1, 2}));
  }
}
