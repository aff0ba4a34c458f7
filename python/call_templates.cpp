// hookscope._engine's call templates (call_templates.hpp): a template's calls handed to the engine as sizes.
#include "call_templates.hpp"

#include "engine_errors.hpp"

#include "hookscope/exceptions.hpp"
#include "hookscope/value.hpp"

#include <pybind11/pybind11.h>

#include <algorithm>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace hookscope_python {

namespace {

namespace py = pybind11;

constexpr std::size_t max_template_structures = 8;  // per template: its structures for each engine and ranks

std::size_t count_tensors(const hookscope::value& v) {
  std::size_t n = 0;
  hookscope::for_each_leaf(v, [&](const hookscope::value& leaf) { n += leaf.is_tensor() ? 1 : 0; });
  return n;
}

// Appends a shape's sizes (a tuple of ints: torch.Size) to `sizes`.
void append_shape(PyObject* shape, std::vector<std::int64_t>& sizes) {
  if (!PyTuple_Check(shape)) throw binding_type_error("hookscope: a shape is a tuple of ints (torch.Size)");
  const Py_ssize_t n = PyTuple_GET_SIZE(shape);
  for (Py_ssize_t i = 0; i < n; ++i) {
    const long long d = PyLong_AsLongLong(PyTuple_GET_ITEM(shape, i));
    if (d == -1 && PyErr_Occurred()) throw py::error_already_set();
    if (d < 0) throw py::value_error("hookscope: a negative dimension in a shape");
    sizes.push_back(d);
  }
}

std::vector<std::int64_t> shape_of(PyObject* shape) {
  std::vector<std::int64_t> out;
  append_shape(shape, out);
  return out;
}

hookscope::value with_shapes(const hookscope::value& v, PyObject* shapes, std::size_t& next);

// with_shapes' cases: a tensor takes the next shape, a container its children's, any other leaf is the template's.
struct shapes_filler {
  const hookscope::value& v;
  PyObject* shapes;
  std::size_t& next;

  std::vector<hookscope::value> items(const std::vector<hookscope::value>& children) const {
    std::vector<hookscope::value> out;
    out.reserve(children.size());
    for (const hookscope::value& x : children) out.push_back(with_shapes(x, shapes, next));
    return out;
  }
  hookscope::value_fields fields(const hookscope::value_fields& children) const {
    hookscope::value_fields out;
    out.reserve(children.size());
    for (const auto& [name, x] : children) out.emplace_back(name, with_shapes(x, shapes, next));
    return out;
  }

  hookscope::value operator()(hookscope::value_node::tensor t) const {
    hookscope::tensor_spec filled{.shape = shape_of(PyTuple_GET_ITEM(shapes, static_cast<Py_ssize_t>(next))),
                                  .dtype = t.spec.dtype};
    ++next;
    return hookscope::value(std::move(filled));
  }
  hookscope::value operator()(hookscope::value_node::tuple t) const { return hookscope::value::tuple(items(t.items)); }
  hookscope::value operator()(hookscope::value_node::list l) const { return hookscope::value::list(items(l.items)); }
  hookscope::value operator()(hookscope::value_node::dict d) const { return hookscope::value::dict(fields(d.entries)); }
  hookscope::value operator()(hookscope::value_node::structure s) const {
    return hookscope::value::structure(s.name, fields(s.fields));
  }
  hookscope::value operator()(hookscope::value_node::variant x) const {
    return hookscope::value::variant(x.index, with_shapes(x.alternative, shapes, next));
  }
  hookscope::value operator()(hookscope::value_node::none) const { return v; }
  hookscope::value operator()(hookscope::value_node::integer) const { return v; }
  hookscope::value operator()(hookscope::value_node::floating) const { return v; }
  hookscope::value operator()(hookscope::value_node::boolean) const { return v; }
  hookscope::value operator()(hookscope::value_node::string) const { return v; }
  hookscope::value operator()(hookscope::value_node::bytes) const { return v; }
  hookscope::value operator()(hookscope::value_node::opaque) const { return v; }
};

// v with its tensors' shapes taken, in order, from shapes[next...].
hookscope::value with_shapes(const hookscope::value& v, PyObject* shapes, std::size_t& next) {
  return hookscope::visit(v, shapes_filler{v, shapes, next});
}

// The template's call with these shapes, as value trees.
std::pair<hookscope::call_inputs, std::optional<hookscope::value>> call_of(const call_template& t, PyObject* shapes) {
  std::size_t next = 0;
  std::pair<hookscope::call_inputs, std::optional<hookscope::value>> out;
  for (const hookscope::value& a : t.record.inputs.args) out.first.args.push_back(with_shapes(a, shapes, next));
  for (const auto& [name, v] : t.record.inputs.kwargs)
    out.first.kwargs.emplace_back(name, with_shapes(v, shapes, next));
  if (t.record.result) out.second = with_shapes(*t.record.result, shapes, next);
  return out;
}

// The template's structure for this engine and the call's ranks (t.ranks), prepared from the call the first time;
// null once the engine has max_template_structures of the template (ranks that keep changing), whose calls then go
// as value trees rather than growing the engine's structures without bound.
const hookscope::call_structure* structure_for(hookscope::shape_engine& e, call_template& t, PyObject* shapes) {
  std::size_t mine = 0;
  for (const call_template::prepared& p : t.structures) {
    if (p.engine != &e) continue;
    if (p.ranks == t.ranks) return &p.structure;
    ++mine;
  }
  if (mine == max_template_structures) return nullptr;
  if (t.structures.size() == max_template_structures) {  // another engine's (an older observer's) makes room
    t.structures.erase(std::find_if(t.structures.begin(), t.structures.end(),
                                    [&](const call_template::prepared& p) { return p.engine != &e; }));
  }
  const auto [in, result] = call_of(t, shapes);
  t.structures.push_back({&e, t.ranks, e.add_structure(in, result ? &*result : nullptr)});
  return &t.structures.back().structure;
}

// add_call of the template's call with the shapes read into t.sizes and t.ranks.
bool add_call_sizes(hookscope::shape_engine& e, call_template& t, PyObject* shapes) {
  const hookscope::call_structure* structure = structure_for(e, t, shapes);
  if (!structure) {
    auto [in, result] = call_of(t, shapes);
    return result ? e.add_call(std::move(in), std::move(*result)) : e.add_call(std::move(in));
  }
  try {
    return e.add_call(*structure, t.sizes);
  } catch (const hookscope::argument_error&) {
    // Not this engine's structure: another engine was made where one the template served was (the sizes always
    // match the structure prepared for their ranks). Prepared again for this one.
    std::erase_if(t.structures, [&](const call_template::prepared& p) { return p.engine == &e; });
    return add_call_sizes(e, t, shapes);
  }
}

}  // namespace

call_template::call_template(hookscope::call_record parsed) : record(std::move(parsed)) {
  for (const hookscope::value& a : record.inputs.args) tensors += count_tensors(a);
  for (const auto& kw : record.inputs.kwargs) tensors += count_tensors(kw.second);
  if (record.result) tensors += count_tensors(*record.result);
}

bool add_call_shapes(hookscope::shape_engine& e, call_template& t, PyObject* shapes) {
  t.sizes.clear();
  t.ranks.clear();
  for (std::size_t i = 0; i < t.tensors; ++i) {
    const std::size_t before = t.sizes.size();
    append_shape(PyTuple_GET_ITEM(shapes, static_cast<Py_ssize_t>(i)), t.sizes);
    t.ranks.push_back(t.sizes.size() - before);
  }
  return add_call_sizes(e, t, shapes);
}

}  // namespace hookscope_python
