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

/// What the head of a JSON text says of one member of its first value.
struct member_head {
  /// The member's string, when the first value is an object whose member comes before any byte that makes the text
  /// no JSON, and is a string of at most the length asked for (escapes decoded).
  std::optional<std::string> value;
  /// Whether the text was JSON as far as the answer: false when the first value is no JSON, or ends, before its
  /// member (or its end) is read.
  bool read = false;
  /// Whether the first line holds the opening brace alone (with white space): as pretty printers begin an object,
  /// and as no line of JSON Lines is.
  bool brace_alone_first = false;
};

/// The head of `in` as far as the top-level member `key` of its first value: its string of at most `most` bytes. A
/// byte-order mark may precede the value; the members before it may nest `max_depth` levels. Reads `in` by blocks
/// that double from 4 KiB, up to the one that ends that string (or the first value), and holds what it read (at
/// most twice the head) until it knows. Read errors propagate.
member_head leading_member(std::streambuf& in, std::string_view key, std::size_t most, std::size_t max_depth);

}  // namespace detail
HOOKSCOPE_DETAIL_END_NAMESPACE
