// How a reader tells a document's kind by its head (src/json_head.hpp): the string of one top-level member, read by
// the JSON parser up to that member, against the member a full parse finds; truncated and hostile heads.
#include "../src/json_head.hpp"

#include <boost/json.hpp>
#include <catch2/catch.hpp>

#include <cstdio>
#include <optional>
#include <random>
#include <sstream>
#include <string>

namespace json = boost::json;
using hookscope::detail::leading_member;
using hookscope::detail::member_head;

namespace {

constexpr std::string_view key = "format";
constexpr std::size_t most = 24;
constexpr std::size_t max_depth = 64;

member_head read_head(const std::string& text, std::size_t depth = max_depth) {
  std::stringbuf in(text);
  return leading_member(in, key, most, depth);
}

std::optional<std::string> head_of(const std::string& text, std::size_t depth = max_depth) {
  return read_head(text, depth).value;
}

// JSON text of a random value, with random spacing and keys and strings whose characters are sometimes escaped;
// `member_end` is where the top-level member "format"'s value ends (npos when there is none).
class random_document {
 public:
  explicit random_document(std::uint32_t seed) : random_(seed) {}

  std::string text;
  std::size_t member_end = std::string::npos;
  std::optional<std::string> expected;  // what leading_member_string must answer for the whole text

  void top_object() {
    space();
    text += '{';
    const int others = pick(0, 5);
    const bool with_member = pick(0, 3) != 0;
    const int at = pick(0, others);  // the member's place among the others
    for (int i = 0; i < others + (with_member ? 1 : 0); ++i) {
      if (i > 0) text += ',';
      space();
      if (with_member && i == at) {
        quoted(std::string(key));
        space();
        text += ':';
        space();
        member_value();
      } else {
        quoted(i % 2 == 0 ? "formats" : "f" + std::to_string(i));
        space();
        text += ':';
        value(1);
      }
    }
    space();
    text += '}';
    space();
  }

 private:
  int pick(int low, int high) { return std::uniform_int_distribution<int>(low, high)(random_); }
  void space() {
    static constexpr std::string_view spaces[] = {"", " ", "\n", "\r\n  ", "\t"};
    text += spaces[pick(0, 4)];
  }
  void quoted(const std::string& s) {
    text += '"';
    for (const char c : s) {
      if (pick(0, 3) == 0) {
        char escaped[8];
        std::snprintf(escaped, sizeof escaped, "\\u%04x", static_cast<unsigned char>(c));
        text += escaped;
      } else if (c == '"' || c == '\\') {
        text += '\\';
        text += c;
      } else {
        text += c;
      }
    }
    text += '"';
  }
  std::string word(int length) {
    std::string s;
    for (int i = 0; i < length; ++i) s += "abcdefgh\"\\ x-"[pick(0, 12)];
    return s;
  }
  void member_value() {
    switch (pick(0, 4)) {
      case 0: text += "17"; break;
      case 1: text += "{\"a\":\"hookscope\"}"; break;
      case 2: {
        const std::string s = word(static_cast<int>(most) + 1);  // longer than asked for
        quoted(s);
        break;
      }
      default: {
        const std::string s = pick(0, 1) == 0 ? "hookscope-shapes-summary" : word(pick(0, 20));
        quoted(s);
        expected = s;
      }
    }
    member_end = text.size();
  }
  void value(int depth) {
    space();
    const int kind = depth > 6 ? pick(0, 3) : pick(0, 5);
    if (kind == 0) {
      text += std::to_string(pick(-100, 100)) + (pick(0, 1) == 0 ? ".5e3" : "");
    } else if (kind == 1) {
      text += pick(0, 1) == 0 ? "true" : "null";
    } else if (kind == 2) {
      quoted(word(pick(0, 10)));
    } else if (kind == 3) {
      quoted(std::string(static_cast<std::size_t>(pick(0, 6000)), 'z'));  // spans the reader's blocks
    } else if (kind == 4) {
      text += '[';
      for (int i = 0, n = pick(0, 3); i < n; ++i) {
        if (i > 0) text += ',';
        value(depth + 1);
      }
      text += ']';
    } else {
      text += '{';
      for (int i = 0, n = pick(0, 3); i < n; ++i) {
        if (i > 0) text += ',';
        quoted(i == 0 ? std::string(key) : word(3) + std::to_string(i));  // "format" deeper is not the member
        text += ':';
        value(depth + 1);
      }
      text += '}';
    }
    space();
  }

  std::mt19937 random_;
};

}  // namespace

