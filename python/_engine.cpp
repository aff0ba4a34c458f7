// hookscope._engine — the compiled shape engine for Python (pybind11).
//
// Values cross the boundary in the record format's JSON encoding (docs/record_format.md): the Python side
// (hookscope/__init__.py, hookscope/torch.py) builds and reads that encoding, this module parses and prints it with
// the library's own reader and writer, so Python sees exactly what records and `hookscope-shapes` see. The library's
// exceptions become Python exceptions with the same message (what()).
//
// Binding one more engine result is one line in `bind_dynamic_shapes` (a converter: `dict_of`) plus its Python
// wrapper.
#include "hookscope/errors.hpp"
#include "hookscope/records.hpp"
#include "hookscope/shapes.hpp"
#include "hookscope/value.hpp"

#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <cerrno>
#include <filesystem>
#include <fstream>
#include <optional>
#include <string>
#include <system_error>
#include <utility>
#include <variant>
#include <vector>

namespace py = pybind11;

namespace {

// A signature in the record encoding ([{"name":..., "kind":..., "default":V}, ...]) as the library reads it.
hookscope::parameter_list parse_signature(const std::string& signature_json) {
  hookscope::call_record r =
      hookscope::parse_record(R"({"function":"f","signature":)" + signature_json + R"(,"args":[],"kwargs":[]})");
  return r.parameters ? *r.parameters : hookscope::parameter_list{};
}

// One call in the record encoding ({"args":[V...],"kwargs":[["name",V]...]}, any other key ignored).
hookscope::call_record parse_call_record(const std::string& call_json) {
  // A record line without "function" is refused: add it in front (JSON objects keep the first key as written).
  std::string line = R"({"function":"f",)" + call_json.substr(call_json.find('{') + 1);
  return hookscope::parse_record(line);
}

hookscope::call_inputs parse_call(const std::string& call_json) { return parse_call_record(call_json).inputs; }

// engine.add_call(inputs, result) when the record has a result (its dims: dynamic_shapes::outputs()).
bool add_call_record(hookscope::shape_engine& engine, hookscope::call_record& r) {
  if (r.result) return engine.add_call(std::move(r.inputs), std::move(*r.result));
  return engine.add_call(std::move(r.inputs));
}

// A Python dict from (key, value) pairs: dict_of("dim", d.dim, "label", d.label) — one line per converted struct.
inline void put(py::dict&) {}
template <class V, class... Rest>
void put(py::dict& o, const char* key, const V& v, const Rest&... rest) {
  o[key] = v;
  put(o, rest...);
}
template <class... KV>
py::dict dict_of(const KV&... kv) {
  py::dict o;
  put(o, kv...);
  return o;
}

std::string call_to_json(const hookscope::call_inputs& inputs) {
  hookscope::call_record r;
  r.function = "f";
  r.inputs = inputs;
  return hookscope::to_record_line(r);
}

hookscope::input_key to_key(const py::object& key) {
  if (py::isinstance<py::int_>(key)) return hookscope::input_key(key.cast<int>());
  return hookscope::input_key(key.cast<std::string>());
}

std::string kind_name(hookscope::parameter_kind k) {
  switch (k) {
    case hookscope::parameter_kind::var_positional: return "var_positional";
    case hookscope::parameter_kind::var_keyword: return "var_keyword";
    default: return "positional_or_keyword";
  }
}

py::list parameters_to_py(const hookscope::parameter_list& parameters) {
  py::list out;
  for (const auto& p : parameters) {
    py::object d = p.default_value ? py::object(py::str(hookscope::to_json(*p.default_value))) : py::object(py::none());
    out.append(dict_of("name", p.name, "kind", kind_name(p.kind), "default", d));
  }
  return out;
}

const char* node_kind(hookscope::dynamic_shapes::node::kind k) {
  using kind = hookscope::dynamic_shapes::node::kind;
  switch (k) {
    case kind::tensor: return "tensor";
    case kind::tuple: return "tuple";
    case kind::list: return "list";
    case kind::dict: return "dict";
    default: return "null";
  }
}

template <class T, class F>
py::list list_of(const std::vector<T>& items, F&& convert) {
  py::list out;
  for (const T& x : items) out.append(convert(x));
  return out;
}

// The torch.export structure as nested Python: {"kind": ..., "tensor": i, "class_name": ..., "children": [(key, node)]}.
py::dict node_to_py(const hookscope::dynamic_shapes::node& n) {
  return dict_of("kind", node_kind(n.type), "tensor", n.tensor, "class_name", n.class_name, "children",
                 list_of(n.children, [](const auto& kc) { return py::make_tuple(kc.first, node_to_py(kc.second)); }));
}

py::dict dynamic_dim_to_py(const hookscope::dynamic_dim& d) {
  return dict_of("dim", d.dim, "label", d.label, "shared_name", d.shared_name, "min", d.min, "max", d.max, "opt", d.opt,
                 "forced", d.forced);
}

std::vector<std::string> dtype_names(const std::vector<hookscope::dtype>& dtypes) {
  std::vector<std::string> out;
  for (auto d : dtypes) out.emplace_back(hookscope::to_string(d));
  return out;
}

py::dict tensor_input_to_py(const hookscope::tensor_input& t) {
  return dict_of("name", t.name, "path", t.path, "dtype", std::string(hookscope::to_string(t.dtype)), "rank", t.rank,
                 "min_shape", t.min_shape, "opt_shape", t.opt_shape, "max_shape", t.max_shape, "dynamic_dims",
                 list_of(t.dynamic_dims, dynamic_dim_to_py), "shapes_seen", t.shapes_seen, "shapes_seen_truncated",
                 t.shapes_seen_truncated, "dtypes_seen", dtype_names(t.dtypes_seen));
}

py::dict dim_ref_to_py(const hookscope::dim_relation::dim_ref& r) {
  return dict_of("input", r.input, "dim", r.dim, "label", r.label);
}

py::dict relation_to_py(const hookscope::dim_relation& r) {
  return dict_of("target", dim_ref_to_py(r.target), "terms", list_of(r.terms, dim_ref_to_py), "k", r.k, "c", r.c,
                 "text", r.text, "torch_derived", r.torch_derived);
}

py::dict profile_to_py(const hookscope::tensorrt_profile& p) {
  auto range = [](const hookscope::tensorrt_profile::shape_range& r) {
    return dict_of("input", r.input, "min", r.min, "opt", r.opt, "max", r.max);
  };
  return dict_of("phase", p.phase, "calls", p.calls, "shapes", list_of(p.shapes, range), "widened", p.widened);
}

// Records of many files read as one stream (signatures bind across files), as hookscope-shapes reads them.
class record_files {
 public:
  template <class F>
  void each(const std::vector<std::string>& files, F&& f) {
    std::optional<hookscope::record_reader> reader;
    for (const std::string& file : files) {
      std::error_code ec;
      if (std::filesystem::is_directory(file, ec)) throw std::invalid_argument(file + ": cannot read: it is a directory");
      errno = 0;
      std::ifstream in(file, std::ios::binary);
      if (!in) {
        throw std::invalid_argument(file + ": cannot open: " +
                                    std::generic_category().message(errno != 0 ? errno : ENOENT));
      }
      if (reader) {
        reader->open(in, file);
      } else {
        reader.emplace(in, file);
      }
      hookscope::call_record record;
      while (reader->next(record)) f(record, *reader);
    }
    if (reader) warnings_ = reader->warnings();
  }
  const std::vector<std::string>& warnings() const { return warnings_; }

