// hookscope._engine — the compiled shape engine for Python (pybind11), bound over the library's front door
// (hookscope/load.hpp): sources are read into an engine exactly as `hookscope-shapes` reads them.
//
// Values cross the boundary in the record format's JSON encoding (docs/record_format.md): the Python side
// (hookscope/__init__.py, hookscope/torch/) builds and reads that encoding, this module parses and prints it with
// the library's own reader and writer, so Python sees exactly what records and `hookscope-shapes` see. The library's
// exceptions become Python exceptions with the same message (what()); a load_error's kind becomes `.kind`.
//
// Every function takes its options by keyword only; `_engine.pyi` gives their types.
#include "call_templates.hpp"
#include "engine_errors.hpp"
#include "engine_methods.hpp"
#include "hookscope/errors.hpp"
#include "hookscope/load.hpp"
#include "hookscope/records.hpp"
#include "hookscope/output_formats.hpp"
#include "hookscope/shapes.hpp"
#include "hookscope/value.hpp"

#include <pybind11/functional.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <functional>
#include <optional>
#include <system_error>
#include <string>
#include <utility>
#include <variant>
#include <vector>

namespace py = pybind11;

namespace {

using hookscope_python::bind_errors;
using hookscope_python::bind_init;
using hookscope_python::bind_method;
using hookscope_python::call_template;
using hookscope_python::front_door_spelling;
using hookscope_python::text_of;
using hookscope_python::warnings_to_py;

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

template <class T, class F>
py::list list_of(const std::vector<T>& items, F&& convert) {
  py::list out;
  for (const T& x : items) out.append(convert(x));
  return out;
}

std::string call_to_json(const hookscope::call_inputs& inputs) {
  hookscope::call_record r;
  r.function = "f";  // a record line names its function; Python reads only args and kwargs
  r.inputs = inputs;
  return hookscope::to_record_line(r);
}

py::list texts_of(const std::vector<std::string>& texts) {
  py::list out;
  for (const std::string& t : texts) out.append(text_of(t));
  return out;
}

// A Python str as UTF-8 text, never an error: a lone surrogate (text that came from bytes) passes as its bytes.
std::string utf8_of(const py::str& text) {
  const auto bytes = py::reinterpret_steal<py::object>(PyUnicode_AsEncodedString(text.ptr(), "utf-8", "surrogatepass"));
  if (!bytes) throw py::error_already_set();
  return std::string(py::reinterpret_borrow<py::bytes>(bytes));
}

[[noreturn]] void bad_option(const std::string& message) {
  throw hookscope::load_error(hookscope::load_error_kind::bad_option, message);
}

// The option the library names `name` ("store_n_calls"), as Python hands it over.
hookscope::option_id option_named(const std::string& name) {
  if (const std::optional<hookscope::option_id> id = hookscope::find_option(name)) return *id;
  throw py::value_error("hookscope: no option named '" + name + "'");
}

// A key given for `option` as Python gives it: an int is a position; a str is read as the command line reads a KEY
// ("2" is a position, any other text a name; the library refuses an empty one); a bool or a float is neither.
hookscope::input_key to_key(const py::handle& key, hookscope::option_id option) {
  if (py::isinstance<py::bool_>(key) || !(py::isinstance<py::int_>(key) || py::isinstance<py::str>(key))) {
    throw hookscope_python::binding_type_error(
        "hookscope: an input key is a parameter name (str) or a position (int), got " +
        std::string(py::str(py::type::of(key).attr("__name__"))) + " " + std::string(py::repr(key)));
  }
  if (py::isinstance<py::str>(key)) {
    return hookscope::input_key::parse(key.cast<std::string>(), option);
  }
  const py::int_ n = py::reinterpret_borrow<py::int_>(key);
  if (n < py::int_(0) || n > py::int_(1 << 30)) {
    bad_option("a position is an int from 0 to 2**30, got " + std::string(py::repr(key)));
  }
  return hookscope::input_key(key.cast<std::size_t>());
}

std::vector<std::pair<hookscope::input_key, hookscope::value>> values_of(
    const std::vector<std::pair<py::object, std::string>>& values_if_missing) {
  std::vector<std::pair<hookscope::input_key, hookscope::value>> out;
  for (const auto& [key, json] : values_if_missing) {
    hookscope::input_key k = to_key(key, hookscope::option_id::values_if_missing);
    try {
      out.emplace_back(std::move(k), hookscope::value_from_json(json));
    } catch (const hookscope::format_error& e) {  // what the command says of --value-if-missing KEY=JSON
      throw hookscope::load_error(hookscope::option_sentence()
                                  << hookscope::option_id::values_if_missing << " " << std::string(py::str(key)) << "="
                                  << json << ": " << e.sentence());
    }
  }
  return out;
}

const char* kind_name(hookscope::parameter_kind k) {
  switch (k) {
    case hookscope::parameter_kind::var_positional: return "var_positional";
    case hookscope::parameter_kind::var_keyword: return "var_keyword";
    case hookscope::parameter_kind::positional_or_keyword: return "positional_or_keyword";
  }
  return "positional_or_keyword";
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
    case kind::null: return "null";
  }
  return "null";
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
                 "text", r.text, "torch_derived", r.torch_derived, "supporting_calls", r.supporting_calls,
                 "distinct_points", r.distinct_points);
}

