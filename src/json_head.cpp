// leading_member: Boost.JSON's basic_parser with a handler that keeps nothing but the member it looks for,
// and stops the parse (returns false) once it knows the answer.
#include "json_head.hpp"

#include <boost/json/basic_parser_impl.hpp>
#include <boost/json/value.hpp>

#include <algorithm>
#include <string>
#include <string_view>
#include <cstdint>

HOOKSCOPE_DETAIL_BEGIN_NAMESPACE
namespace detail {

namespace {

namespace json = boost::json;
using error_code = boost::system::error_code;

class member_finder {
 public:
  static constexpr std::size_t max_object_size = json::object::max_size();
  static constexpr std::size_t max_array_size = json::array::max_size();
  static constexpr std::size_t max_key_size = json::string::max_size();
  static constexpr std::size_t max_string_size = json::string::max_size();

  member_finder(std::string_view key, std::size_t most) : key_(key), most_(most) {}

  bool decided() const noexcept { return decided_; }
  std::optional<std::string> answer() && { return std::move(answer_); }

  bool on_document_begin(error_code&) { return true; }
  bool on_document_end(error_code&) { return decide(); }  // a first value that is no object
  bool on_object_begin(error_code&) { return enter(); }
  bool on_object_end(std::size_t, error_code&) { return leave(); }
  bool on_array_begin(error_code&) { return depth_ == 0 ? decide() : enter(); }  // a first value that is no object
  bool on_array_end(std::size_t, error_code&) { return leave(); }
  bool on_key_part(json::string_view s, std::size_t, error_code&) { return add_key(s); }
  bool on_key(json::string_view s, std::size_t, error_code&) {
    add_key(s);
    state_ = depth_ == 1 && !key_too_long_ && text_ == key_ ? state::value_next : state::outside;
    text_.clear();
    key_too_long_ = false;
    return true;
  }
  bool on_string_part(json::string_view s, std::size_t, error_code&) { return add_value(s); }
  bool on_string(json::string_view s, std::size_t, error_code&) {
    if (!add_value(s)) return false;
    if (state_ != state::value_next) return scalar();
    answer_ = std::move(text_);
    return decide();
  }
  bool on_number_part(json::string_view, error_code&) { return true; }
  bool on_int64(std::int64_t, json::string_view, error_code&) { return scalar(); }
  bool on_uint64(std::uint64_t, json::string_view, error_code&) { return scalar(); }
  bool on_double(double, json::string_view, error_code&) { return scalar(); }
  bool on_bool(bool, error_code&) { return scalar(); }
  bool on_null(error_code&) { return scalar(); }
  bool on_comment_part(json::string_view, error_code&) { return true; }
  bool on_comment(json::string_view, error_code&) { return true; }

 private:
  enum class state : std::uint8_t { outside, value_next };

  bool decide() {
    decided_ = true;
    return false;  // stops the parse: the rest is not read
  }
  // The member's value is no string, or the first value is no object: the answer is none.
  bool scalar() { return state_ == state::value_next || depth_ == 0 ? decide() : true; }
  bool enter() {
    if (state_ == state::value_next) return decide();  // the member's value is a container
    ++depth_;
    return true;
  }
  bool leave() {
    if (--depth_ == 0) return decide();  // the first value ended without the member
    return true;
  }
  bool add_key(json::string_view s) {
    if (depth_ != 1 || key_too_long_) return true;
    if (text_.size() + s.size() > key_.size()) {
      key_too_long_ = true;  // no need to keep a key longer than the one looked for
      text_.clear();
    } else {
      text_.append(s.data(), s.size());
    }
    return true;
  }
  bool add_value(json::string_view s) {
    if (state_ != state::value_next) return true;
    if (text_.size() + s.size() > most_) return decide();
    text_.append(s.data(), s.size());
    return true;
  }

  std::string_view key_;
  std::size_t most_;
  std::size_t depth_ = 0;
  bool key_too_long_ = false;
  state state_ = state::outside;
  std::string text_;  // the key or value being read
  bool decided_ = false;
  std::optional<std::string> answer_;
};

}  // namespace

namespace {

// Whether `head` (the first bytes of a text, a byte-order mark passed) begins with a line holding only '{'.
bool brace_alone_on_first_line(std::string_view head) {
  const std::size_t brace = head.find_first_not_of(" \t");
  if (brace == std::string_view::npos || head[brace] != '{') return false;
  const std::size_t end = head.find_first_not_of(" \t\r", brace + 1);
  return end != std::string_view::npos && head[end] == '\n';
}

}  // namespace

// The head is parsed whole each time it grows (doubling, so the text is parsed at most about twice), never resumed
// between blocks: Boost.JSON 1.81's basic_parser, resumed right after a key whose closing quote ended the previous
// block, takes the ':' for the key's first character (an assertion in its code, a wrong parse without one).
member_head leading_member(std::streambuf& in, std::string_view key, std::size_t most, std::size_t max_depth) {
  json::parse_options options;
  options.max_depth = max_depth;
  options.allow_invalid_utf8 = true;  // the reader of the document judges its text; this only looks for a member
  member_head head;
  std::string text;
  for (std::size_t want = 4096;; want *= 2) {
    const std::size_t had = text.size();
    text.resize(want);
    const std::streamsize got = in.sgetn(text.data() + had, static_cast<std::streamsize>(want - had));
    text.resize(had + static_cast<std::size_t>(std::max<std::streamsize>(got, 0)));
    const bool end = text.size() < want;
    std::string_view head_text(text);
    if (constexpr std::string_view bom = "\xEF\xBB\xBF"; head_text.substr(0, 1) == bom.substr(0, 1)) {
      if (head_text.size() < bom.size() && !end) continue;
      if (head_text.substr(0, bom.size()) != bom) return head;
      head_text.remove_prefix(bom.size());
    }
    if (had == 0) head.brace_alone_first = brace_alone_on_first_line(head_text);
    json::basic_parser<member_finder> parser(options, key, most);
    error_code ec;
    parser.write_some(false, head_text.data(), head_text.size(), ec);
    if (parser.handler().decided()) {
      head.read = true;
      head.value = std::move(parser.handler()).answer();
      return head;
    }
    if (end || ec != json::error::incomplete) return head;  // no JSON before the member, or the end of the text
  }
}

}  // namespace detail
HOOKSCOPE_DETAIL_END_NAMESPACE
