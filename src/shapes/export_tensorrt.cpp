// The TensorRT profiles in the syntaxes of the tools that build engines from them: trtexec's options, ONNX Runtime's
// TensorRT provider options, and Torch-TensorRT's `Input` keyword arguments as JSON. The numbers are
// tensorrt_profiles()' own; this file decides only how they are spelled, and refuses what a consumer would misread.
// Each consumer's grammar, as read in its source, and where: docs/export_formats.md.
#include "values.hpp"
#include "../json_writer.hpp"
#include "hookscope/exceptions.hpp"

#include <algorithm>
#include <cstdint>
#include <limits>

HOOKSCOPE_DETAIL_BEGIN_NAMESPACE

namespace {

enum class spec_consumer { trtexec, ort };

std::string_view consumer_name(spec_consumer c) { return c == spec_consumer::trtexec ? "trtexec" : "ONNX Runtime"; }

// 'name' as the engine's messages quote names; in the record encoding ({"str": "a\nb"}, {"base64": ...}) when it
// holds bytes a terminal would not show as they are.
std::string quoted_name(const std::string& name) {
  const bool plain = detail::is_utf8(name) && std::none_of(name.begin(), name.end(), [](char ch) {
                       return static_cast<unsigned char>(ch) < ' ' || ch == 0x7f;
                     });
  return plain ? std::string("'").append(name).append("'") : hookscope::to_json(value(name));
}

[[noreturn]] void throw_bad_name(const std::string& name, spec_consumer c, std::string_view why) {
  std::string message = "the input name ";
  message += quoted_name(name);
  message += " cannot be written in ";
  message += consumer_name(c);
  message += "'s shape spec: ";
  message += why;
  message += "; rename the input (the ONNX model's input names must match anyway)";
  throw inference_error(message);
}

// Both split the list at every ',' before anything else, so no name may hold one. trtexec takes the name up to the
// last ':' of an entry and treats a `'` as a quote (exactly two per entry); ONNX Runtime ends the name at the first
// ':', and onnxruntime_perf_test's `-i "key|value ..."` splits at every '|'. The line is meant for a shell (trtexec)
// or a key=value file (ONNX Runtime): no spaces, quotes or control characters, and for trtexec none of the
// characters a shell expands or splits at. ONNX input names are UTF-8 strings, so a name that is not cannot match any.
void check_spec_name(const std::string& name, spec_consumer c) {
  if (name.empty()) throw_bad_name(name, c, "it is empty, and an entry without a name is refused");
  if (!detail::is_utf8(name)) throw_bad_name(name, c, "it is not UTF-8, and ONNX input names are");
  for (const char ch : name) {
    const auto u = static_cast<unsigned char>(ch);
    if (ch == ',') throw_bad_name(name, c, "it contains ',', which separates the entries");
    if (ch == ':' && c == spec_consumer::ort) {
      throw_bad_name(name, c, "it contains ':', and ONNX Runtime ends the name at the first ':'");
    }
    if (ch == '|' && c == spec_consumer::ort) {
      throw_bad_name(name, c, "it contains '|', which onnxruntime_perf_test's -i option reads as key|value");
    }
    if (ch == '\'' || ch == '"') throw_bad_name(name, c, "it contains a quote, which the syntax or the shell reads");
    if (u <= ' ' || u == 0x7f) throw_bad_name(name, c, "it contains a space or a control character");
    // Unquoted in a shell command line, these expand, end the command or redirect it (a glob matches files).
    if (c == spec_consumer::trtexec && std::string_view("$`\\;|&<>()*?[]!").find(ch) != std::string_view::npos) {
      throw_bad_name(name, c, std::string("it contains '") + ch + "', which a shell reads in the trtexec command line");
    }
  }
}

// Two inputs whose paths flatten to one name ({"a.0": t} beside {"a": [t]}): trtexec keeps one of the two entries,
// ONNX Runtime reads the second as the first's shape in another profile, and Torch-TensorRT would match both Inputs
// to one argument; no spelling tells them apart, so the name is refused rather than written twice.
void check_unique_names(const std::vector<tensor_input>& inputs, std::string_view consumer) {
  for (std::size_t i = 0; i < inputs.size(); ++i) {
    for (std::size_t j = 0; j < i; ++j) {
      if (inputs[j].name != inputs[i].name) continue;
      const auto path_text = [](const tensor_input& t) {
        std::string out = "[";
        for (std::size_t k = 0; k < t.path.size(); ++k) {
          if (k) out += ", ";
          out += quoted_name(t.path[k]);
        }
        return out + "]";
      };
      throw inference_error("tensor inputs " + std::to_string(j) + " and " + std::to_string(i) + " (paths " +
                            path_text(inputs[j]) + " and " + path_text(inputs[i]) + ") are both named " +
                            quoted_name(inputs[i].name) + ", which " + std::string(consumer) +
                            " cannot tell apart; rename one of them");
    }
  }
}

// Both read each dimension with std::stoi: a 32-bit int, and a negative one is not a size.
void check_spec_dims(const std::string& input, const std::vector<std::int64_t>& dims, std::string_view which,
                     std::size_t profile, spec_consumer c) {
  for (std::size_t d = 0; d < dims.size(); ++d) {
    if (dims[d] >= 0 && dims[d] <= std::numeric_limits<std::int32_t>::max()) continue;
    // From a std::string: GCC 12 at -O3 reports a false -Wrestrict for `"literal" + std::string(...)`.
    std::string message = std::string("dimension ") + std::to_string(d) + " of '" + input + "' is " +
                          std::to_string(dims[d]) + " in the " + std::string(which) + " shape of profile " +
                          std::to_string(profile) + ": ";
    message += consumer_name(c);
    message += dims[d] < 0 ? " reads a negative dimension as no size at all"
                           : " reads dimensions as 32-bit ints (std::stoi), so it cannot be written";
    throw inference_error(message);
  }
}

using range_shape = std::vector<std::int64_t> tensorrt_profile::shape_range::*;

// "a:1x7,b:1x7": rank-0 tensors are not in the profiles (tensorrt_profile holds rank >= 1 only).
std::string profile_spec(const tensorrt_profile& p, std::size_t index, range_shape shape, std::string_view which,
                         spec_consumer c) {
  std::string out;
  for (const auto& r : p.shapes) {
    check_spec_name(r.input, c);
    check_spec_dims(r.input, r.*shape, which, index, c);
    if (!out.empty()) out += ',';
    out += r.input + ':' + detail::shapes::shape_text(r.*shape);
  }
  return out;
}

//=== Torch-TensorRT ===//

// Torch-TensorRT's Input wants every min dimension >= 1 (its `profiles` form raises on 0; the single-range form warns
// that TensorRT clamps it to 1). A dimension seen as 0 (an empty cache at the prefill) is raised to 1 in min, and in
// opt and max where they are 0 too, so min <= opt <= max still holds; a sentence says which calls the engine then
// cannot take.
std::int64_t at_least_one(std::int64_t v) { return std::max<std::int64_t>(v, 1); }

struct torch_trt_range {
  std::vector<std::int64_t> min, opt, max;
};

// Per tensor input (inputs() order) its range in each profile; a rank-0 tensor (in no profile) has empty shapes.
std::vector<std::vector<torch_trt_range>> torch_trt_ranges(const std::vector<tensor_input>& inputs,
                                                           const std::vector<tensorrt_profile>& profiles,
                                                           std::vector<inference_warning>* warnings) {
  std::vector<std::vector<torch_trt_range>> out(inputs.size());
  for (std::size_t i = 0; i < inputs.size(); ++i) {
    for (std::size_t p = 0; p < profiles.size(); ++p) {
      torch_trt_range r;
      for (const auto& s : profiles[p].shapes) {
        if (s.input == inputs[i].name) r = {s.min, s.opt, s.max};
      }
      for (std::size_t d = 0; d < r.min.size(); ++d) {
        if (r.min[d] >= 1) continue;
        if (warnings) {
          warnings->push_back(inference_warning{
              .type = inference_warning::kind::export_dim_below_one,
              .input = inputs[i].name,
              .dim = d,
              .phase = profiles[p].phase,
              .sentence = std::string("torch-tensorrt: dimension ") + std::to_string(d) + " of '" + inputs[i].name +
                          "' has min " + std::to_string(r.min[d]) + " in profile " + std::to_string(p) + " (" +
                          profiles[p].phase +
                          "); Torch-TensorRT wants every min >= 1, so it is raised to 1 and the calls with an "
                          "empty '" +
                          inputs[i].name +
                          "' are outside the engine's range: give them one masked position, or an engine of "
                          "their own"});
        }
        r.min[d] = at_least_one(r.min[d]);
        r.opt[d] = at_least_one(r.opt[d]);
        r.max[d] = at_least_one(r.max[d]);
      }
      out[i].push_back(std::move(r));
    }
  }
  return out;
}

void append_dims(std::string& out, const std::vector<std::int64_t>& dims) {
  out += '[';
  for (std::size_t d = 0; d < dims.size(); ++d) {
    if (d) out += ',';
    out += std::to_string(dims[d]);
  }
  out += ']';
}

void append_range(std::string& out, const torch_trt_range& r) {
  out += "\"min_shape\":";
  append_dims(out, r.min);
  out += ",\"opt_shape\":";
  append_dims(out, r.opt);
  out += ",\"max_shape\":";
  append_dims(out, r.max);
}

}  // namespace

