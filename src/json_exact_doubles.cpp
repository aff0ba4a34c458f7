// The scan that gives a parsed document its exact doubles (read_exact_doubles, json_reader.hpp): each double of the
// document read again from its text. Internal to the library.
#include "json_reader.hpp"

#include <boost/json.hpp>

#include <charconv>
#include <cstddef>
#include <string_view>
#include <system_error>

HOOKSCOPE_DETAIL_BEGIN_NAMESPACE

namespace json = boost::json;

namespace detail {

namespace {

// The number tokens of a valid JSON text, in document order, one at a time.
class number_tokens {
 public:
  explicit number_tokens(std::string_view text) : text_(text) {}
  std::string_view next() {
    while (pos_ < text_.size()) {
      const char c = text_[pos_];
      if (c == '"') {
        for (++pos_; pos_ < text_.size() && text_[pos_] != '"'; pos_ += text_[pos_] == '\\' ? 2 : 1) {
        }
        ++pos_;
      } else if (c == '-' || (c >= '0' && c <= '9')) {
        const std::size_t start = pos_;
        while (pos_ < text_.size() && std::string_view("0123456789+-.eE").find(text_[pos_]) != std::string_view::npos) {
          ++pos_;
        }
        return text_.substr(start, pos_ - start);
      } else {
        ++pos_;
      }
    }
    return {};
  }

 private:
  std::string_view text_;
  std::size_t pos_ = 0;
};

// Objects are visited in their stored order, which is the text's (Boost.JSON keeps insertion order, and the
// readers refuse a key given twice, the one case where the two would differ).
void exact_doubles(json::value& j, number_tokens& tokens) {
  switch (j.kind()) {
    case json::kind::array:
      for (json::value& item : j.get_array()) exact_doubles(item, tokens);
      return;
    case json::kind::object:
      for (auto& entry : j.get_object()) exact_doubles(entry.value(), tokens);
      return;
    case json::kind::int64:
    case json::kind::uint64: (void)tokens.next(); return;
    case json::kind::double_: {
      const std::string_view token = tokens.next();
      double d = 0;
      const auto [end, ec] = std::from_chars(token.data(), token.data() + token.size(), d);
      // Boost's own reading is within an ulp or so: a token farther off is not this number's (which the key check
      // rules out), and Boost's reading is kept rather than a wrong one.
      const double boost = j.get_double();
      if (ec == std::errc{} && end == token.data() + token.size() &&
          (d == boost || std::abs(d - boost) <= 4 * std::numeric_limits<double>::epsilon() * std::abs(d))) {
        j.emplace_double() = d;
      }
      return;  // out of range (1e999): Boost's infinity stays
    }
    case json::kind::null:
    case json::kind::bool_:
    case json::kind::string: return;
  }
}

bool has_double(const json::value& j) {
  if (j.is_double()) return true;
  if (const json::array* a = j.if_array()) return std::any_of(a->begin(), a->end(), has_double);
  if (const json::object* o = j.if_object()) {
    return std::any_of(o->begin(), o->end(), [](const json::key_value_pair& e) { return has_double(e.value()); });
  }
  return false;
}

}  // namespace

void read_exact_doubles(json::value& doc, std::string_view text) {
  if (!has_double(doc)) return;  // the common record: shapes and ints only
  number_tokens tokens(text);
  exact_doubles(doc, tokens);
}
}  // namespace detail
HOOKSCOPE_DETAIL_END_NAMESPACE
