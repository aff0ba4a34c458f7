// A random value tree of every kind, for the round-trip property tests of the value encoding and the record writer.
#pragma once

#include "hookscope/value.hpp"

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <iterator>
#include <limits>
#include <random>
#include <span>
#include <string>
#include <utility>
#include <vector>

namespace random_values {

using hookscope::dtype;
using hookscope::tensor_spec;
using hookscope::value;

struct options {
  bool negative_dims = false;  ///< also negative dimensions, which a writer must refuse
  bool nan = true;             ///< NaN among the floats (value's == says NaN != NaN)
};

// Strings and names of arbitrary bytes (UTF-8 or not, empty), inf/nan/-0 and extreme numbers, zero and huge
// dimensions, bytes, opaque leaves, variants, containers `depth` levels deep.
inline value random_value(std::mt19937_64& rng, int depth, options o = {}) {
  auto pick = [&](std::uint64_t n) { return rng() % n; };
  auto bytes = [&] {
    std::string s(pick(6), '\0');
    for (char& c : s) c = static_cast<char>(pick(4) == 0 ? 0xe2 : pick(256));
    return s;
  };
  switch (pick(depth > 0 ? 14 : 9)) {
    case 0: return {};
    case 1: {
      tensor_spec t{{}, static_cast<dtype>(pick(10))};
      for (std::uint64_t d = pick(4); d > 0; --d) {
        t.shape.push_back(o.negative_dims && pick(8) == 0 ? -static_cast<std::int64_t>(pick(5) + 1)
                          : pick(3) == 0                  ? 0
                                                          : static_cast<std::int64_t>(rng() >> 2));
      }
      return t;
    }
    case 2: {
      const std::int64_t extremes[] = {std::numeric_limits<std::int64_t>::min(),
                                       std::numeric_limits<std::int64_t>::max(), 0, -1};
      return value(pick(2) ? extremes[pick(4)] : static_cast<std::int64_t>(rng()));
    }
    case 3: {
      const double specials[] = {HUGE_VAL, -HUGE_VAL, 0.0, -0.0, 5e-324, 1.7976931348623157e308, std::nan("")};
      const std::size_t n = std::size(specials) - (o.nan ? 0 : 1);
      return pick(2) ? value(specials[pick(n)])
                     : value(std::ldexp(static_cast<double>(rng()), -static_cast<int>(pick(120))));
    }
    case 4: return value(pick(2) == 0);
    case 5: return value(bytes());
    case 6: {
      const std::string raw = bytes();
      return value::bytes(std::as_bytes(std::span<const char>(raw.data(), raw.size())));
    }
    case 7: {  // every combination of what a leaf may record, the address anywhere in 64 bits
      hookscope::opaque_leaf leaf{bytes(), pick(2) == 0, {}, false, {}, false};
      if (pick(2) == 0) leaf.address = pick(3) == 0 ? std::uint64_t{pick(2)} : rng() >> pick(64);
      leaf.unreadable = leaf.address && pick(2) == 0;
      leaf.too_large = pick(2) == 0;
      if (leaf.too_large && pick(2) == 0) leaf.length = rng() >> (1 + pick(63));
      return value::opaque(std::move(leaf));
    }
    case 8: return value(std::string());
    default: break;
  }
  std::vector<value> items;
  hookscope::value_fields fields;
  for (std::uint64_t i = pick(4); i > 0; --i) {
    items.push_back(random_value(rng, depth - 1, o));
    fields.emplace_back(bytes() + std::to_string(i), random_value(rng, depth - 1, o));  // unique names
  }
  switch (pick(5)) {
    case 0: return value::tuple(std::move(items));
    case 1: return value::list(std::move(items));
    case 2: return value::dict(std::move(fields));
    case 3: return value::structure(bytes(), std::move(fields));
    default: return value::variant(pick(1000), random_value(rng, depth - 1, o));
  }
}

}  // namespace random_values