std::string dynamic_shapes::to_trtexec() const {
  // TensorRT 10's trtexec reads one triple per `--profile=N`, the triple right after it; a second bare triple is
  // refused. One profile is written bare, which every version reads.
  const bool numbered = profiles_.size() > 1;
  check_unique_names(inputs_, "trtexec");
  std::string out;
  for (std::size_t i = 0; i < profiles_.size(); ++i) {
    const tensorrt_profile& p = profiles_[i];
    const std::string min = profile_spec(p, i, &tensorrt_profile::shape_range::min, "min", spec_consumer::trtexec);
    if (min.empty()) continue;  // no tensor of rank >= 1: then in no profile either
    if (!out.empty()) out += ' ';
    if (numbered) out.append("--profile=").append(std::to_string(i)).append(" ");
    out += "--minShapes=" + min +
           " --optShapes=" + profile_spec(p, i, &tensorrt_profile::shape_range::opt, "opt", spec_consumer::trtexec) +
           " --maxShapes=" + profile_spec(p, i, &tensorrt_profile::shape_range::max, "max", spec_consumer::trtexec);
  }
  return out;
}

std::string dynamic_shapes::to_ort_options() const {
  // ONNX Runtime's TensorRT provider reads an input named again as its shape in the next profile.
  check_unique_names(inputs_, "ONNX Runtime");
  auto all = [&](range_shape shape, std::string_view which) {
    std::string out;
    for (std::size_t i = 0; i < profiles_.size(); ++i) {
      const std::string one = profile_spec(profiles_[i], i, shape, which, spec_consumer::ort);
      if (!one.empty()) out += (out.empty() ? "" : ",") + one;
    }
    return out;
  };
  return "trt_profile_min_shapes=" + all(&tensorrt_profile::shape_range::min, "min") + "\n" +
         "trt_profile_opt_shapes=" + all(&tensorrt_profile::shape_range::opt, "opt") + "\n" +
         "trt_profile_max_shapes=" + all(&tensorrt_profile::shape_range::max, "max") + "\n";
}