py::dict profile_to_py(const hookscope::tensorrt_profile& p) {
  auto range = [](const hookscope::tensorrt_profile::shape_range& r) {
    return dict_of("input", r.input, "min", r.min, "opt", r.opt, "max", r.max);
  };
  auto split_of = [](const hookscope::tensorrt_profile::split_dim& s) {
    return dict_of("label", s.label, "input", s.input, "dim", s.dim, "equals_one", s.equals_one, "value", s.value,
                   "equal", s.equal);
  };
  py::dict out = dict_of("phase", p.phase, "calls", p.calls, "call_indexes", p.call_indexes, "shapes",
                         list_of(p.shapes, range), "widened", p.widened);
  out["split"] = p.split ? py::object(split_of(*p.split)) : py::object(py::none());
  out["splits"] = list_of(p.splits, split_of);
  return out;
}

// {function: count} of the records the writers dropped (the notes' counts summed).
py::dict dropped_of(const hookscope::dropped_record_counts& dropped) {
  py::dict out;
  for (const auto& [function, count] : dropped) out[text_of(function)] = count;
  return out;
}

py::tuple read_records(const std::vector<std::string>& sources) {
  py::list lines;
  hookscope::dropped_record_counts dropped;
  std::vector<std::string> warnings = hookscope::for_each_record(
      sources, [&](const hookscope::call_record& r) { lines.append(text_of(hookscope::to_record_line(r))); }, &dropped);
  return py::make_tuple(lines, texts_of(warnings), dropped_of(dropped));
}

hookscope::load_options load_options_of(std::optional<std::string> function, std::optional<std::size_t> store_n_calls,
                                        const std::vector<std::pair<py::object, std::string>>& values_if_missing,
                                        std::optional<std::string> signature_from,
                                        std::vector<std::string> remove_inputs, const std::string& stored_call_option,
                                        bool for_summary) {
  hookscope::load_options o;
  o.function = std::move(function);
  o.store_n_calls = store_n_calls;
  o.values_if_missing = values_of(values_if_missing);
  o.signature_from = std::move(signature_from);
  o.remove_inputs = std::move(remove_inputs);
  o.for_summary = for_summary;
  if (!stored_call_option.empty()) o.stored_call_option = option_named(stored_call_option);
  return o;
}

hookscope::dynamic_shapes_options shapes_options(
    const std::vector<std::string>& batch_dimension_for, bool batch_all, bool dim_names,
    const std::vector<std::tuple<py::object, std::size_t, std::string>>& labels,
    std::optional<std::vector<std::tuple<std::string, std::size_t, std::string>>> known, bool profile_phases) {
  hookscope::dynamic_shapes_options o;
  o.profile_phases = profile_phases;
  o.batch_dimension_for = batch_dimension_for;
  o.batch_dimension_for_all = batch_all;
  o.dim_names = dim_names;
  for (const auto& [key, dim, label] : labels) {
    o.dim_labels.push_back({to_key(key, hookscope::option_id::dim_labels), dim, label});
  }
  if (known) {
    o.known_dim_names.clear();
    for (const auto& [input, dim, label] : *known) o.known_dim_names.push_back({input, dim, label});
  }
  return o;
}

