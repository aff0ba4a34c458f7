// The errors of capture that need text: compiled once here, not in every translation unit that captures.
#include "hookscope/detail/capture_rules.hpp"
#include "hookscope/detail/tensor_data.hpp"
#include "hookscope/exceptions.hpp"

#include <string>

HOOKSCOPE_DETAIL_BEGIN_NAMESPACE
namespace detail {
namespace {

// "[1,-3]". (Appended piece by piece: GCC 12 at -O3 reports a false -Wrestrict for `"literal" + std::string`, bug
// 105329.)
void append_shape(std::string& message, const tensor_spec& spec) {
  message += '[';
  for (std::size_t i = 0; i < spec.shape.size(); ++i) {
    if (i != 0) message += ',';
    message += std::to_string(spec.shape[i]);
  }
  message += ']';
}

}  // namespace

void throw_negative_dimension(const tensor_spec& spec, std::size_t index) {
  std::string message = "capture: tensor_traits<T>::shape gave the negative dimension ";
  message += std::to_string(spec.shape[index]);
  message += " at index ";
  message += std::to_string(index);
  message += " of ";
  append_shape(message, spec);
  throw value_error(message);
}

void throw_tensor_data_size(const tensor_spec& spec, std::size_t bytes) {
  std::string message = "capture: tensor_traits<T>::data gave ";
  message += std::to_string(bytes);
  message += " bytes for a tensor of shape ";
  append_shape(message, spec);
  message += " and dtype ";
  message += to_string(spec.dtype);
  message += ", which holds ";
  message += std::to_string(static_cast<std::size_t>(spec.numel()) * dtype_size(spec.dtype));
  throw value_error(message);
}

}  // namespace detail
HOOKSCOPE_DETAIL_END_NAMESPACE
