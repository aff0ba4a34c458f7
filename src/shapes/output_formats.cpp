// The table of output formats (output_formats.hpp): each row names a writer of dynamic_shapes (src/shapes/export.cpp,
// export_tensorrt.cpp).
#include "hookscope/output_formats.hpp"

#include <array>

HOOKSCOPE_DETAIL_BEGIN_NAMESPACE
namespace {

std::vector<inference_warning> shape_warnings(const dynamic_shapes& ds) { return ds.warnings(); }

std::vector<inference_warning> torch_tensorrt_warnings(const dynamic_shapes& ds) {
  std::vector<inference_warning> all = ds.torch_tensorrt_warnings();
  all.insert(all.end(), ds.warnings().begin(), ds.warnings().end());
  return all;
}

std::vector<inference_warning> listed_in_the_text(const dynamic_shapes&) { return {}; }

const std::array<output_format, 6> formats{{
    {"torch", "torch.export dynamic_shapes as JSON (the default)",
     [](const dynamic_shapes& ds) { return ds.to_json(); }, [](const dynamic_shapes& ds) { return ds.to_typed_json(); },
     shape_warnings},
    {"trtexec", "--minShapes/--optShapes/--maxShapes, --profile=N before each when several",
     [](const dynamic_shapes& ds) { return ds.to_trtexec(); }, nullptr, shape_warnings},
    {"ort", "TensorRT provider options of ONNX Runtime", [](const dynamic_shapes& ds) { return ds.to_ort_options(); },
     nullptr, shape_warnings},
    {"torch-tensorrt", "JSON: torch_tensorrt.Input keyword arguments per input",
     [](const dynamic_shapes& ds) { return ds.to_torch_tensorrt(); }, nullptr, torch_tensorrt_warnings},
    {"onnx", "torch.onnx.export dynamic_axes as JSON, inputs and outputs",
     [](const dynamic_shapes& ds) { return ds.to_onnx(); }, nullptr, shape_warnings},
    {"report", "a report for people, its warnings included", [](const dynamic_shapes& ds) { return ds.report(); },
     nullptr, listed_in_the_text},
}};

}  // namespace

std::span<const output_format> output_formats() noexcept { return formats; }

const output_format& default_output_format() noexcept { return formats.front(); }

const output_format* find_output_format(std::string_view name) noexcept {
  for (const output_format& f : formats) {
    if (f.name == name) return &f;
  }
  return nullptr;
}

namespace {

// The names of the formats `keep` keeps, as a sentence lists them.
template <class Keep>
std::string names_of(std::string_view last_separator, Keep keep) {
  std::vector<std::string_view> kept;
  for (const output_format& f : formats) {
    if (keep(f)) kept.push_back(f.name);
  }
  std::string names;
  for (std::size_t i = 0; i < kept.size(); ++i) {
    if (i != 0) names += i + 1 == kept.size() ? last_separator : std::string_view(", ");
    names += kept[i];
  }
  return names;
}

}  // namespace

std::string output_format_names(std::string_view last_separator) {
  return names_of(last_separator, [](const output_format&) { return true; });
}

std::string typed_output_format_names(std::string_view last_separator) {
  return names_of(last_separator, [](const output_format& f) { return f.write_typed != nullptr; });
}

HOOKSCOPE_DETAIL_END_NAMESPACE