// A stored call's index or a call given in the record encoding; None: the engine's choice.
hookscope::argument_options argument_options_of(const py::object& candidate, bool flat, bool as_args_kwargs,
                                                bool avoid_specialization) {
  hookscope::argument_options o;
  if (py::isinstance<py::bool_>(candidate)) {
    throw hookscope_python::binding_type_error(
        "hookscope: candidate: a stored call's index (int) or a call's JSON (str), got a bool");
  }
  if (py::isinstance<py::int_>(candidate)) {
    const auto index = py::reinterpret_borrow<py::int_>(candidate);
    if (index < py::int_(0)) {
      throw py::value_error("hookscope: candidate: a stored call's index is >= 0, got " + std::string(py::repr(index)));
    }
    if (index >= py::int_(hookscope::unlimited)) {  // no engine keeps that many calls; a size_t cannot hold more
      throw py::value_error("hookscope: candidate: a stored call's index is below 2**64 - 1, got " +
                            std::string(py::repr(index)));
    }
    o.candidate = candidate.cast<std::size_t>();
  } else if (py::isinstance<py::str>(candidate)) {
    o.candidate = hookscope::parse_call(candidate.cast<std::string>()).inputs;
  } else if (!candidate.is_none()) {
    throw hookscope_python::binding_type_error(
        "hookscope: candidate: a stored call's index (int) or a call's JSON (str), got " +
        std::string(py::str(py::type::of(candidate).attr("__name__"))));
  }
  o.flat = flat;
  o.as_args_kwargs = as_args_kwargs;
  o.avoid_specialization = avoid_specialization;
  return o;
}

// The output format named `name` (the table the command's --format reads); an unknown name is a bad option.
const hookscope::output_format& output_format_named(std::string_view name) {
  if (const hookscope::output_format* f = hookscope::find_output_format(name)) return *f;
  bad_option("format: expected " + hookscope::output_format_names() + ", got '" + std::string(name) + "'");
}

std::string write_format(const hookscope::dynamic_shapes& ds, std::string_view name, bool typed) {
  const hookscope::output_format& f = output_format_named(name);
  if (!typed) return f.write(ds);
  if (f.write_typed == nullptr) {
    bad_option("typed: the format '" + std::string(name) + "' has no typed form (" +
               hookscope::typed_output_format_names() + " has)");
  }
  return f.write_typed(ds);
}

void bind_dynamic_shapes(py::module_& m) {
  using DS = hookscope::dynamic_shapes;
  py::class_<DS> cls(m, "DynamicShapes");
  bind_method(cls, "write", &write_format, py::arg("format") = std::string(hookscope::default_output_format().name),
              py::arg("typed") = false,
              "The shapes as the output format `format` writes them (output_formats()); typed: containers in the "
              "record encoding, where the format has that form.");
  bind_method(
      cls, "warnings_for",
      [](const DS& ds, std::string_view name) { return warnings_to_py(output_format_named(name).warnings(ds)); },
      py::arg("format"),
      "The warnings that go with the text of `format`: the shapes' own and the format's, none where the text "
      "lists them.");
  bind_method(cls, "to_json", &DS::to_json);
  bind_method(cls, "to_typed_json", &DS::to_typed_json);
  bind_method(cls, "to_onnx", &DS::to_onnx);
  bind_method(cls, "to_trtexec", &DS::to_trtexec);
  bind_method(cls, "to_ort_options", &DS::to_ort_options);
  bind_method(cls, "to_torch_tensorrt", &DS::to_torch_tensorrt);
  cls.def_property_readonly("torch_tensorrt_warnings",
                            [](const DS& ds) { return warnings_to_py(ds.torch_tensorrt_warnings()); });
  bind_method(cls, "report", &DS::report);
  cls.def_property_readonly("warnings", [](const DS& ds) { return warnings_to_py(ds.warnings()); });
  cls.def_property_readonly("root", [](const DS& ds) { return node_to_py(ds.root()); });
  cls.def_property_readonly("inputs", [](const DS& ds) { return list_of(ds.inputs(), tensor_input_to_py); });
  cls.def_property_readonly("outputs", [](const DS& ds) { return list_of(ds.outputs(), tensor_input_to_py); });
  cls.def_property_readonly("relations", [](const DS& ds) { return list_of(ds.relations(), relation_to_py); });
  cls.def_property_readonly("tensorrt_profiles",
                            [](const DS& ds) { return list_of(ds.tensorrt_profiles(), profile_to_py); });
}