std::string dynamic_shapes::to_torch_tensorrt() const {
  check_unique_names(inputs_, "Torch-TensorRT");
  const auto ranges = torch_trt_ranges(inputs_, profiles_, nullptr);
  std::string out = "[";
  for (std::size_t i = 0; i < inputs_.size(); ++i) {
    const tensor_input& t = inputs_[i];
    if (t.name.empty()) {
      throw inference_error(
          "an input with an empty name (an empty dict key) cannot be a Torch-TensorRT Input: its name "
          "matches the Input to the argument; rename the key");
    }
    if (!detail::is_utf8(t.name)) {
      throw inference_error("the input name " + quoted_name(t.name) +
                            " is not UTF-8, so it cannot be a Torch-TensorRT Input's name (a Python str)");
    }
    if (i) out += ',';
    out += "{\"name\":";
    detail::append_json_string(out, t.name);
    out += ",\"dtype\":";
    detail::append_json_string(out, to_string(t.dtype));
    out += ',';
    if (ranges[i].empty()) {  // no profile at all: the observed ranges, which then hold every call
      append_range(out, {t.min_shape, t.opt_shape, t.max_shape});
    } else if (ranges[i].size() == 1) {
      append_range(out, ranges[i][0]);
    } else {
      out += "\"profiles\":[";
      for (std::size_t p = 0; p < ranges[i].size(); ++p) {
        if (p) out += ',';
        out += '{';
        append_range(out, ranges[i][p]);
        out += '}';
      }
      out += ']';
    }
    out += '}';
  }
  return out + "]";
}

std::vector<inference_warning> dynamic_shapes::torch_tensorrt_warnings() const {
  std::vector<inference_warning> out;
  torch_trt_ranges(inputs_, profiles_, &out);
  return out;
}

HOOKSCOPE_DETAIL_END_NAMESPACE
