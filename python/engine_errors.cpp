// hookscope._engine's errors and warnings as Python sees them (engine_errors.hpp).
#include "engine_errors.hpp"

#include <exception>
#include <string>
#include <system_error>
#include <type_traits>
#include <variant>

namespace hookscope_python {

namespace {

// A refusal of options as Python holds it: `options` (library names) and `pieces` ((text, None) or ("", option)),
// from which each Python front end spells the sentence with its own keywords.
void set_option_facts(py::object& error, const hookscope::load_error& e) {
  py::list options;
  for (hookscope::option_id id : e.options()) options.append(text_of(hookscope::option_name(id)));
  error.attr("options") = py::tuple(options);
  error.attr("pieces") = e.option_parts() != nullptr ? pieces_of(*e.option_parts()) : py::list();
}

const char* load_error_kind_name(hookscope::load_error_kind k) {
  using kind = hookscope::load_error_kind;
  switch (k) {
    case kind::bad_option: return "bad_option";
    case kind::unreadable: return "unreadable";
    case kind::mixed_sources: return "mixed_sources";
    case kind::bad_summary: return "bad_summary";
    case kind::several_functions: return "several_functions";
    case kind::no_such_function: return "no_such_function";
    case kind::summaries_disagree: return "summaries_disagree";
    case kind::signatures_differ: return "signatures_differ";
  }
  return "bad_option";
}

const char* inference_error_kind_name(hookscope::inference_error_kind k) {
  using kind = hookscope::inference_error_kind;
  switch (k) {
    case kind::other: return "other";
    case kind::named_argument_missing: return "named_argument_missing";
    case kind::constants_differ: return "constants_differ";
    case kind::leaf_count_differs: return "leaf_count_differs";
    case kind::not_aligned: return "not_aligned";
    case kind::rank_differs: return "rank_differs";
    case kind::if_missing_position_not_given: return "if_missing_position_not_given";
    case kind::keyword_collision: return "keyword_collision";
  }
  return "other";
}

// An inference_error as Python holds it: `kind` (its name) and `facts` ({name: int or str}), from which a front end
// (hookscope.torch's InputObserver) says it in its own words.
void set_inference_facts(py::object& error, const hookscope::inference_error& e) {
  error.attr("kind") = inference_error_kind_name(e.kind());
  py::dict facts;
  for (const hookscope::inference_fact& f : e.facts()) {
    facts[text_of(f.name)] = std::visit(
        [](const auto& v) -> py::object {
          if constexpr (std::is_same_v<std::decay_t<decltype(v)>, std::string>) {
            return text_of(v);
          } else {
            return py::int_(v);
          }
        },
        f.value);
  }
  error.attr("facts") = facts;
}

}  // namespace

py::list pieces_of(const hookscope::option_sentence& sentence) {
  py::list pieces;
  for (const auto& [text, id] : sentence.pieces()) {
    pieces.append(py::make_tuple(text_of(text), id ? py::object(text_of(hookscope::option_name(*id))) : py::none()));
  }
  return pieces;
}

// A warning as Python holds it: its message (a str, as it always was) carrying its kind and fields as attributes
// (hookscope._errors.InferenceWarning), so that Python code acts on the facts and prints the text.
py::object warning_to_py(const hookscope::inference_warning& w) {
  // One reference kept on purpose: the type lives as long as the process.
  static PyObject* type = py::object(py::module_::import("hookscope._errors").attr("InferenceWarning")).release().ptr();
  return py::reinterpret_borrow<py::object>(type)(text_of(w.text()), text_of(hookscope::kind_name(w.type)),
                                                  text_of(w.input), w.dim ? py::object(py::int_(*w.dim)) : py::none(),
                                                  text_of(w.phase));
}

py::list warnings_to_py(const std::vector<hookscope::inference_warning>& warnings) {
  py::list out;
  for (const hookscope::inference_warning& w : warnings) out.append(warning_to_py(w));
  return out;
}

std::string_view front_door_spelling(hookscope::option_id id) noexcept {
  using hookscope::option_id;
  switch (id) {
    case option_id::batch_dimension_for: return "batch";
    case option_id::batch_dimension_for_all: return "batch_all";
    case option_id::dim_labels: return "dim_names";
    case option_id::profile_phases: return "profiles";
    case option_id::candidate: return "index";
    case option_id::values_if_missing: return "value_if_missing";
    default: return hookscope::option_name(id);
  }
}

void bind_errors(py::module_& m) {
  // The library's exceptions, with their messages unchanged. FormatError, InferenceError and LoadError are
  // ValueErrors in Python (bad data, not bad code); ValueKindError (hookscope::value_error) is a TypeError.
  // InferenceError is also a RuntimeError: the reference InputObservers raise RuntimeError where the engine refuses
  // to infer, and code written for them catches that.
  // The exception types live as long as the process (one reference kept on purpose: nothing destroys them after
  // the interpreter, as static py::object members would).
  static PyObject* format_error =
      py::exception<hookscope::format_error>(m, "FormatError", PyExc_ValueError).inc_ref().ptr();
  static PyObject* record_error =
      py::exception<hookscope::record_error>(m, "RecordError", format_error).inc_ref().ptr();
  static PyObject* inference_error =
      py::exception<hookscope::inference_error>(
          m, "InferenceError", py::make_tuple(py::handle(PyExc_ValueError), py::handle(PyExc_RuntimeError)))
          .inc_ref()
          .ptr();
  static PyObject* load_error = py::exception<hookscope::load_error>(m, "LoadError", PyExc_ValueError).inc_ref().ptr();
  static PyObject* value_error =
      py::exception<hookscope::value_error>(m, "ValueKindError", PyExc_TypeError).inc_ref().ptr();
  // The binding's own refusals of an argument's type (binding_type_error).
  py::register_exception<binding_type_error>(m, "BindingTypeError", PyExc_TypeError);
  // Each carries its sentence (what() after the library's prefix), for a message that quotes it.
  py::register_exception_translator([](std::exception_ptr p) {
    auto raise = [](PyObject* type, const auto& e) {
      py::object error = py::reinterpret_borrow<py::object>(type)(text_of(e.what()));
      error.attr("sentence") = text_of(e.sentence());
      PyErr_SetObject(type, error.ptr());
    };
    try {
      if (p) std::rethrow_exception(p);
    } catch (const hookscope::record_error& e) {
      raise(record_error, e);
    } catch (const hookscope::format_error& e) {
      raise(format_error, e);
    } catch (const hookscope::inference_error& e) {
      py::object error = py::reinterpret_borrow<py::object>(inference_error)(text_of(e.what()));
      error.attr("sentence") = text_of(e.sentence());
      set_inference_facts(error, e);
      PyErr_SetObject(inference_error, error.ptr());
    } catch (const hookscope::load_error& e) {
      py::object error = py::reinterpret_borrow<py::object>(load_error)(text_of(e.what()));
      error.attr("sentence") = text_of(e.sentence());
      error.attr("kind") = load_error_kind_name(e.kind());
      set_option_facts(error, e);
      PyErr_SetObject(load_error, error.ptr());
    } catch (const hookscope::value_error& e) {
      raise(value_error, e);
    } catch (const std::system_error& e) {  // a stream that fails to read outside load_engine (read_records)
      py::object error = py::reinterpret_borrow<py::object>(load_error)(text_of(hookscope::detail::prefixed(e.what())));
      error.attr("sentence") = text_of(e.what());
      error.attr("kind") = "unreadable";
      error.attr("options") = py::tuple();
      error.attr("pieces") = py::list();
      PyErr_SetObject(load_error, error.ptr());
    }
  });

  m.def(
      "front_door_keywords",
      [] {
        py::dict out;
        for (const hookscope::option_id id : hookscope::option_ids()) {
          out[text_of(hookscope::option_name(id))] = text_of(front_door_spelling(id));
        }
        return out;
      },
      "{library option name: keyword of hookscope.infer / infer_arguments / load / summarize}: how the front door "
      "spells the options a refusal names.");
}

}  // namespace hookscope_python
