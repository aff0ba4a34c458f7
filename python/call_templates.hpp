// hookscope._engine's call templates (CallTemplate, ShapeEngine.add_call_shapes): InputObserver's hot path hands the
// engine a call's tensors' shapes alone. Private to the extension (python/).
#pragma once

#include "hookscope/records.hpp"
#include "hookscope/shapes.hpp"

#include <pybind11/pybind11.h>

#include <cstddef>
#include <cstdint>
#include <vector>

namespace hookscope_python {

/// A call parsed once, whose tensors' shapes each later call of the same structure fills in: no JSON text written
/// and parsed per call. Everything but the shapes (the structure, names, dtypes, scalars) is the template's. The
/// engine records such a call from its sizes alone (shape_engine::add_structure, add_call(call_structure, sizes)):
/// a structure is prepared per engine and per ranks of the tensors (the template's shapes are empty: ranks come with
/// the calls), and no value tree is built per call.
struct call_template {
  explicit call_template(hookscope::call_record parsed);

  hookscope::call_record record;
  std::size_t tensors = 0;  ///< of the inputs, then of the result
  struct prepared {
    const hookscope::shape_engine* engine = nullptr;  // an engine's structure ids are its own: a stale one is refused
    std::vector<std::size_t> ranks;
    hookscope::call_structure structure;
  };
  std::vector<prepared> structures{};  // few: one engine, one set of ranks in the usual case
  std::vector<std::int64_t> sizes{};   // a call's shapes, concatenated (reused by every call)
  std::vector<std::size_t> ranks{};    // and their ranks
};

/// add_call of the template's call with these shapes (a tuple of `tensors` tuples of ints, torch.Size), in the order
/// of its tensors. Throws BindingTypeError for a shape that is no tuple, ValueError for a negative dimension.
bool add_call_shapes(hookscope::shape_engine& e, call_template& t, PyObject* shapes);

}  // namespace hookscope_python
