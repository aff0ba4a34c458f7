// hookscope-shapes' `summarize -o FILE`: how the summary reaches a file. A path to the command's standard output is
// written as `-o -` writes; the null device in place; a regular file (or none yet, or a symbolic link to either)
// replaced whole, never cut short; a FIFO, a socket, another device, a directory or an input of the summary refused.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace hookscope_shapes {

/// Writes the summary `text` to the file `output` (not "-"), read from `inputs`; throws input_error naming `output`.
void write_summary_file(const std::string& output, std::string_view text, const std::vector<std::string>& inputs);

}  // namespace hookscope_shapes
