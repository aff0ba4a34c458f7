// Parts of a record that other documents embed (the shape engine's summaries hold signatures and calls), read and
// written by the record format's own code (records.cpp, record_line_writer.cpp), so that one set of rules and messages
// serves every document.
// Internal to the library.
#pragma once

#include "hookscope/call_inputs.hpp"

#include "json_reader.hpp"

#include <boost/json/object.hpp>

#include <string>
#include <string_view>

HOOKSCOPE_DETAIL_BEGIN_NAMESPACE
namespace detail {

/// `o[key]`, or format_error "<at>: missing "key"".
const boost::json::value& json_required(const boost::json::object& o, std::string_view key, const json_path& at);
std::string_view read_json_string(const boost::json::value& j, const json_path& at);
/// A record's "signature": [{"name", "kind"?, "default"?}, ...], names unique, at most one of each variadic kind.
parameter_list read_json_signature(const boost::json::value& j, const json_path& at);
/// A record's "args" and "kwargs" (keyword names unique) from the object `o` at `root`.
void read_json_inputs(const boost::json::object& o, call_inputs& inputs, const json_path& root);

/// The array a record's "signature" holds.
void append_json_signature(std::string& out, const parameter_list& parameters);

}  // namespace detail
HOOKSCOPE_DETAIL_END_NAMESPACE
