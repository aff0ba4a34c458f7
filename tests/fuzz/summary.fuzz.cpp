// libFuzzer target for the summary document: any bytes either give an engine (shape_engine::from_summary_json) or
// a format_error. An engine read from a summary must then infer (or refuse with inference_error), merge with a copy
// of itself, and write a summary that reads back to the same text; and the loader, which reads only a file's head to
// tell a summary from a record file (src/json_head.hpp), must take it for a summary. Anything else (another
// exception, a crash, a sanitizer report) is a bug.
//
//   build-fuzz/summary_fuzz -max_total_time=60 CORPUS_DIR tests/fuzz/summaries
#include "hookscope/shapes.hpp"

#include "../../src/json_head.hpp"
#include "../../src/shapes/summaries.hpp"

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <sstream>
#include <string>
#include <string_view>

namespace {

[[noreturn]] void bug(const char* what, const std::string& detail) {
  std::fprintf(stderr, "%s: %s\n", what, detail.c_str());
  std::abort();
}

// Every inference either answers or says why it cannot (inference_error); nothing else may escape.
void infer_everything(const hookscope::shape_engine& e) {
  try {
    const auto ds = e.infer_dynamic_shapes({.dim_names = true, .profile_phases = true});
    (void)(ds.to_json() + ds.to_typed_json() + ds.to_onnx() + ds.report());
    (void)ds.to_trtexec();
  } catch (const hookscope::inference_error&) {
  }
  try {
    (void)hookscope::to_json(e.infer_arguments().arguments);
  } catch (const hookscope::inference_error&) {
  }
  (void)e.info();
}

// What the loader's look at the head says of the text: is it a summary?
bool head_says_summary(std::string_view text) {
  namespace shapes = hookscope::detail::shapes;
  std::stringbuf in{std::string(text)};
  return hookscope::detail::leading_member(in, "format", shapes::summary_format_name.size(),
                                           shapes::max_summary_json_levels)
             .value == shapes::summary_format_name;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  const bool head_summary = head_says_summary(text);
  try {
    std::string function;
    hookscope::shape_engine e = hookscope::shape_engine::from_summary_json(text, &function);
    if (!head_summary) bug("a summary the loader would take for records", std::string(text));
    infer_everything(e);
    const std::string written = e.to_summary_json(function);
    if (hookscope::shape_engine::from_summary_json(written).to_summary_json(function) != written) {
      bug("a summary read back differs", written);
    }
    hookscope::shape_engine twice = hookscope::shape_engine::from_summary_json(written);
    twice.merge(e);
    infer_everything(twice);
  } catch (const hookscope::format_error&) {  // bad input, reported as it should be
  } catch (const std::exception& e) {
    bug("unexpected exception", e.what());
  }
  return 0;
}
