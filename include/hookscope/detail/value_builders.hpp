// hookscope/detail/value_builders.hpp — how capture builds the value tree's containers: one value at a time, through
// functions compiled in the library (src/value.cpp), so that a translation unit that captures compiles no vector of
// values or of fields of its own.
#pragma once

#include "hookscope/detail/config.hpp"
#include "hookscope/detail/value.hpp"

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

HOOKSCOPE_DETAIL_BEGIN_NAMESPACE

namespace detail {

/// Builds a tuple or a list from values made one by one, in the library (no vector code in the caller's
/// translation unit): what capture uses for ranges and tuples.
class items_builder {
 public:
  explicit items_builder(std::size_t expected);
  items_builder(const items_builder&) = delete;
  items_builder& operator=(const items_builder&) = delete;
  ~items_builder();
  void add(value&& v);
  value tuple() &&;
  value list() &&;

 private:
  std::vector<value> items_;
};

/// Builds a dict or a struct from (name, value) pairs made one by one, in the library: what capture uses for
/// maps, aggregates, Hana structs and flatten_traits classes.
class fields_builder {
 public:
  explicit fields_builder(std::size_t expected);
  fields_builder(const fields_builder&) = delete;
  fields_builder& operator=(const fields_builder&) = delete;
  ~fields_builder();
  void add(std::string_view name, value&& v);
  value dict() &&;
  value structure(std::string_view name) &&;

 private:
  value_fields fields_;
};

}  // namespace detail

HOOKSCOPE_DETAIL_END_NAMESPACE
