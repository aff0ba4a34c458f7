// The one-pass document parser (json_document.hpp). Internal to the library.
#include "json_document.hpp"

#include "json_reader.hpp"

#include <boost/json/basic_parser_impl.hpp>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <limits>
#include <system_error>

HOOKSCOPE_DETAIL_BEGIN_NAMESPACE

namespace json = boost::json;

namespace detail {

namespace {

// The double `text` spells, correctly rounded; Boost's own reading `boost` when std::from_chars cannot read it
// (out of range: 1e999 stays Boost's infinity) or reads a number farther than an ulp or so from Boost's (which would
// be another number's text).
double exact_double(double boost, std::string_view text) {
  double d = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), d);
  if (ec != std::errc{} || end != text.data() + text.size()) return boost;
  if (d == boost || std::abs(d - boost) <= 4 * std::numeric_limits<double>::epsilon() * std::abs(d)) return d;
  return boost;
}

}  // namespace

bool json_document_parser::handler::on_object_begin(boost::system::error_code&) {
  first_keys.push_back(key_ends.size());
  return true;
}

bool json_document_parser::handler::on_object_end(std::size_t n, boost::system::error_code&) {
  const std::size_t first = first_keys.back();
  first_keys.pop_back();
  if (!repeated_key && key_ends.size() - first > 1) {
    object_keys.clear();
    for (std::size_t i = first; i < key_ends.size(); ++i) {
      const std::size_t begin = i == 0 ? 0 : key_ends[i - 1];
      object_keys.push_back(std::string_view(keys).substr(begin, key_ends[i] - begin));
    }
    repeated_key = repeated_key_among(object_keys).has_value();
  }
  keys.resize(first == 0 ? 0 : key_ends[first - 1]);
  key_ends.resize(first);
  stack.push_object(n);
  return true;
}

bool json_document_parser::handler::on_array_end(std::size_t n, boost::system::error_code&) {
  stack.push_array(n);
  return true;
}

bool json_document_parser::handler::on_key_part(json::string_view s, std::size_t, boost::system::error_code&) {
  keys.append(s.data(), s.size());
  stack.push_chars(s);
  return true;
}

bool json_document_parser::handler::on_key(json::string_view s, std::size_t, boost::system::error_code&) {
  keys.append(s.data(), s.size());
  key_ends.push_back(keys.size());
  stack.push_key(s);
  return true;
}

bool json_document_parser::handler::on_string_part(json::string_view s, std::size_t, boost::system::error_code&) {
  stack.push_chars(s);
  return true;
}

bool json_document_parser::handler::on_string(json::string_view s, std::size_t, boost::system::error_code&) {
  stack.push_string(s);
  return true;
}

bool json_document_parser::handler::on_number_part(json::string_view s, boost::system::error_code&) {
  number.append(s.data(), s.size());
  return true;
}

bool json_document_parser::handler::on_int64(std::int64_t i, json::string_view, boost::system::error_code&) {
  number.clear();
  stack.push_int64(i);
  return true;
}

bool json_document_parser::handler::on_uint64(std::uint64_t u, json::string_view, boost::system::error_code&) {
  number.clear();
  stack.push_uint64(u);
  return true;
}

bool json_document_parser::handler::on_double(double d, json::string_view s, boost::system::error_code&) {
  if (number.empty()) {
    stack.push_double(exact_double(d, std::string_view(s.data(), s.size())));
  } else {
    number.append(s.data(), s.size());
    stack.push_double(exact_double(d, number));
    number.clear();
  }
  return true;
}

bool json_document_parser::handler::on_bool(bool b, boost::system::error_code&) {
  stack.push_bool(b);
  return true;
}

bool json_document_parser::handler::on_null(boost::system::error_code&) {
  stack.push_null();
  return true;
}

json_document_parser::json_document_parser(const json::parse_options& options) : parser_(options) { reset(); }

void json_document_parser::reset(json::storage_ptr memory) noexcept {
  parser_.reset();
  handler& h = parser_.handler();
  h.stack.reset(std::move(memory));
  h.keys.clear();
  h.key_ends.clear();
  h.first_keys.clear();
  h.object_keys.clear();
  h.number.clear();
  h.repeated_key = false;
}

std::size_t json_document_parser::write(std::string_view text, boost::system::error_code& ec) {
  const std::size_t used = parser_.write_some(false, text.data(), text.size(), ec);
  if (!ec && used < text.size()) {
    ec = json::error::extra_data;
    parser_.fail(ec);
  }
  return used;
}

json::value json_document_parser::release() {
  if (!parser_.done()) {
    boost::system::error_code ec = parser_.last_error();
    if (!ec) ec = json::error::incomplete;
    throw boost::system::system_error(ec);
  }
  return parser_.handler().stack.release();
}

}  // namespace detail
HOOKSCOPE_DETAIL_END_NAMESPACE
