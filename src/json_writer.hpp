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
void append_json_string(std::string& out, std::string_view s);
void append_json_fields(std::string& out, const value_fields& fields);  // [["name",V],...]

}  // namespace detail
HOOKSCOPE_DETAIL_END_NAMESPACE
