// FNV-1a over bytes: a hash that is the same in every build and every process (std::hash is not), for the hashes
// that key or order what the readers and the shape engine keep, so that their outputs do not depend on the build.
#pragma once

#include "hookscope/config.hpp"

#include <cstdint>
#include <string_view>

HOOKSCOPE_DETAIL_BEGIN_NAMESPACE
namespace detail {

inline constexpr std::uint64_t fnv1a_start = 0xcbf29ce484222325ULL;

/// `hash` with one more byte.
[[nodiscard]] constexpr std::uint64_t fnv1a_step(std::uint64_t hash, char byte) noexcept {
  return (hash ^ static_cast<unsigned char>(byte)) * 0x100000001b3ULL;
}

[[nodiscard]] constexpr std::uint64_t fnv1a(std::string_view bytes) noexcept {
  std::uint64_t hash = fnv1a_start;
  for (const char c : bytes) hash = fnv1a_step(hash, c);
  return hash;
}

}  // namespace detail
HOOKSCOPE_DETAIL_END_NAMESPACE
