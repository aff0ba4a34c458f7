// The inferred dynamic shapes written for the tools that consume them: torch.export's `dynamic_shapes` as JSON,
// torch.onnx.export's `dynamic_axes`, and a readable report (the TensorRT profiles' syntaxes: export_tensorrt.cpp).
// Syntaxes and their sources: docs/export_formats.md. Shapes are spelled by values.hpp's shape_text, as in the
// engine's messages.
#include "values.hpp"
#include "../json_writer.hpp"
#include "hookscope/exceptions.hpp"

#include <algorithm>

HOOKSCOPE_DETAIL_BEGIN_NAMESPACE

namespace {

// A JSON object's key must be text: a dict key that is not UTF-8 (or an input name built from one) has no spelling
// there; the typed form has one.
[[noreturn]] void throw_key_not_text(const std::string& key, std::string_view what) {
  std::string message(what);
  message += " is not UTF-8 (";
  message += to_json(value(key));
  message +=
      "), so it cannot be a key of this format's JSON object; --typed (to_typed_json) writes it as "
      "{\"base64\": ...}";
  throw inference_error(message);
}

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
        if (!detail::is_utf8(n.children[i].first)) throw_key_not_text(n.children[i].first, "a dict key");
        detail::append_json_string(out, n.children[i].first);
        out += ':';
        append_node(out, n.children[i].second, inputs);
      }
      out += '}';
      return;
  }
}

void append_typed(std::string& out, const dynamic_shapes::node& n, const std::vector<tensor_input>& inputs) {
  using kind = dynamic_shapes::node::kind;
  if (n.type == kind::null || n.type == kind::tensor) {
    append_node(out, n, inputs);
    return;
  }
  const bool structure = n.type == kind::list && n.structure;  // an empty class name is still a struct
  const bool named = n.type == kind::dict || structure;
  if (structure) {
    out += "{\"struct\":";
    detail::append_json_text(out, n.class_name);
    out += ",\"fields\":[";
  } else {
    out += n.type == kind::dict ? "{\"dict\":[" : n.type == kind::tuple ? "{\"tuple\":[" : "{\"list\":[";
  }
  for (std::size_t i = 0; i < n.children.size(); ++i) {
    if (i) out += ',';
    if (named) {
      out += '[';
      detail::append_json_text(out, n.children[i].first);
      out += ',';
    }
    append_typed(out, n.children[i].second, inputs);
    if (named) out += ']';
  }
  out += "]}";
}

std::string dims_text(const std::vector<std::int64_t>& v) { return detail::shapes::shape_text(v); }

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

std::string dynamic_shapes::to_typed_json() const {
  std::string out;
  append_typed(out, root_, inputs_);
  return out;
}

std::string dynamic_shapes::to_onnx() const {
  std::string out = "{";
  bool first = true;
  for (const auto* list : {&inputs_, &outputs_}) {
    for (const tensor_input& t : *list) {
      if (t.dynamic_dims.empty()) continue;
      if (!first) out += ',';
      first = false;
      if (!detail::is_utf8(t.name)) throw_key_not_text(t.name, "an input name (from a dict key)");
      detail::append_json_string(out, t.name);
      out += ":{";
      for (std::size_t i = 0; i < t.dynamic_dims.size(); ++i) {
        const dynamic_dim& d = t.dynamic_dims[i];
        if (i) out += ',';
        detail::append_json_string(out, std::to_string(d.dim));
        out += ':';
        // "DYNAMIC" for every dim would tell the exporter they are all one symbol: the shared name instead.
        detail::append_json_string(out, d.label == unnamed_dim_label ? d.shared_name : d.label);
      }
      out += '}';
    }
  }
  return out + "}";
}

std::string dynamic_shapes::report() const {
  std::size_t name_width = 5;                       // "input"
  for (const auto* list : {&inputs_, &outputs_}) {  // one column for both tables: long output names fit too
    for (const tensor_input& t : *list) name_width = std::max(name_width, t.name.size());
  }
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
  if (!outputs_.empty()) {
    out += "outputs:\n";
    for (const tensor_input& t : outputs_) {
      out += pad(t.name, name_width) + pad(std::string(to_string(t.dtype)), 10) + shapes_seen_text(t) + "\n";
      for (const dynamic_dim& d : t.dynamic_dims) {
        out += pad("", name_width) + "dim " + std::to_string(d.dim) + ": " + d.label + " min " + std::to_string(d.min) +
               " opt " + std::to_string(d.opt) + " max " + std::to_string(d.max) + "\n";
      }
    }
  }
  if (!relations_.empty()) {
    out += "relations (held in every call, determined by them):\n";
    for (const dim_relation& r : relations_) {
      out += "- " + r.text + "  [" + r.target.input + " dim " + std::to_string(r.target.dim) +
             "]: " + std::to_string(r.supporting_calls) + " calls, " + std::to_string(r.distinct_points) +
             " distinct points; " +
             (r.torch_derived ? "torch.export can write it as a derived Dim\n"
                              : "torch.export cannot express it (a sum of two Dims)\n");
    }
  }
  bool widened = false;
  for (const tensorrt_profile& p : profiles_) widened = widened || !p.widened.empty();
  if (profiles_.size() > 1 || widened) {
    out += "profiles:\n";
    for (const tensorrt_profile& p : profiles_) {
      out += "- " + p.phase + " (" + std::to_string(p.calls) + " calls)\n";
      for (const auto& r : p.shapes) {
        out += "  " + pad(r.input, name_width) + "min " + dims_text(r.min) + " opt " + dims_text(r.opt) + " max " +
               dims_text(r.max) + "\n";
      }
      for (const std::string& w : p.widened) out += "  widened: " + w + "\n";
    }
  }
  if (!warnings_.empty()) {
    out += "warnings:\n";
    for (const inference_warning& w : warnings_) out += "- " + w.text() + "\n";
  }
  return out;
}

HOOKSCOPE_DETAIL_END_NAMESPACE
