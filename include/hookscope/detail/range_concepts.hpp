// hookscope/detail/range_concepts.hpp — the standard range concepts and accessors (std::ranges::range, size, data,
// range_reference_t, ...) without every view and adaptor of <ranges>, which every translation unit that calls an
// observable would otherwise parse (GCC 12: ~0.5 G of the compiler's instructions, tools/annotation_cost.py).
#pragma once

#if __has_include(<bits/ranges_base.h>) && __has_include(<bits/range_access.h>)
// libstdc++, as its <string_view> does: range_access.h brings the reverse iterators ranges_base.h uses.
#include <bits/range_access.h>
#include <bits/ranges_base.h>
#else
#include <ranges>
#endif
