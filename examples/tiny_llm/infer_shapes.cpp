// The InputObserver story: record the calls of model::forward during generation (prefill with an image,
// then decode steps with a growing KV cache), then infer which dimensions are dynamic.
#include "infer_shapes.hpp"

#include <hookscope/input_observer.hpp>
#include <hookscope/recorder.hpp>

#include <cstdio>
#include <exception>
#include <string>
#include <string_view>

namespace tiny_llm {

namespace {
constexpr int new_tokens = 4;
}  // namespace

void show_recording(const model& m) {
  std::puts("Recording with hookscope::call_recorder (the first 3 calls, shapes and dtypes only):");
  hookscope::call_recorder rec(model::forward_observable{});
  generate(m, image_prompt(m.cfg()), new_tokens);
  rec.stop();
  if (!hookscope::hooks_enabled) {
    std::puts("  (hooks are compiled out in this build: the recorder records nothing)");
    return;
  }
  std::printf("  %zu calls recorded of %d; the first two records (JSON Lines):\n", rec.num_calls(), new_tokens);
  const std::string jsonl = rec.to_jsonl();
  std::string_view rest = jsonl;
  for (int i = 0; i < 2 && !rest.empty(); ++i) {
    const std::size_t end = rest.find('\n');
    const std::string_view line = rest.substr(0, end);
    std::printf("  %.*s\n", int(line.size()), line.data());
    rest = end == std::string_view::npos ? std::string_view{} : rest.substr(end + 1);
  }
}

namespace {

void print_indented(std::string_view text, std::string_view indent) {
  while (!text.empty()) {
    const std::size_t end = text.find('\n');
    const std::string_view line = text.substr(0, end);
    std::printf("%.*s%.*s\n", int(indent.size()), indent.data(), int(line.size()), line.data());
    text = end == std::string_view::npos ? std::string_view{} : text.substr(end + 1);
  }
}

}  // namespace

void infer_shapes(const model& m) {
  std::puts("\nInferring dynamic shapes with hookscope::input_observer:");
  if (!hookscope::hooks_enabled) {
    std::puts("  (hooks are compiled out in this build: nothing is observed, so there is no shape to infer)");
    return;
  }
  hookscope::input_observer obs;
  // Decode steps pass no image: this stands for pixel_values when the exporter needs every input.
  obs.value_if_missing("pixel_values", hookscope::tensor_spec{{0, 3, 16, 16}, hookscope::dtype::float32});
  // Two recordings (the first 3 calls of each): prompt A (batch 1, image), then prompt B (batch 2, text).
  for (const prompt& p : {image_prompt(m.cfg()), text_prompt()}) {
    auto rec = obs.record(model::forward_observable{});
    generate(m, p, new_tokens);
  }
  std::printf("  observed %zu calls of model::forward (prefill and 2 decode steps of prompts A and B)\n",
              obs.num_obs());
  try {
    const auto ds = obs.infer_dynamic_shapes({
        .batch_dimension_for = {"input_ids", "attention_mask"},  // dynamic batch, whatever was observed
        .dim_names = true,                                       // "batch_size", ... rather than "DYNAMIC"
    });
    std::puts("  torch.export dynamic_shapes:");
    print_indented(ds.to_json(), "    ");
    std::puts("  trtexec:");
    print_indented(ds.to_trtexec(), "    ");
    std::puts("  ONNX Runtime TensorRT provider options:");
    print_indented(ds.to_ort_options(), "    ");
    std::puts("  report:");
    print_indented(ds.report(), "    ");
  } catch (const std::exception& e) {
    std::printf("  shape inference failed: %s\n", e.what());
  }
}

}  // namespace tiny_llm
