// hookscope._engine's methods bound with what Python's guard of them (hookscope/_arguments.py) needs, recorded where
// they are bound rather than read back from docstrings: each method's parameters (the names of its py::arg
// declarations, and which take a bool or a str, into which pybind11 would convert other values), kept on the class as
// __hookscope_parameters__. (Arguments pybind11 cannot convert raise a plain TypeError, which the binding's own
// refusals never are: binding_type_error.) Private to the extension (python/).
#pragma once

#include "engine_errors.hpp"

#include <pybind11/pybind11.h>

#include <array>
#include <cstddef>
#include <string>
#include <string_view>
#include <tuple>
#include <type_traits>
#include <utility>

namespace hookscope_python {

namespace detail {

// "bool" and "str": the types the guard checks before pybind11 converts other values into them.
template <class T>
constexpr const char* parameter_type() {
  using plain = std::remove_cvref_t<T>;
  if constexpr (std::is_same_v<plain, bool>) {
    return "bool";
  } else if constexpr (std::is_same_v<plain, std::string> || std::is_same_v<plain, std::string_view>) {
    return "str";
  } else {
    return "";
  }
}

// The parameter types of a bound callable, after `self`: a lambda or a free function takes `self` first, a member
// function has it implicitly.
template <class M>
struct lambda_parameters;
template <class R, class L, class Self, class... A>
struct lambda_parameters<R (L::*)(Self, A...) const> {
  using types = std::tuple<A...>;
};
template <class F>
struct method_parameters {
  using types = typename lambda_parameters<decltype(&F::operator())>::types;
};
template <class R, class C, class... A>
struct method_parameters<R (C::*)(A...) const> {
  using types = std::tuple<A...>;
};
template <class R, class C, class... A>
struct method_parameters<R (C::*)(A...)> {
  using types = std::tuple<A...>;
};
template <class R, class Self, class... A>
struct method_parameters<R (*)(Self, A...)> {
  using types = std::tuple<A...>;
};

// A constructor's factory takes no `self`: every parameter is one.
template <class M>
struct factory_parameters;
template <class R, class L, class... A>
struct factory_parameters<R (L::*)(A...) const> {
  using types = std::tuple<A...>;
};

template <class... A>
constexpr std::array<const char*, sizeof...(A) + 1> parameter_types(std::tuple<A...>*) {
  return {parameter_type<A>()..., ""};
}

// (name, "bool" | "str" | "") of each parameter a method declares with py::arg, in order.
template <class Types, class... Extra>
py::tuple parameters_of(const Extra&... extra) {
  constexpr auto types = parameter_types(static_cast<Types*>(nullptr));
  py::list out;
  std::size_t i = 0;
  [[maybe_unused]] const auto add = [&](const auto& e) {
    if constexpr (std::is_base_of_v<py::arg, std::remove_cvref_t<decltype(e)>>) {
      out.append(py::make_tuple(e.name, types[i < types.size() - 1 ? i : types.size() - 1]));
      ++i;
    }
  };
  (add(extra), ...);
  return py::tuple(out);
}

template <class Class>
py::dict parameter_table(Class& cls) {
  if (!py::hasattr(cls, "__hookscope_parameters__")) cls.attr("__hookscope_parameters__") = py::dict();
  return cls.attr("__hookscope_parameters__");
}

}  // namespace detail

/// cls.def(name, f, extra...), its parameters recorded.
template <class Class, class F, class... Extra>
Class& bind_method(Class& cls, const char* name, F&& f, const Extra&... extra) {
  using types = typename detail::method_parameters<std::decay_t<F>>::types;
  detail::parameter_table(cls)[name] = detail::parameters_of<types>(extra...);
  cls.def(name, std::forward<F>(f), extra...);
  return cls;
}

/// cls.def(py::init(factory), extra...), likewise.
template <class Class, class Factory, class... Extra>
Class& bind_init(Class& cls, Factory&& factory, const Extra&... extra) {
  using types = typename detail::factory_parameters<decltype(&std::decay_t<Factory>::operator())>::types;
  detail::parameter_table(cls)["__init__"] = detail::parameters_of<types>(extra...);
  cls.def(py::init(std::forward<Factory>(factory)), extra...);
  return cls;
}

}  // namespace hookscope_python