void bind_inferred_arguments(py::module_& m) {
  using IA = hookscope::inferred_arguments;
  py::class_<IA>(m, "InferredArguments")
      .def_property_readonly(
          "json", [](const IA& a) { return hookscope::to_json(a.arguments); },
          "The arguments in the record value encoding (what `hookscope-shapes args` prints).")
      .def_readonly("call", &IA::call, "The index of the recorded call they start from; None for a call given.")
      .def_property_readonly("warnings", [](const IA& a) { return warnings_to_py(a.warnings); });
}

void bind_shape_engine(py::module_& m) {
  using SE = hookscope::shape_engine;
  py::class_<call_template>(m, "CallTemplate")
      .def(py::init([](const std::string& call_json) { return call_template(hookscope::parse_call(call_json)); }),
           py::arg("call_json"), "A call ({\"args\":[...],\"kwargs\":[...],\"result\":V?}) parsed once.")
      .def_readonly("tensors", &call_template::tensors);
  py::class_<SE> cls(m, "ShapeEngine");
  bind_init(
      cls,
      [](std::optional<std::size_t> store_n_calls, bool keep_calls) {
        return SE(hookscope::engine_options{.store_n_calls = store_n_calls.value_or(hookscope::unlimited),
                                            .keep_calls = keep_calls});
      },
      py::kw_only(), py::arg("store_n_calls") = 3, py::arg("keep_calls") = true,
      "store_n_calls=None keeps every call; keep_calls=False keeps only the summaries inference reads.");
  bind_method(
      cls, "set_parameters",
      [](SE& e, const std::string& signature_json) { e.set_parameters(hookscope::parse_signature(signature_json)); },
      py::arg("signature_json"), "The signature in the record encoding ([{\"name\":...}, ...]).");
  cls.def_property_readonly("parameters", [](const SE& e) { return parameters_to_py(e.parameters()); });
  bind_method(
      cls, "value_if_missing",
      [](SE& e, const py::object& key, const std::string& value_json) {
        e.value_if_missing(to_key(key, hookscope::option_id::values_if_missing),
                           hookscope::value_from_json(value_json));
      },
      py::arg("key"), py::arg("value_json"));
  bind_method(cls, "begin_recording", &SE::begin_recording);
  bind_method(
      cls, "add_call",
      [](SE& e, const std::string& call_json) {
        hookscope::call_record r = hookscope::parse_call(call_json);
        return r.result ? e.add_call(std::move(r.inputs), std::move(*r.result)) : e.add_call(std::move(r.inputs));
      },
      py::arg("call_json"),
      "Adds one call ({\"args\":[...],\"kwargs\":[...],\"result\":V?}); False once the recording is full.");
  bind_method(
      cls, "add_call_shapes",
      [](SE& e, call_template& t, const py::list& shapes, const py::object& keep, const py::object& into) {
        if (!into.is_none() && !PyList_Check(into.ptr())) {  // refused before the engine keeps anything
          throw hookscope_python::binding_type_error("hookscope: add_call_shapes: into is a list or None, not " +
                                                     std::string(py::str(py::type::of(into).attr("__name__"))));
        }
        // A snapshot: the list is the caller's, and reading a dimension (__index__) runs Python code that may change it.
        const py::tuple frozen(shapes);
        if (static_cast<std::size_t>(py::len(frozen)) != t.tensors) {
          throw py::value_error("hookscope: add_call_shapes: " + std::to_string(py::len(frozen)) +
                                " shapes for a template of " + std::to_string(t.tensors) + " tensors");
        }
        const bool kept = hookscope_python::add_call_shapes(e, t, frozen.ptr());
        // Appended here, not by the caller: no Python code (a signal handler, which may raise) runs between the
        // engine's keeping the call and the list's, so that the two never disagree.
        if (kept && !into.is_none() && PyList_Append(into.ptr(), keep.ptr()) != 0) throw py::error_already_set();
        return kept;
      },
      py::arg("template"), py::arg("shapes"), py::arg("keep") = py::none(), py::arg("into") = py::none(),
      "add_call for a call shaped as the template with these tensor shapes (torch.Size), in the order of its "
      "tensors; False once the recording is full. When the call is kept and `into` is a list, `keep` is appended "
      "to it in the same step.");
  cls.def_property_readonly("num_obs", &SE::num_obs);
  bind_method(
      cls, "infer_dynamic_shapes",
      [](const SE& e, const std::vector<std::string>& batch_dimension_for, bool batch_all, bool dim_names,
         const std::vector<std::tuple<py::object, std::size_t, std::string>>& dim_labels,
         std::optional<std::vector<std::tuple<std::string, std::size_t, std::string>>> known_dim_names,
         bool profile_phases) {
        return e.infer_dynamic_shapes(
            shapes_options(batch_dimension_for, batch_all, dim_names, dim_labels, known_dim_names, profile_phases));
      },
      py::kw_only(), py::arg("batch_dimension_for") = std::vector<std::string>{}, py::arg("batch_all") = false,
      py::arg("dim_names") = false,
      py::arg("dim_labels") = std::vector<std::tuple<py::object, std::size_t, std::string>>{},
      py::arg("known_dim_names") = py::none(), py::arg("profile_phases") = false);
  bind_method(
      cls, "infer_arguments",
      [](const SE& e, const py::object& candidate, bool flat, bool as_args_kwargs, bool avoid_specialization) {
        return e.infer_arguments(argument_options_of(candidate, flat, as_args_kwargs, avoid_specialization));
      },
      py::kw_only(), py::arg("candidate") = py::none(), py::arg("flat") = false, py::arg("as_args_kwargs") = false,
      py::arg("avoid_specialization") = false,
      "Representative arguments (InferredArguments: json, call, warnings); candidate: None, a stored call's "
      "index or a call's JSON.");
  bind_method(cls, "remove_inputs", &SE::remove_inputs, py::arg("names"));
  bind_method(
      cls, "to_summary_json", [](const SE& e, const std::string& function) { return e.to_summary_json(function); },
      py::kw_only(), py::arg("function") = "",
      "The summary document (docs/summary_format.md): what `hookscope-shapes summarize` writes.");
  bind_method(cls, "merge", &SE::merge, py::arg("later"),
              "Folds in the calls of `later` as if added after this engine's own (exactly what one pass gives).");
  bind_method(cls, "info", [](const SE& e) {
    hookscope::engine_info info = e.info();
    py::list calls;
    for (const auto& c : info.calls) {
      py::list aligned;
      for (const auto& v : c.aligned) aligned.append(hookscope::to_json(v));
      calls.append(dict_of("inputs", call_to_json(c.inputs), "constants",
                           hookscope::to_json(hookscope::value::dict(c.constants)), "leaf_count", c.leaf_count,
                           "aligned", aligned));
    }
    return dict_of("calls", calls, "best_candidate", info.best_candidate, "parameters",
                   parameters_to_py(info.parameters), "calls_seen", info.calls_seen, "calls_ignored",
                   info.calls_ignored);
  });
}

