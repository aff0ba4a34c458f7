// Section 2 of the demo: recording forward calls, and inferring the dynamic shapes an exporter needs.
#pragma once

#include "model.hpp"

namespace tiny_llm {

/// call_recorder on model::forward during one generation; prints the first two JSON Lines records.
void show_recording(const model& m);

/// hookscope::input_observer over one generation: dynamic shapes as torch.export JSON, trtexec and ORT options.
void infer_shapes(const model& m);

}  // namespace tiny_llm
