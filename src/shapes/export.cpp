// The inferred dynamic shapes written for the tools that consume them: torch.export's `dynamic_shapes` as JSON,
// trtexec's --minShapes/--optShapes/--maxShapes, ONNX Runtime's TensorRT profile options, and a readable report.
// Syntaxes and their sources: reference/EXPORT_FORMATS.md. Shapes are spelled by values.hpp's shape_text, as in the
// engine's messages.
#include "values.hpp"

#include <algorithm>

HOOKSCOPE_DETAIL_BEGIN_NAMESPACE

namespace {

void append_node(std::string& out, const dynamic_shapes::node& n, const std::vector<tensor_input>& inputs) {
  using kind = dynamic_shapes::node::kind;
  switch (n.type) {
    case kind::null: out += "null"; return;
    case kind::tensor: {
      out += '{';
      bool first = true;
      for (const dynamic_dim& d : inputs[n.tensor].dynamic_dims) {
        if (!first) out += ',';
        first = false;
        detail::append_json_string(out, std::to_string(d.dim));
        out += ':';
        detail::append_json_string(out, d.label);
      }
      out += '}';
      return;
    }
    case kind::tuple:
    case kind::list:
      out += '[';
      for (std::size_t i = 0; i < n.children.size(); ++i) {
        if (i) out += ',';
        append_node(out, n.children[i].second, inputs);
      }
      out += ']';
      return;
    case kind::dict:
      out += '{';
      for (std::size_t i = 0; i < n.children.size(); ++i) {
        if (i) out += ',';
        detail::append_json_string(out, n.children[i].first);
        out += ':';
        append_node(out, n.children[i].second, inputs);
      }
      out += '}';
      return;
  }
}

// "a:1x7,b:1x7": rank-0 tensors are left out, their empty shape has no spelling in this syntax and never varies.
std::string profile_spec(const std::vector<tensor_input>& inputs, std::vector<std::int64_t> tensor_input::*shape) {
  std::string out;
  for (const tensor_input& t : inputs) {
    if (t.rank == 0) continue;
    if (!out.empty()) out += ',';
    out += t.name + ':' + detail::shapes::shape_text(t.*shape);
  }
  return out;
}

std::string pad(std::string s, std::size_t width) {
  if (s.size() < width) s.append(width - s.size(), ' ');
  return s;
}

std::string shapes_seen_text(const tensor_input& t) {
  std::string out;
  for (const auto& s : t.shapes_seen) {
    if (!out.empty()) out += ", ";
    out += detail::shapes::shape_text(s);
  }
  if (t.shapes_seen_truncated) out += ", ...";
  return out;
}

}  // namespace

std::string dynamic_shapes::to_json() const {
  std::string out;
  append_node(out, root_, inputs_);
  return out;
}

std::string dynamic_shapes::to_trtexec() const {
  const std::string min = profile_spec(inputs_, &tensor_input::min_shape);
  if (min.empty()) return {};
  return "--minShapes=" + min + " --optShapes=" + profile_spec(inputs_, &tensor_input::opt_shape) +
         " --maxShapes=" + profile_spec(inputs_, &tensor_input::max_shape);
}

std::string dynamic_shapes::to_ort_options() const {
  return "trt_profile_min_shapes=" + profile_spec(inputs_, &tensor_input::min_shape) + "\n" +
         "trt_profile_opt_shapes=" + profile_spec(inputs_, &tensor_input::opt_shape) + "\n" +
         "trt_profile_max_shapes=" + profile_spec(inputs_, &tensor_input::max_shape) + "\n";
}

std::string dynamic_shapes::report() const {
  std::size_t name_width = 5;  // "input"
  for (const tensor_input& t : inputs_) name_width = std::max(name_width, t.name.size());
  name_width += 2;
  std::string out = pad("input", name_width) + pad("dtype", 10) + "shapes seen\n";
  for (const tensor_input& t : inputs_) {
    out += pad(t.name, name_width) + pad(std::string(to_string(t.dtype)), 10) + shapes_seen_text(t) + "\n";
    for (const dynamic_dim& d : t.dynamic_dims) {
      out += pad("", name_width) + "dim " + std::to_string(d.dim) + ": " + d.label + " (shared " + d.shared_name +
             ") min " + std::to_string(d.min) + " opt " + std::to_string(d.opt) + " max " + std::to_string(d.max) +
             (d.forced ? ", forced" : "") + "\n";
    }
  }
  if (inputs_.empty()) out += "(no tensor input)\n";
  if (!warnings_.empty()) {
    out += "warnings:\n";
    for (const std::string& w : warnings_) out += "- " + w + "\n";
  }
  return out;
}

HOOKSCOPE_DETAIL_END_NAMESPACE