void bind_loading(py::module_& m) {
  using LE = hookscope::loaded_engine;
  py::class_<LE>(m, "LoadedEngine")
      .def_property_readonly(
          "engine", [](LE& l) -> hookscope::shape_engine& { return l.engine; },
          py::return_value_policy::reference_internal)
      .def_property_readonly("function", [](const LE& l) { return text_of(l.function); })
      .def_property_readonly("warnings",
                             [](const LE& l) {
                               py::list out;
                               for (const auto& w : l.warnings) out.append(text_of(w.spelled(front_door_spelling)));
                               return out;
                             })
      .def_property_readonly("dropped_records", [](const LE& l) { return dropped_of(l.dropped_records); })
      .def_readonly("calls_read", &LE::calls_read)
      .def_readonly("from_summaries", &LE::from_summaries);

  m.def(
      "load",
      [](const std::vector<std::string>& sources, std::optional<std::string> function,
         std::optional<std::size_t> store_n_calls,
         const std::vector<std::pair<py::object, std::string>>& values_if_missing,
         std::optional<std::string> signature_from, std::vector<std::string> remove_inputs,
         const std::string& stored_call_option, bool for_summary, std::function<void(py::str, py::list)> on_warning) {
        hookscope::load_options o =
            load_options_of(std::move(function), store_n_calls, values_if_missing, std::move(signature_from),
                            std::move(remove_inputs), stored_call_option, for_summary);
        if (on_warning) {
          o.on_warning = [on_warning](const hookscope::option_sentence& w) {
            on_warning(text_of(w.spelled(front_door_spelling)), hookscope_python::pieces_of(w));
          };
        }
        return hookscope::load_engine(sources, o);
      },
      py::arg("sources"), py::kw_only(), py::arg("function") = py::none(), py::arg("store_n_calls") = py::none(),
      py::arg("values_if_missing") = std::vector<std::pair<py::object, std::string>>{},
      py::arg("signature_from") = py::none(), py::arg("remove_inputs") = std::vector<std::string>{},
      py::arg("stored_call_option") = "", py::arg("for_summary") = false, py::arg("on_warning") = py::none(),
      "hookscope::load_engine: the sources (record files or summaries) read into one engine, as hookscope-shapes "
      "reads them. store_n_calls=None: not given (3 for records); UNLIMITED: every call. on_warning(sentence, pieces) "
      "is "
      "called as each warning is met (before a later source fails), pieces as a refusal's.");
  m.def(
      "load_summaries",
      [](const std::vector<std::pair<std::string, std::string>>& named, std::optional<std::string> function,
         std::vector<std::string> remove_inputs) {
        return hookscope::load_summaries(named, load_options_of(std::move(function), std::nullopt, {}, std::nullopt,
                                                                std::move(remove_inputs), "", false));
      },
      py::arg("named_summaries"), py::kw_only(), py::arg("function") = py::none(),
      py::arg("remove_inputs") = std::vector<std::string>{},
      "Summary documents given as (name, text), merged in order into one engine.");
  m.def("read_records", &read_records, py::arg("sources"),
        "Every record of the sources, read as one stream, as record lines; returns (lines, warnings, "
        "dropped_records), the last {function: count} of the records the writers dropped.");
}

}  // namespace

