// hookscope/detail/call_inputs.hpp — parameters and call_inputs, below the call pairing that fills them;
// hookscope/call_inputs.hpp is their documented front door.
#pragma once

#include "hookscope/detail/config.hpp"
#include "hookscope/detail/value.hpp"

#include <cstddef>
#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <vector>

HOOKSCOPE_DETAIL_BEGIN_NAMESPACE

/// `store_n_calls` value that keeps every call.
inline constexpr std::size_t unlimited = std::numeric_limits<std::size_t>::max();

/// How a parameter takes its arguments (Python's parameter kinds; C++ parameters are all `positional_or_keyword`).
enum class parameter_kind : std::uint8_t {
  positional_or_keyword,  ///< a named parameter ("kind" omitted in records)
  var_positional,         ///< `*args`: the extra positional arguments ("kind":"var_positional")
  var_keyword,            ///< `**kwargs`: the extra keyword arguments ("kind":"var_keyword")
};

// Members without an initializer get `{}` (here and below): GCC's -Wmissing-field-initializers then accepts
// aggregates written in part, such as `{"input_ids"}`.

/// One parameter of an observed function.
struct parameter {
  std::string name{};
  parameter_kind kind = parameter_kind::positional_or_keyword;
  /// The default value: absent when there is none; a none value for a default of None / nullptr.
  std::optional<value> default_value{};

  friend bool operator==(const parameter&, const parameter&) = default;
};

/// A function's parameters, in order.
using parameter_list = std::vector<parameter>;

/// The inputs of one call: positional arguments, then keyword arguments in call order.
struct call_inputs {
  std::vector<value> args{};
  value_fields kwargs{};

  friend bool operator==(const call_inputs&, const call_inputs&) = default;
};

HOOKSCOPE_DETAIL_END_NAMESPACE
