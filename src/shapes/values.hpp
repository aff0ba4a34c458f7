// src/shapes/values.hpp — private to the shape engine: how the engine sees a value tree. Its functions (values.cpp)
// and the torch.export structure (torch_structure.cpp) are the only places of the engine that look at a value's kind,
// through hookscope::visit where every kind has its answer: which values are scalars, Python's truthiness and scalar
// equality, and the one walk over a tree's containers and leaves that counting, flattening and paths all use. Also
// the one shape formatter ("1x7", "[]") shared by the engine's messages and the exporters.
#pragma once

#include "hookscope/shapes.hpp"

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

HOOKSCOPE_DETAIL_BEGIN_NAMESPACE
namespace detail::shapes {

using shape_t = std::vector<std::int64_t>;

//=== scalars ===//

/// int, float, bool, str, bytes or an opaque leaf: a constant of a call, compared across calls.
bool is_scalar(const value& v) noexcept;
/// Python's truthiness, which decides whether a call "gives" an argument (rule B4): None, 0, "", empty containers
/// and empty custom classes (a cache without layers) are absent; a tensor always counts.
bool truthy(const value& v);
/// A container whose tensors are all rank 0 (or that holds none): no data along any dimension, as an empty
/// sliding-window cache layer, which keeps only its window as a 0-d tensor. Beside calls giving the argument with
/// another number of leaves, such a value does not give it (rule B4).
bool holds_no_dims(const value& v);
/// Python's == on scalars: 1 == 1.0 == True, strings only equal strings.
bool scalar_equal(const value& a, const value& b);
/// Constant sets are ordered by signature position when built, so equality is the dict equality of the reference.
bool constants_equal(const value_fields& a, const value_fields& b);
/// "{use_cache: false, mode: 'x'}" for the messages.
std::string constants_text(const value_fields& constants);

//=== the tree ===//

/// A container of the same kind (and, for a dict or a struct, the same names and class name) as `like`, with new
/// children in its children's order.
value with_children(const value& like, std::vector<value> children);

/// Mixes a 64-bit hash (splitmix64's finaliser): the engine's hashes of value sequences and call shapes.
inline std::uint64_t mix(std::uint64_t h) noexcept {
  h ^= h >> 30;
  h *= 0xbf58476d1ce4e5b9ULL;
  h ^= h >> 27;
  h *= 0x94d049bb133111ebULL;
  return h ^ (h >> 31);
}

//=== text ===//

/// "1x7" (trtexec's spelling, also used in the messages and the report); "[]" for a rank-0 shape.
std::string shape_text(const std::vector<std::int64_t>& shape);
/// "past_key_values.0.key".
std::string join_path(const std::vector<std::string>& path);

}  // namespace detail::shapes
HOOKSCOPE_DETAIL_END_NAMESPACE
