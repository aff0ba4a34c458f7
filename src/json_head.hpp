// What a JSON text's first value says in one of its leading members, read by Boost.JSON's parser as far as that
// member and no further: how a reader tells a document of one kind from another (a summary from a record file) by
// its head, in time and memory bounded by the bytes before the member, whatever the size of the text. Internal.
#pragma once

#include "hookscope/config.hpp"

#include <cstddef>
#include <optional>
#include <streambuf>
#include <string>
#include <string_view>

HOOKSCOPE_DETAIL_BEGIN_NAMESPACE
namespace detail {

/// The string the first value of `in` gives for its member `key` when that value is an object whose member `key`
/// comes before any byte that makes the text no JSON, and is a string of at most `most` bytes (escapes decoded).
/// A byte-order mark may precede the value; the members before it may nest `max_depth` levels. Reads `in` in blocks
/// of 4 KiB, up to the block that ends that string (or the first value). Read errors propagate.
std::optional<std::string> leading_member_string(std::streambuf& in, std::string_view key, std::size_t most,
                                                 std::size_t max_depth);

}  // namespace detail
HOOKSCOPE_DETAIL_END_NAMESPACE
