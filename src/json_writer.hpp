// Writing the value encoding piece by piece: shared by to_json (value_json.cpp), the record writer (records.cpp) and
// the exporters (shapes/export.cpp), so that larger documents embed values without copying them. Internal to the
// library.
#pragma once

#include "hookscope/value.hpp"

#include <string>
#include <string_view>

HOOKSCOPE_DETAIL_BEGIN_NAMESPACE
namespace detail {

void append_json(std::string& out, const value& v);
/// True when `s` is UTF-8 (strictly: no overlong forms, no surrogates): what the writers write as a JSON string.
bool is_utf8(std::string_view s) noexcept;
/// `s` as a JSON string (UTF-8 text: a name the library makes, a format's keyword).
void append_json_string(std::string& out, std::string_view s);
/// Program-supplied text (a str, a dict key, a name from the program): a JSON string when `s` is UTF-8, else
/// {"base64":"..."} in its place (docs/record_format.md); read back by read_json_text.
void append_json_text(std::string& out, std::string_view s);
void append_json_fields(std::string& out, const value_fields& fields);  // [["name",V],...]

}  // namespace detail
HOOKSCOPE_DETAIL_END_NAMESPACE
