// The one-pass JSON document parser every reader uses (src/json_document.hpp): the document Boost.JSON's own parser
// builds, keys given twice found as the text is read (as json_key_checker finds them), doubles read exactly, and the
// same errors as Boost.JSON's parser for text that is no JSON document.
#include "../src/json_document.hpp"
#include "../src/json_reader.hpp"

#include <boost/json.hpp>
#include <catch2/catch.hpp>

#include <charconv>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <random>
#include <string>
#include <vector>

namespace json = boost::json;
using hookscope::detail::json_document_parser;
using hookscope::detail::json_key_checker;

namespace {

json::parse_options deep_options() {
  json::parse_options o;
  o.max_depth = 64;
  return o;
}

struct parsed {
  boost::system::error_code ec;
  std::size_t used = 0;
  bool repeated_key = false;
  json::value doc;
};

parsed parse(std::string_view text) {
  json_document_parser parser(deep_options());
  parsed out;
  out.used = parser.write(text, out.ec);
  if (!out.ec) {
    out.repeated_key = parser.repeated_key();
    out.doc = parser.release();
  }
  return out;
}

// A random document: objects whose keys come from a small set (so that some repeat), some spelled with \u escapes;
// arrays; integers; doubles written with 17 significant digits or in their shortest form, whose exact reading is
// known. `doubles` receives each double in document order.
class random_document {
 public:
  explicit random_document(std::uint32_t seed) : rng_(seed) {}

  std::string make(std::vector<double>& doubles) {
    std::string out;
    value(out, doubles, 0);
    return out;
  }

 private:
  std::size_t pick(std::size_t n) { return std::uniform_int_distribution<std::size_t>(0, n - 1)(rng_); }

  void key(std::string& out) {
    static const char* const keys[] = {"a", "b", "int", "\\u0069nt", "shape", "sh\\u0061pe", "\\u00e9", "\xc3\xa9"};
    out.push_back('"');
    out += keys[pick(std::size(keys))];
    out.push_back('"');
  }

  void number(std::string& out, std::vector<double>& doubles) {
    if (pick(3) == 0) {
      out += std::to_string(static_cast<std::int64_t>(rng_()) - (1LL << 31));
      return;
    }
    // Random bits: every exponent and mantissa, not only "nice" numbers (Boost.JSON 1.81 reads some 1 ulp off).
    std::uint64_t bits = (static_cast<std::uint64_t>(rng_()) << 32) | rng_();
    double d = 0;
    std::memcpy(&d, &bits, sizeof d);
    if (!std::isfinite(d) || d == 0) d = 0.1 * static_cast<double>(pick(1000) + 1);
    char text[64];
    const auto written = pick(2) == 0 ? std::to_chars(text, text + sizeof text, d)
                                      : std::to_chars(text, text + sizeof text, d, std::chars_format::scientific, 16);
    std::string token(text, written.ptr);
    if (token.find_first_of(".e") == std::string::npos) token += ".0";  // an integral double stays a double
    out += token;
    doubles.push_back(d);
  }

  void value(std::string& out, std::vector<double>& doubles, int depth) {
    const std::size_t kind = depth > 4 ? 2 + pick(2) : pick(4);
    if (kind == 0) {
      out.push_back('{');
      const std::size_t n = pick(5);
      for (std::size_t i = 0; i < n; ++i) {
        if (i) out.push_back(',');
        key(out);
        out.push_back(':');
        value(out, doubles, depth + 1);
      }
      out.push_back('}');
    } else if (kind == 1) {
      out.push_back('[');
      const std::size_t n = pick(5);
      for (std::size_t i = 0; i < n; ++i) {
        if (i) out.push_back(',');
        value(out, doubles, depth + 1);
      }
      out.push_back(']');
    } else if (kind == 2) {
      number(out, doubles);
    } else {
      out += pick(2) ? "\"text\"" : "null";
    }
  }

  std::mt19937 rng_;
};

void collect_doubles(const json::value& j, std::vector<double>& out) {
  if (j.is_double()) out.push_back(j.get_double());
  if (const json::array* a = j.if_array()) {
    for (const json::value& item : *a) collect_doubles(item, out);
  }
  if (const json::object* o = j.if_object()) {
    for (const auto& entry : *o) collect_doubles(entry.value(), out);
  }
}

// Equal documents, doubles compared by kind only.
bool same_but_doubles(const json::value& a, const json::value& b) {
  if (a.kind() != b.kind()) return false;
  if (a.is_double()) return true;
  if (const json::array* x = a.if_array()) {
    const json::array& y = b.get_array();
    if (x->size() != y.size()) return false;
    for (std::size_t i = 0; i < x->size(); ++i) {
      if (!same_but_doubles((*x)[i], y[i])) return false;
    }
    return true;
  }
  if (const json::object* x = a.if_object()) {
    const json::object& y = b.get_object();
    if (x->size() != y.size()) return false;
    auto it = y.begin();
    for (const auto& entry : *x) {
      if (entry.key() != it->key() || !same_but_doubles(entry.value(), it->value())) return false;
      ++it;
    }
    return true;
  }
  return a == b;
}

}  // namespace