PYBIND11_MODULE(_engine, m) {
  m.doc() = "hookscope's compiled shape engine (values in the record format's JSON encoding)";

  bind_errors(m);

  m.attr("UNLIMITED") = hookscope::unlimited;
  m.attr("MAX_RECORD_LINE_BYTES") = hookscope::max_record_line_bytes;
  m.def(
      "fit_record_line",
      [](const std::string& line) { return hookscope::to_record_line(hookscope::parse_record(line)); }, py::arg("line"),
      "A record line of any length as the library writes it: at most MAX_RECORD_LINE_BYTES, its largest values elided "
      "(docs/record_format.md, \"Lines\").");
  m.def("default_known_dim_names", [] {
    std::vector<std::tuple<std::string, std::size_t, std::string>> out;
    for (const auto& k : hookscope::default_known_dim_names()) out.emplace_back(k.input, k.dim, k.label);
    return out;
  });
  m.def(
      "check_shapes_options",
      [](const std::vector<std::string>& batch_dimension_for, bool batch_all, bool dim_names,
         const std::vector<std::tuple<py::object, std::size_t, std::string>>& dim_labels, bool profile_phases) {
        hookscope::check_options(
            shapes_options(batch_dimension_for, batch_all, dim_names, dim_labels, std::nullopt, profile_phases));
      },
      py::kw_only(), py::arg("batch_dimension_for") = std::vector<std::string>{}, py::arg("batch_all") = false,
      py::arg("dim_names") = false,
      py::arg("dim_labels") = std::vector<std::tuple<py::object, std::size_t, std::string>>{},
      py::arg("profile_phases") = false,
      "The library's rules on ShapeEngine.infer_dynamic_shapes' options, checked before any source is read: "
      "LoadError (bad_option) naming the options.");
  m.def(
      "check_argument_options",
      [](const py::object& candidate, bool flat, bool as_args_kwargs, bool avoid_specialization) {
        hookscope::check_options(argument_options_of(candidate, flat, as_args_kwargs, avoid_specialization));
      },
      py::kw_only(), py::arg("candidate") = py::none(), py::arg("flat") = false, py::arg("as_args_kwargs") = false,
      py::arg("avoid_specialization") = false,
      "The library's rules on ShapeEngine.infer_arguments' options, checked before any source is read.");
  m.def(
      "check_store_n_calls",
      [](std::size_t store_n_calls) {
        hookscope::check_options(hookscope::engine_options{.store_n_calls = store_n_calls});
      },
      py::arg("store_n_calls"), "The library's rule on store_n_calls (at least 1).");
  // The values of options as the command line writes them, read by the library (its refusals name the option).
  m.def(
      "parse_count",
      [](const std::string& option, const std::string& text) {
        return hookscope::parse_count(option_named(option), text);
      },
      py::arg("option"), py::arg("text"),
      "A count given for the option the library names `option`, as decimal text: LoadError (bad_option) unless a "
      "non-negative integer below UNLIMITED.");
  m.def("parse_store_n_calls", &hookscope::parse_store_n_calls, py::arg("text"),
        "store_n_calls as text: 'all' (UNLIMITED) or a count; LoadError (bad_option) else.");
  m.def(
      "parse_profile_phases", [](const py::str& text) { return hookscope::parse_profile_phases(utf8_of(text)); },
      py::arg("text"), "profile_phases as text: '1' (False) or 'auto' (True); LoadError (bad_option) else.");
  m.def(
      "stored_call_option",
      [](const py::object& candidate, bool flat, bool as_args_kwargs, bool avoid_specialization) -> py::object {
        const std::optional<hookscope::option_id> id =
            hookscope::stored_call_option(argument_options_of(candidate, flat, as_args_kwargs, avoid_specialization));
        return id ? py::object(text_of(hookscope::option_name(*id))) : py::object(py::none());
      },
      py::kw_only(), py::arg("candidate") = py::none(), py::arg("flat") = false, py::arg("as_args_kwargs") = false,
      py::arg("avoid_specialization") = false,
      "The option (its library name) of ShapeEngine.infer_arguments' options that needs stored calls, or None.");
  m.def("is_dim_label", &hookscope::is_dim_label, py::arg("label"),
        "Whether a label can name a dimension in every export format (an ASCII identifier).");
  m.def(
      "normalize_value", [](const std::string& json) { return hookscope::to_json(hookscope::value_from_json(json)); },
      py::arg("json"), "A value's JSON encoding as the library reads and writes it (checks it).");

  m.def(
      "output_formats",
      [] {
        py::list formats;
        for (const hookscope::output_format& f : hookscope::output_formats()) {
          formats.append(py::make_tuple(text_of(f.name), text_of(f.description)));
        }
        return formats;
      },
      "The output formats of dynamic shapes as (name, description) pairs, the default first: the names "
      "DynamicShapes.write() and the command's --format take.");
  bind_dynamic_shapes(m);
  bind_inferred_arguments(m);
  bind_shape_engine(m);
  bind_loading(m);
}
