// A call's arguments as the `args` of a timeline event, in a fixed slot: every argument given appears, each value
// that does not fit its fair share cut short with a marker (docs/environment.md, HOOKSCOPE_TIMELINE).
#pragma once

#include "hookscope/config.hpp"
#include "hookscope/erased_call.hpp"

#include <cstddef>
#include <span>
#include <string_view>

HOOKSCOPE_DETAIL_BEGIN_NAMESPACE
namespace detail {

/// What ends a value cut short, before the value's whole length in bytes and `)`: `"abc…(5000)"`.
inline constexpr std::string_view cut_marker = "\u2026(";

/// Writes `"name":"value",...` (without braces) into `out[0, capacity)` and returns its size. Every argument given
/// keeps its name and a value: all whole when they fit; else the values share the room left by the names fairly
/// (max-min: a short value keeps its length, the long ones split the rest evenly), each value over its share cut
/// at a character boundary (never inside a UTF-8 sequence or an escape) and ended with `…(N)`, N the length of the
/// whole formatted value in bytes. When even the names do not fit, the first arguments that do are kept and the key
/// `"…"` says how many were left out: `"…":"3 more"`. Valid JSON and valid UTF-8 whatever the values' bytes.
std::size_t format_timeline_args(const erased_call& call, char* out, std::size_t capacity);

/// Bytes a packed argument takes: its text kind and its bits (detail/format.hpp).
inline constexpr std::size_t packed_arg_size = 9;
/// What pack_timeline_args returns for a call with an argument formatted only from itself.
inline constexpr std::size_t not_packed = static_cast<std::size_t>(-1);

/// The call's arguments copied raw into `out[0, capacity)`, for format_packed_args to write later as
/// format_timeline_args writes them now: the size used, or not_packed when an argument's text needs the value itself
/// (a string, a streamed value, a pointee) or they do not fit. Allocates nothing.
std::size_t pack_timeline_args(const erased_call& call, char* out, std::size_t capacity) noexcept;

/// What format_timeline_args writes for the call whose `count` arguments (named `names`) pack_timeline_args packed
/// into `packed`. Allocates nothing; async-signal-safe.
std::size_t format_packed_args(std::span<const std::string_view> names, std::size_t count, const char* packed,
                               char* out, std::size_t capacity) noexcept;

}  // namespace detail
HOOKSCOPE_DETAIL_END_NAMESPACE
