// Pairs each call's pre and post callbacks into one record (see detail/call_pairing.hpp).
#include "hookscope/detail/call_pairing.hpp"

#include <utility>

HOOKSCOPE_DETAIL_BEGIN_NAMESPACE
namespace detail {

parameter_list parameters_of(const function_info& function) {
  parameter_list parameters;
  parameters.reserve(function.param_names.size());
  for (std::string_view name : function.param_names) parameters.push_back({std::string(name)});
  return parameters;
}

void call_pairing::begin(const void* call_id, value_fields kwargs) {
  const auto start = std::chrono::steady_clock::now();
  const std::lock_guard lock(mutex_);
  pending_.push_back({call_id, std::move(kwargs), start});
}

std::optional<call_record> call_pairing::end(const void* call_id, bool threw) {
  const auto end = std::chrono::steady_clock::now();
  call_record record;
  {
    const std::lock_guard lock(mutex_);
    auto it = pending_.begin();
    while (it != pending_.end() && it->call_id != call_id) ++it;
    if (it == pending_.end()) return std::nullopt;
    record.inputs.kwargs = std::move(it->kwargs);
    record.latency_ns = std::chrono::duration_cast<std::chrono::nanoseconds>(end - it->start).count();
    *it = std::move(pending_.back());
    pending_.pop_back();
  }
  record.function = std::string(function_->name);
  record.threw = threw;
  return record;
}

std::size_t call_pairing::in_flight() const {
  const std::lock_guard lock(mutex_);
  return pending_.size();
}

}  // namespace detail
HOOKSCOPE_DETAIL_END_NAMESPACE