 private:
  std::vector<std::string> warnings_;
};

py::tuple read_records(const std::vector<std::string>& files) {
  record_files reader;
  py::list lines;
  reader.each(files, [&](const hookscope::call_record& r, const hookscope::record_reader&) {
    lines.append(hookscope::to_record_line(r));
  });
  return py::make_tuple(lines, reader.warnings());
}

std::string_view without_library_prefix(std::string_view message) {
  constexpr std::string_view prefix = "hookscope: ";
  return message.starts_with(prefix) ? message.substr(prefix.size()) : message;
}

// hookscope-shapes' feeder (src/cli/hookscope_shapes.cpp): the chosen function's calls into one engine.
py::tuple load_engine(const std::vector<std::string>& files, std::optional<std::string> function,
                      std::optional<std::size_t> store_n_calls,
                      const std::vector<std::pair<py::object, std::string>>& values_if_missing, bool allow_none) {
  const std::size_t n = store_n_calls.value_or(hookscope::unlimited);
  hookscope::shape_engine engine(hookscope::engine_options{.store_n_calls = n, .keep_calls = n != hookscope::unlimited});
  std::vector<std::string> functions;
  std::size_t calls = 0;
  bool full = false;
  record_files reader;
  reader.each(files, [&](hookscope::call_record& record, const hookscope::record_reader& where) {
    bool seen = false;
    for (const auto& f : functions) seen = seen || f == record.function;
    if (!seen) functions.push_back(record.function);
    const std::string& chosen = function ? *function : functions.front();
    if (record.function != chosen) return;
    if (calls == 0) {
      if (record.parameters) engine.set_parameters(*record.parameters);
      for (const auto& [key, v] : values_if_missing) engine.value_if_missing(to_key(key), hookscope::value_from_json(v));
      engine.begin_recording();
    }
    ++calls;
    if (full) return;
    try {
      full = !add_call_record(engine, record);
    } catch (const hookscope::inference_error& e) {
      throw hookscope::inference_error(where.source() + ":" + std::to_string(where.line()) + ": " +
                                       std::string(without_library_prefix(e.what())));
    }
  });
  auto names = [&] {
    std::string text;
    for (const auto& name : functions) text += (text.empty() ? "'" : ", '") + name + "'";
    return text;
  };
  if (!function && functions.size() > 1) {
    throw std::invalid_argument("the records hold several functions (" + names() + "); choose one with function=NAME");
  }
  if (calls == 0 && function && allow_none) return py::make_tuple(std::move(engine), reader.warnings(), *function);
  if (calls == 0 && function && !functions.empty()) {
    throw std::invalid_argument("no record of function '" + *function + "' (the records hold " + names() + ")");
  }
  if (calls == 0) {
    std::string sources;
    for (const std::string& f : files) sources += (sources.empty() ? "" : ", ") + f;
    throw hookscope::inference_error("no call recorded in " + sources);
  }
  return py::make_tuple(std::move(engine), reader.warnings(), function ? *function : functions.front());
}

hookscope::dynamic_shapes_options shapes_options(const std::vector<std::string>& batch_dimension_for, bool batch_all,
                                                 bool dim_names,
                                                 const std::vector<std::tuple<py::object, std::size_t, std::string>>& labels,
                                                 std::optional<std::vector<std::tuple<std::string, std::size_t, std::string>>> known,
                                                 bool profile_phases) {
  hookscope::dynamic_shapes_options o;
  o.profile_phases = profile_phases;
  o.batch_dimension_for = batch_dimension_for;
  o.batch_dimension_for_all = batch_all;
  o.dim_names = dim_names;
  for (const auto& [key, dim, label] : labels) o.dim_labels.push_back({to_key(key), dim, label});
  if (known) {
    o.known_dim_names.clear();
    for (const auto& [input, dim, label] : *known) o.known_dim_names.push_back({input, dim, label});
  }
  return o;
}

void bind_dynamic_shapes(py::module_& m) {
  using DS = hookscope::dynamic_shapes;
  py::class_<DS>(m, "DynamicShapes")
      .def("to_json", &DS::to_json)
      .def("to_typed_json", &DS::to_typed_json)
      .def("to_onnx", &DS::to_onnx)
      .def("to_trtexec", &DS::to_trtexec)
      .def("to_ort_options", &DS::to_ort_options)
      .def("report", &DS::report)
      .def_property_readonly("warnings", &DS::warnings)
      .def_property_readonly("root", [](const DS& ds) { return node_to_py(ds.root()); })
      .def_property_readonly("inputs", [](const DS& ds) { return list_of(ds.inputs(), tensor_input_to_py); })
      .def_property_readonly("outputs", [](const DS& ds) { return list_of(ds.outputs(), tensor_input_to_py); })
      .def_property_readonly("relations", [](const DS& ds) { return list_of(ds.relations(), relation_to_py); })
      .def_property_readonly("tensorrt_profiles",
                             [](const DS& ds) { return list_of(ds.tensorrt_profiles(), profile_to_py); });
}

}  // namespace

