// src/cli/options.hpp — hookscope-shapes' command line: the options each command takes, parsed and checked (which
// command accepts which option, which exclude each other), and the two kinds of bad input the command reports with
// exit status 2. Private to the command (src/cli/).
#pragma once

#include "hookscope/output_formats.hpp"
#include "hookscope/shapes.hpp"
#include "hookscope/value.hpp"

#include <cstddef>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace hookscope_shapes {

inline constexpr std::string_view program = "hookscope-shapes";

/// What --help prints.
std::string usage_text();

// Bad command line: exit 2 with a hint to --help.
class usage_error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Bad input that is not a record line (a file that does not open, a function that is not there): exit 2.
class input_error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

enum class command { infer, args, summarize };

struct options {
  bool help = false;
  command what = command::infer;
  std::vector<std::string> files;
  std::optional<std::string> function;
  std::size_t store_n_calls = 3;
  bool store_n_calls_given = false;
  std::string output = "-";
  std::optional<std::string> signature_from;
  std::vector<std::pair<hookscope::input_key, hookscope::value>> values_if_missing;
  hookscope::dynamic_shapes_options shapes;
  const hookscope::output_format* format = &hookscope::default_output_format();
  std::optional<std::size_t> index;
  bool as_args_kwargs = false;
  bool flat = false;
  bool typed = false;
  bool avoid_specialization = false;
  std::vector<std::string> remove_inputs;
};

/// How this command spells the library's options ("--batch" for batch_dimension_for).
std::string_view option_spelling(hookscope::option_id id) noexcept;

/// The argument options the command line gives (`args`).
hookscope::argument_options argument_options_of(const options& o);

/// The command line, checked; throws usage_error naming what is wrong.
options parse_options(int argc, char** argv);

}  // namespace hookscope_shapes
