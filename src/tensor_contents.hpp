// The size the record format requires of a tensor's contents (docs/record_format.md), for the writer's check
// (record_line_writer.cpp) and the reader's (value_json_reader.cpp): one rule, so that what one writes the other
// reads. Internal.
#pragma once

#include "hookscope/tensor.hpp"

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <optional>

HOOKSCOPE_DETAIL_BEGIN_NAMESPACE
namespace detail {

/// The bytes of `t`'s contents: 0 when a dimension is 0 (no element, however large the others), nothing when the
/// count does not fit a size_t. The dimensions are not negative (both callers refuse those first).
inline std::optional<std::size_t> contents_bytes(const tensor_spec& t) noexcept {
  if (std::ranges::find(t.shape, 0) != t.shape.end()) return 0;
  std::size_t bytes = dtype_size(t.dtype);
  for (const std::int64_t d : t.shape) {
    if (__builtin_mul_overflow(bytes, static_cast<std::size_t>(d), &bytes)) return std::nullopt;
  }
  return bytes;
}

}  // namespace detail
HOOKSCOPE_DETAIL_END_NAMESPACE