PYBIND11_MODULE(_engine, m) {
  m.doc() = "hookscope's compiled shape engine (values in the record format's JSON encoding)";

  // The library's exceptions, with their messages unchanged. FormatError and InferenceError are ValueErrors in
  // Python (bad data, not bad code); ValueKindError (hookscope::value_error) is a TypeError.
  // The exception types live as long as the process (one reference kept on purpose: nothing destroys them after
  // the interpreter, as static py::object members would).
  static PyObject* format_error = py::exception<hookscope::format_error>(m, "FormatError", PyExc_ValueError).inc_ref().ptr();
  static PyObject* record_error = py::exception<hookscope::record_error>(m, "RecordError", format_error).inc_ref().ptr();
  static PyObject* inference_error =
      py::exception<hookscope::inference_error>(m, "InferenceError", PyExc_ValueError).inc_ref().ptr();
  static PyObject* value_error = py::exception<hookscope::value_error>(m, "ValueKindError", PyExc_TypeError).inc_ref().ptr();
  py::register_exception_translator([](std::exception_ptr p) {
    auto raise = [](PyObject* type, const std::exception& e) { PyErr_SetString(type, e.what()); };
    try {
      if (p) std::rethrow_exception(p);
    } catch (const hookscope::record_error& e) {
      raise(record_error, e);
    } catch (const hookscope::format_error& e) {
      raise(format_error, e);
    } catch (const hookscope::inference_error& e) {
      raise(inference_error, e);
    } catch (const hookscope::value_error& e) {
      raise(value_error, e);
    }
  });

  m.attr("UNLIMITED") = hookscope::unlimited;
  m.def("read_records", &read_records, py::arg("files"),
        "Every record of the files, read as one stream, as record lines; returns (lines, warnings).");
  m.def("load_engine", &load_engine, py::arg("files"), py::arg("function") = py::none(),
        py::arg("store_n_calls") = 3, py::arg("values_if_missing") = std::vector<std::pair<py::object, std::string>>{},
        py::arg("allow_none") = false,
        "An engine fed with the records of one function, as hookscope-shapes feeds it; returns (engine, warnings, "
        "the function's name). allow_none: no call of the function named is an empty engine, not an error.");
  m.def("default_known_dim_names", [] {
    std::vector<std::tuple<std::string, std::size_t, std::string>> out;
    for (const auto& k : hookscope::default_known_dim_names()) out.emplace_back(k.input, k.dim, k.label);
    return out;
  });
  m.def("normalize_value", [](const std::string& json) { return hookscope::to_json(hookscope::value_from_json(json)); },
        "A value's JSON encoding as the library reads and writes it (checks it).");

  bind_dynamic_shapes(m);

  py::class_<hookscope::shape_engine>(m, "ShapeEngine")
      .def(py::init([](std::optional<std::size_t> store_n_calls, bool keep_calls) {
             return hookscope::shape_engine(
                 hookscope::engine_options{.store_n_calls = store_n_calls.value_or(hookscope::unlimited),
                                           .keep_calls = keep_calls});
           }),
           py::arg("store_n_calls") = 3, py::arg("keep_calls") = true)
      .def("set_parameters",
           [](hookscope::shape_engine& e, const std::string& signature_json) { e.set_parameters(parse_signature(signature_json)); },
           py::arg("signature_json"))
      .def_property_readonly("parameters",
                             [](const hookscope::shape_engine& e) { return parameters_to_py(e.parameters()); })
      .def("value_if_missing",
           [](hookscope::shape_engine& e, const py::object& key, const std::string& v) {
             e.value_if_missing(to_key(key), hookscope::value_from_json(v));
           })
      .def("begin_recording", &hookscope::shape_engine::begin_recording)
      .def("add_call",
           [](hookscope::shape_engine& e, const std::string& call_json) {
             hookscope::call_record r = parse_call_record(call_json);
             return add_call_record(e, r);
           },
           "Adds one call ({\"args\":[...],\"kwargs\":[...],\"result\":V?}); False once the recording is full.")
      .def_property_readonly("num_obs", &hookscope::shape_engine::num_obs)
      .def("infer_dynamic_shapes",
           [](const hookscope::shape_engine& e, const std::vector<std::string>& batch_dimension_for, bool batch_all,
              bool dim_names, const std::vector<std::tuple<py::object, std::size_t, std::string>>& dim_labels,
              std::optional<std::vector<std::tuple<std::string, std::size_t, std::string>>> known_dim_names,
              bool profile_phases) {
             return e.infer_dynamic_shapes(
                 shapes_options(batch_dimension_for, batch_all, dim_names, dim_labels, known_dim_names, profile_phases));
           },
           py::arg("batch_dimension_for") = std::vector<std::string>{}, py::arg("batch_all") = false,
           py::arg("dim_names") = false,
           py::arg("dim_labels") = std::vector<std::tuple<py::object, std::size_t, std::string>>{},
           py::arg("known_dim_names") = py::none(), py::arg("profile_phases") = false)
      .def("infer_arguments",
           [](const hookscope::shape_engine& e, const py::object& candidate, bool flat, bool as_args_kwargs,
              bool avoid_specialization) {
             hookscope::argument_options o;
             std::vector<std::string> warnings;
             o.avoid_specialization = avoid_specialization;
             o.warnings = &warnings;
             if (py::isinstance<py::int_>(candidate)) {
               o.candidate = candidate.cast<std::size_t>();
             } else if (py::isinstance<py::str>(candidate)) {
               o.candidate = parse_call(candidate.cast<std::string>());
             }
             o.flat = flat;
             o.as_args_kwargs = as_args_kwargs;
             std::string json = hookscope::to_json(e.infer_arguments(o));
             if (!avoid_specialization) return py::object(py::str(json));
             return py::object(py::make_tuple(json, warnings));
           },
           py::arg("candidate") = py::none(), py::arg("flat") = false, py::arg("as_args_kwargs") = false,
           py::arg("avoid_specialization") = false,
           "Representative arguments as a value's JSON encoding; candidate: None, a stored call index or a call's JSON.\n"
           "avoid_specialization=True: returns (json, warnings).")
      .def("remove_inputs", &hookscope::shape_engine::remove_inputs)
      .def("to_summary_json",
           [](const hookscope::shape_engine& e, const std::string& function) { return e.to_summary_json(function); },
           py::arg("function") = "", "The summary document (docs/summary_format.md): what `hookscope-shapes summarize` writes.")
      .def_static("from_summary_json",
                  [](const std::string& summary) {
                    std::string function;
                    hookscope::shape_engine e = hookscope::shape_engine::from_summary_json(summary, &function);
                    return py::make_tuple(py::cast(std::move(e)), function);
                  },
                  py::arg("summary"), "The engine a summary describes, and its function's name: (engine, function).")
      .def("merge", &hookscope::shape_engine::merge, py::arg("later"),
           "Folds in the calls of `later` as if added after this engine's own (exactly what one pass gives).")
      .def("info", [](const hookscope::shape_engine& e) {
        hookscope::engine_info info = e.info();
        py::dict out;
        py::list calls;
        for (const auto& c : info.calls) {
          py::dict d;
          d["inputs"] = call_to_json(c.inputs);
          hookscope::value constants = hookscope::value::dict(c.constants);
          d["constants"] = hookscope::to_json(constants);
          d["leaf_count"] = c.leaf_count;
          py::list aligned;
          for (const auto& v : c.aligned) aligned.append(hookscope::to_json(v));
          d["aligned"] = aligned;
          calls.append(d);
        }
        out["calls"] = calls;
        out["best_candidate"] = info.best_candidate;
        out["parameters"] = parameters_to_py(info.parameters);
        return out;
      });
}