TEST_CASE("json_document_parser: keys given twice and exact doubles, over random documents") {
  std::size_t repeated = 0;
  std::size_t boost_off = 0;  // doubles Boost.JSON's own parser reads differently
  for (std::uint32_t seed = 0; seed < 3000; ++seed) {
    std::vector<double> written;
    const std::string text = random_document(seed).make(written);
    INFO("seed " << seed << ": " << text);
    const parsed p = parse(text);
    REQUIRE_FALSE(p.ec);
    CHECK(p.used == text.size());
    // The same verdict as the scan that says where a key repeats (which reads the keys as written, escapes decoded).
    CHECK(p.repeated_key == json_key_checker().find(text).has_value());
    if (p.repeated_key) {
      ++repeated;
      continue;  // Boost.JSON keeps one of the two entries: the document no longer holds every number
    }
    // The document Boost.JSON's own parser builds, but for doubles, which are the written ones exactly.
    const json::value boost_doc = json::parse(text, {}, deep_options());
    std::vector<double> read;
    std::vector<double> boost_read;
    collect_doubles(p.doc, read);
    collect_doubles(boost_doc, boost_read);
    REQUIRE(read.size() == written.size());
    REQUIRE(boost_read.size() == written.size());
    for (std::size_t i = 0; i < written.size(); ++i) {
      CHECK(read[i] == written[i]);
      boost_off += boost_read[i] != written[i];
    }
    CHECK(same_but_doubles(p.doc, boost_doc));
  }
  CHECK(repeated > 100);  // the property covered both verdicts
  INFO("doubles Boost.JSON alone reads off: " << boost_off);
  CHECK(boost_off > 0);  // the case the parser exists for did occur
}

TEST_CASE("json_document_parser: the document is Boost.JSON's") {
  for (const std::string text :
       {R"({"a":[1,2,{"b":null}],"c":"\u00e9t\u00e9","d":true,"e":-0,"f":18446744073709551615})",
        R"([[],{},"",0,-1,1e2,1E-2,0.5])", R"("just a string")", R"(  17  )"}) {
    INFO(text);
    const parsed p = parse(text);
    REQUIRE_FALSE(p.ec);
    CHECK_FALSE(p.repeated_key);
    CHECK(p.doc == json::parse(text, {}, deep_options()));
  }
}

TEST_CASE("json_document_parser: text that is no JSON document fails as Boost.JSON's parser does") {
  std::string deep(65, '[');
  deep += std::string(65, ']');
  for (const std::string& text : {std::string(""), std::string("{"), std::string("[1,]"), std::string("{} {}"),
                                  std::string("{\"a\" 1}"), std::string("nul"), std::string("\"\xff\""),
                                  std::string("1e99999"), std::string("\"\\ud800\""), std::string("[1] x"), deep}) {
    INFO(text);
    const parsed p = parse(text);
    json::parser reference(json::storage_ptr(), deep_options());
    boost::system::error_code ec;
    const std::size_t used = reference.write(text.data(), text.size(), ec);
    CHECK(p.ec == ec);
    if (ec) CHECK(p.used == used);
  }
}

TEST_CASE("json_document_parser: keys given twice, however spelled, in any object") {
  for (const std::string_view text :
       {R"({"a":1,"a":2})", R"({"int":1,"\u0069nt":2})", R"([{"x":{"y":1,"y":2}}])",
        R"({"k0":0,"k1":1,"k2":2,"k3":3,"k4":4,"k5":5,"k6":6,"k7":7,"k8":8,"k9":9,"k10":10,
                                    "k11":11,"k12":12,"k13":13,"k14":14,"k15":15,"k16":16,"k3":17})"}) {
    INFO(text);
    const parsed p = parse(text);
    REQUIRE_FALSE(p.ec);
    CHECK(p.repeated_key);
  }
  for (const std::string_view text :
       {R"({"a":1,"b":{"a":2}})", R"([{"a":1},{"a":2}])", R"({"a":1,"A":2,"\u0061b":3})"}) {
    INFO(text);
    const parsed p = parse(text);
    REQUIRE_FALSE(p.ec);
    CHECK_FALSE(p.repeated_key);
  }
}

TEST_CASE("json_document_parser: a parser reused after an error or a repeated key starts afresh") {
  json_document_parser parser(deep_options());
  boost::system::error_code ec;
  (void)parser.write(R"({"a":1,"a":2})", ec);
  REQUIRE_FALSE(ec);
  CHECK(parser.repeated_key());
  parser.reset();
  (void)parser.write("[1,", ec);
  CHECK(ec);
  parser.reset();
  ec = {};
  (void)parser.write(R"({"a":0.1,"b":[2]})", ec);
  REQUIRE_FALSE(ec);
  CHECK_FALSE(parser.repeated_key());
  CHECK(parser.release() == json::parse(R"({"a":0.1,"b":[2]})"));
}
