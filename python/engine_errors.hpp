// hookscope._engine's errors and warnings as Python sees them, apart from the bindings: the library's exceptions as
// Python exception types (their messages unchanged, a load_error's kind and options as attributes), the warnings of
// an inference as hookscope._errors.InferenceWarning (a str with its facts), and how the front door's functions spell
// the library's options. Private to the extension (python/).
#pragma once

#include "hookscope/exceptions.hpp"
#include "hookscope/shapes.hpp"

#include <pybind11/pybind11.h>

#include <stdexcept>
#include <string_view>
#include <vector>

namespace hookscope_python {

namespace py = pybind11;

// Text the library wrote (names of files and functions may hold any bytes) as a Python str, never an error.
inline py::str text_of(std::string_view text) {
  return py::reinterpret_steal<py::str>(
      PyUnicode_DecodeUTF8(text.data(), static_cast<Py_ssize_t>(text.size()), "backslashreplace"));
}

/// How hookscope's Python functions (infer, infer_arguments, load, summarize) spell the library's options: their
/// keywords. The one table: Python reads it (front_door_keywords) to spell the refusals it gets.
std::string_view front_door_spelling(hookscope::option_id id) noexcept;

/// A sentence that names options as Python holds it: (text, None) and ("", the option's library name) pieces.
py::list pieces_of(const hookscope::option_sentence& sentence);

/// The warnings of an inference as Python holds them.
py::list warnings_to_py(const std::vector<hookscope::inference_warning>& warnings);

/// The binding's own refusal of an argument's type, its message a hookscope sentence: Python's
/// hookscope._engine.BindingTypeError, a TypeError. So a TypeError of no subclass out of a compiled method is
/// pybind11's refusal of the arguments, which Python's guard (hookscope/_arguments.py) turns into a sentence naming
/// the parameters: decided by the exception's type, never by its text.
struct binding_type_error : std::runtime_error {
  using std::runtime_error::runtime_error;
};

/// Registers the exception types and their translation, and front_door_keywords().
void bind_errors(py::module_& m);

}  // namespace hookscope_python
