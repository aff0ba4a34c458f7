// src/shapes/summary_checks.hpp — private to the shape engine: a summary's fields checked against each other once
// it is read (summary_json.cpp), so that the inference never meets a state recording could not have made.
#pragma once

#include "engine_state.hpp"

#include "../json_reader.hpp"

HOOKSCOPE_DETAIL_BEGIN_NAMESPACE
namespace detail::shapes {

/// Throws format_error naming the JSON path (below `at`, the state's object) of the first field that contradicts
/// another: counts against the calls recorded, ranks against dims and shapes, sizes against [min, max], the stored
/// calls' tensors against their leaves' summaries, call indices in range.
void check_summary_state(const recorded_state& s, const json_path& at);

}  // namespace detail::shapes
HOOKSCOPE_DETAIL_END_NAMESPACE