TEST_CASE("leading_member") {
  SECTION("the member a full parse finds, over random documents, cut anywhere") {
    for (std::uint32_t seed = 0; seed < 2000; ++seed) {
      random_document document(seed);
      document.top_object();
      INFO("seed " << seed << ": " << document.text.substr(0, 300));
      // The generator's answer is the parser's: the document is JSON, and its member is the one written.
      const json::value parsed = json::parse(document.text);
      const json::string* member = parsed.as_object().if_contains(key) ? parsed.at(key).if_string() : nullptr;
      REQUIRE((document.expected.has_value() == (member != nullptr && member->size() <= most)));
      if (document.expected) REQUIRE(*document.expected == std::string_view(*member));

      REQUIRE(head_of(document.text) == document.expected);
      REQUIRE(head_of("\xEF\xBB\xBF" + document.text) == document.expected);
      // Cut: known once the member's value is read, and not before.
      const std::size_t cut =
          std::uniform_int_distribution<std::size_t>(0, document.text.size())(*std::make_unique<std::mt19937>(seed));
      const bool read_whole_member = document.member_end != std::string::npos && cut >= document.member_end;
      REQUIRE(head_of(document.text.substr(0, cut)) == (read_whole_member ? document.expected : std::nullopt));
    }
  }

  SECTION("heads that give no member") {
    const char* const heads[] = {
        "",
        "   \n",
        "[{\"format\":\"x\"}]",
        "\"format\"",
        "17",
        "null",
        "{}",
        "{\"format\":5}",
        "{\"format\":{\"format\":\"x\"}}",
        "{\"format\":[\"x\"]}",
        "{\"a\":{\"format\":\"x\"}}",
        "{\"a\":[{\"format\":\"x\"}],\"b\":1}",
        "{\"a\":01,\"format\":\"x\"}",
        "{\"a\" 1,\"format\":\"x\"}",
        "/*c*/{\"format\":\"x\"}",
        "\xEF\xBB{\"format\":\"x\"}",
        "\xEF\xBB\xBF\xEF\xBB\xBF{\"format\":\"x\"}",
        "{\"format\":\"0123456789012345678901234\"}",  // longer than asked for
        "{\"formatx\":\"x\"}",
        "{\"forma\":\"x\"}",
        "{\"format\\u0000\":\"x\"}",
        "{\"format\":\"x",
        "{\"format\":\"x\\",
        "{\"format\":\"x\\q\"}",
    };
    for (const char* head : heads) {
      INFO(head);
      REQUIRE_FALSE(head_of(head).has_value());
    }
  }

  SECTION("heads that give the member") {
    REQUIRE(head_of("{\"format\":\"x\"}") == "x");
    REQUIRE(head_of("{\"format\":\"x\"} trailing bytes are not read") == "x");
    REQUIRE(head_of("{\"format\":\"x\", \"rest\": [ no JSON here") == "x");
    REQUIRE(head_of("{\"\\u0066orm\\u0061t\":\"\\u0078\"}") == "x");
    REQUIRE(head_of("{\"format\":\"012345678901234567890123\"}") == "012345678901234567890123");
    REQUIRE(head_of("{\"format\":\"\"}") == "");
    REQUIRE(head_of("{\"a\":\"\xFF\xFE not UTF-8\",\"format\":\"x\"}") == "x");  // the document's reader judges it
    REQUIRE(head_of("{\"a\":[[[[{\"b\":{}}]]]],\"format\":\"x\"}") == "x");
    REQUIRE(head_of("{\"format\":\"first\",\"format\":\"second\"}") == "first");
  }

  SECTION("keys and strings that end where a block of the reading ends") {
    for (std::size_t n = 4080; n < 4100; ++n) {
      INFO(n);
      const std::string key_first = "{\"" + std::string(n, 'k') + "\": \"float32\", \"format\": \"x\"}";
      REQUIRE(head_of(key_first) == "x");
      const std::string value_first = "{\"a\":\"" + std::string(n, 'v') + "\", \"format\": \"x\"}";
      REQUIRE(head_of(value_first) == "x");
      REQUIRE(head_of("{\"format\": \"" + std::string(n, 'v') + "\"}") == std::nullopt);
    }
  }

  SECTION("the nesting of the members before it is bounded") {
    const std::string deep = "{\"a\":" + std::string(10, '[') + std::string(10, ']') + ",\"format\":\"x\"}";
    REQUIRE(head_of(deep, 12) == "x");
    REQUIRE_FALSE(head_of(deep, 10).has_value());
  }

  SECTION("a read error propagates") {
    struct failing : std::streambuf {
      int_type underflow() override { throw std::ios_base::failure("EIO"); }
    } in;
    REQUIRE_THROWS_AS(leading_member(in, key, most, max_depth), std::ios_base::failure);
  }

  SECTION("whether the head was JSON as far as the answer") {
    const char* const read[] = {"{}", "[1", "17 x", "{\"format\":5", "{\"a\":1}", "{\"format\":\"x\"", "\"s\""};
    for (const char* head : read) {
      INFO(head);
      REQUIRE(read_head(head).read);
    }
    const char* const not_read[] = {
        "", "{\"a\":01,\"format\":\"x\"}", "{\"a\":1,", "{\"a\" 1}", "\xEF\xBB{}", "{\n\"a\":[1,]"};
    for (const char* head : not_read) {
      INFO(head);
      REQUIRE_FALSE(read_head(head).read);
    }
  }

  SECTION("a first line holding the opening brace alone, as pretty printers begin") {
    REQUIRE(read_head("{\n  \"a\": 1,").brace_alone_first);
    REQUIRE(read_head("\xEF\xBB\xBF  {  \r\n\"a\"").brace_alone_first);
    REQUIRE(read_head("\t{\n").brace_alone_first);
    REQUIRE_FALSE(read_head("{ \"a\": 1,\n").brace_alone_first);
    REQUIRE_FALSE(read_head("{").brace_alone_first);
    REQUIRE_FALSE(read_head("\n{\n").brace_alone_first);
    REQUIRE_FALSE(read_head("[\n").brace_alone_first);
  }
}
