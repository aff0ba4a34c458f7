// One pass over a JSON text that builds Boost.JSON's document, as json::parser does, and applies as it reads the two
// rules of the readers that Boost.JSON does not: no object gives a key twice (keys compared as the parser reads them,
// escapes decoded; Boost.JSON keeps one of the two silently), and every double is the correctly rounded reading of
// its text (Boost.JSON 1.81 reads some 1 ulp off; the writers print the shortest round-trip form, which must read
// back to the same double). The readers of records, summaries and values parse through it. Internal to the library.
#pragma once

#include "hookscope/config.hpp"

#include <boost/json/basic_parser.hpp>
#include <boost/json/parse_options.hpp>
#include <boost/json/storage_ptr.hpp>
#include <boost/json/value.hpp>
#include <boost/json/value_stack.hpp>

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

HOOKSCOPE_DETAIL_BEGIN_NAMESPACE
namespace detail {

class json_document_parser {
 public:
  explicit json_document_parser(const boost::json::parse_options& options);

  /// Starts a document whose nodes come from `memory` (as json::parser::reset).
  void reset(boost::json::storage_ptr memory = {}) noexcept;
  /// Parses the whole of `text`, as json::parser::write: what it read, and `ec` set when `text` is no JSON document.
  std::size_t write(std::string_view text, boost::system::error_code& ec);
  /// Whether an object of the document parsed gives a key twice: json_key_checker then says which and where.
  [[nodiscard]] bool repeated_key() const noexcept { return parser_.handler().repeated_key; }
  /// The document parsed (valid after a write without error).
  boost::json::value release();

  // Boost.JSON's handler interface (basic_parser calls it): json::parser's, plus the keys of the objects open and the
  // text of a number read in parts.
  struct handler {
    static constexpr std::size_t max_object_size = boost::json::object::max_size();
    static constexpr std::size_t max_array_size = boost::json::array::max_size();
    static constexpr std::size_t max_key_size = boost::json::string::max_size();
    static constexpr std::size_t max_string_size = boost::json::string::max_size();

    boost::json::value_stack stack;
    std::string keys;                           // the keys of the objects open, one after the other
    std::vector<std::size_t> key_ends;          // where each of them ends in `keys`
    std::vector<std::size_t> first_keys;        // per open object, its first key's index in key_ends
    std::vector<std::string_view> object_keys;  // the keys of the object that ends (reused)
    std::string number;                         // a number's text read so far, when it comes in parts
    bool repeated_key = false;

    bool on_document_begin(boost::system::error_code&) { return true; }
    bool on_document_end(boost::system::error_code&) { return true; }
    bool on_object_begin(boost::system::error_code&);
    bool on_object_end(std::size_t n, boost::system::error_code&);
    bool on_array_begin(boost::system::error_code&) { return true; }
    bool on_array_end(std::size_t n, boost::system::error_code&);
    bool on_key_part(boost::json::string_view s, std::size_t, boost::system::error_code&);
    bool on_key(boost::json::string_view s, std::size_t, boost::system::error_code&);
    bool on_string_part(boost::json::string_view s, std::size_t, boost::system::error_code&);
    bool on_string(boost::json::string_view s, std::size_t, boost::system::error_code&);
    bool on_number_part(boost::json::string_view s, boost::system::error_code&);
    bool on_int64(std::int64_t i, boost::json::string_view, boost::system::error_code&);
    bool on_uint64(std::uint64_t u, boost::json::string_view, boost::system::error_code&);
    bool on_double(double d, boost::json::string_view s, boost::system::error_code&);
    bool on_bool(bool b, boost::system::error_code&);
    bool on_null(boost::system::error_code&);
    bool on_comment_part(boost::json::string_view, boost::system::error_code&) { return true; }
    bool on_comment(boost::json::string_view, boost::system::error_code&) { return true; }
  };

 private:
  boost::json::basic_parser<handler> parser_;
};

}  // namespace detail
HOOKSCOPE_DETAIL_END_NAMESPACE
