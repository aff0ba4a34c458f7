// The errors of capture that need text: compiled once here, not in every translation unit that captures.
#include "hookscope/detail/capture_rules.hpp"
#include "hookscope/value_errors.hpp"

#include <string>

HOOKSCOPE_DETAIL_BEGIN_NAMESPACE
namespace detail {

void throw_negative_dimension(const tensor_spec& spec, std::size_t index) {
  // Appended piece by piece: GCC 12 at -O3 reports a false -Wrestrict for `"literal" + std::string` (bug 105329).
  std::string message = "hookscope: capture: tensor_traits<T>::shape gave the negative dimension ";
  message += std::to_string(spec.shape[index]);
  message += " at index ";
  message += std::to_string(index);
  message += " of [";
  for (std::size_t i = 0; i < spec.shape.size(); ++i) {
    if (i != 0) message += ',';
    message += std::to_string(spec.shape[i]);
  }
  message += ']';
  throw value_error(message);
}

}  // namespace detail
HOOKSCOPE_DETAIL_END_NAMESPACE
