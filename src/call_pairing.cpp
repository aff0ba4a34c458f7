// Pairs each call's pre and post callbacks into one record (see detail/call_pairing.hpp).
#include "hookscope/detail/call_pairing.hpp"

#include <utility>

HOOKSCOPE_DETAIL_BEGIN_NAMESPACE
namespace detail {
namespace {

// Trivial and constant-initialised: valid in static and thread-local destructors, no guard.
constinit thread_local char thread_tag = 0;
const void* this_thread() noexcept { return &thread_tag; }

}  // namespace

parameter_list parameters_of(const function_info& function) {
  parameter_list parameters;
  parameters.reserve(function.param_names.size());
  for (std::string_view name : function.param_names) parameters.push_back({std::string(name)});
  return parameters;
}

std::size_t call_pairing::find(const void* call, const void* thread) const {
  for (std::size_t i = pending_.size(); i > 0; --i) {
    if (pending_[i - 1].call == call && pending_[i - 1].thread == thread) return i - 1;
  }
  return pending_.size();
}

std::size_t call_pairing::erase_from(std::size_t from, const void* thread) {
  std::size_t kept = from;
  for (std::size_t i = from; i < pending_.size(); ++i) {
    if (pending_[i].thread != thread) pending_[kept++] = std::move(pending_[i]);
  }
  const std::size_t erased = pending_.size() - kept;
  pending_.resize(kept);
  size_.store(kept, std::memory_order_relaxed);
  return erased;
}

std::size_t call_pairing::begin(const void* call_id, value_fields kwargs) {
  const void* thread = this_thread();
  const auto start = std::chrono::steady_clock::now();
  const std::lock_guard lock(mutex_);
  const std::size_t abandoned = erase_from(find(call_id, thread), thread);
  pending_.push_back({call_id, thread, std::move(kwargs), start});
  size_.store(pending_.size(), std::memory_order_relaxed);
  return abandoned;
}

std::size_t call_pairing::skip(const void* call_id) {
  // An entry this thread left is seen here: it was stored by this thread, before this call began.
  if (size_.load(std::memory_order_relaxed) == 0) return 0;
  const void* thread = this_thread();
  const std::lock_guard lock(mutex_);
  return erase_from(find(call_id, thread), thread);
}

std::optional<call_record> call_pairing::end(const void* call_id, bool threw, std::size_t* abandoned) {
  const auto end = std::chrono::steady_clock::now();
  const void* thread = this_thread();
  call_record record;
  {
    const std::lock_guard lock(mutex_);
    const std::size_t i = find(call_id, thread);
    if (i == pending_.size()) return std::nullopt;
    record.inputs.kwargs = std::move(pending_[i].kwargs);
    record.latency_ns = std::chrono::duration_cast<std::chrono::nanoseconds>(end - pending_[i].start).count();
    const std::size_t erased = erase_from(i, thread);  // the call's own entry and the abandoned ones after it
    if (abandoned != nullptr) *abandoned = erased - 1;
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
