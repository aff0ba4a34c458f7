// hookscope/output_formats.hpp — the ways to write inferred dynamic shapes, as one table that every front end reads:
// each format's name (the command line's `--format`, Python's `ds.write(format)`), a sentence for help texts, and its
// writers. A new format is a row here and its writer in `dynamic_shapes`.
//
// ```cpp
// for (const hookscope::output_format& f : hookscope::output_formats()) std::cout << f.name << ": " << f.write(ds);
// ```
#pragma once

#include "hookscope/config.hpp"
#include "hookscope/shapes.hpp"

#include <span>
#include <string>
#include <string_view>
#include <vector>

HOOKSCOPE_DETAIL_BEGIN_NAMESPACE

/// One way to write inferred dynamic shapes for a consumer (torch.export, trtexec, ONNX Runtime, ...).
struct output_format {
  std::string_view name;         ///< as the front ends spell it: "torch", "trtexec", ...
  std::string_view description;  ///< what it writes, for help texts
  /// The text; throws inference_error where the shapes cannot be written in this format.
  std::string (*write)(const dynamic_shapes&);
  /// The same text with containers in the record encoding (`--typed`), or null for a format without that form.
  std::string (*write_typed)(const dynamic_shapes&);
  /// The warnings to show beside the text: the shapes' own and the format's own, none where the text lists them.
  std::vector<inference_warning> (*warnings)(const dynamic_shapes&);
};

/// Every format, the default one ("torch") first.
std::span<const output_format> output_formats() noexcept;

/// The format written when none is named (the command without --format, Python's `write()`): the table's first.
const output_format& default_output_format() noexcept;

/// The format named `name`, or null.
const output_format* find_output_format(std::string_view name) noexcept;

/// The formats' names as a sentence lists them: "torch, trtexec, ..., onnx or report".
std::string output_format_names(std::string_view last_separator = " or ");

/// The names of the formats that have a typed form (`write_typed`), listed as output_format_names() lists them.
std::string typed_output_format_names(std::string_view last_separator = " or ");

HOOKSCOPE_DETAIL_END_NAMESPACE
