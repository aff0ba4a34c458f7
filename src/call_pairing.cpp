// Pairs each call's pre and post callbacks into one record (see detail/call_pairing.hpp).
#include "hookscope/detail/call_pairing.hpp"

#include "left_calls.hpp"
#include "tick_clock.hpp"

#include <cmath>
#include <mutex>
#include <new>
#include <unordered_map>
#include <utility>

HOOKSCOPE_DETAIL_BEGIN_NAMESPACE
namespace detail {

struct call_pairing::table {
  struct pending {
    value_fields kwargs;
    std::uint64_t since;  // left_calls_so_far() when the call began: only later notes can be its own
  };
  std::unordered_map<const void*, pending> entries;  // by call_id
  std::uint64_t left_seen = 0;                       // the notes of left_calls.hpp read so far
};

parameter_list parameters_of(const function_info& function) {
  parameter_list parameters;
  parameters.reserve(function.param_names.size());
  for (std::string_view name : function.param_names) parameters.push_back({std::string(name)});
  return parameters;
}

call_pairing::call_pairing(const function_info& function) : function_(&function), table_(std::make_unique<table>()) {
  // Notes made before this pairing existed concern no entry of it.
  table_->left_seen = left_calls_so_far();
}

call_pairing::~call_pairing() = default;

std::size_t call_pairing::drop_left_calls() {
  table& t = *table_;
  if (left_calls_so_far() == t.left_seen) return 0;  // the common case: one load
  std::size_t dropped = 0;
  t.left_seen = read_left_calls(t.left_seen, [&](const void* call, std::uint64_t number) {
    const auto it = t.entries.find(call);
    if (it != t.entries.end() && it->second.since < number) {
      t.entries.erase(it);
      ++dropped;
    }
  });
  size_.store(t.entries.size(), std::memory_order_relaxed);
  return dropped;
}

std::size_t call_pairing::begin(const erased_call& call, value_fields kwargs) {
  (void)take_start(call);
  const std::uint64_t since = left_calls_so_far();
  const std::lock_guard lock(mutex_);
  std::size_t dropped = drop_left_calls();
  auto [it, added] = table_->entries.try_emplace(call.call_id());
  if (!added) ++dropped;  // a call that ended without its post callback left this entry
  it->second = {std::move(kwargs), since};
  size_.store(table_->entries.size(), std::memory_order_relaxed);
  return dropped;
}

std::size_t call_pairing::skip(const erased_call& call) {
  // An entry at this address was stored before this call began: on this thread, or on one whose end or hand-over (a
  // join, a fiber resumed elsewhere) happens before it, so this load sees it.
  if (size_.load(std::memory_order_relaxed) == 0) return 0;
  const std::lock_guard lock(mutex_);
  const std::size_t dropped = drop_left_calls() + table_->entries.erase(call.call_id());
  size_.store(table_->entries.size(), std::memory_order_relaxed);
  return dropped;
}

void finish_record(call_record& record, const function_info& function, const erased_call& call,
                   std::int64_t end_ticks) {
  record.function = std::string(function.name);
  record.threw = static_cast<bool>(call.exception());
  record.latency_ns = latency_ns(ticks_since_start(call, end_ticks), tick_clock::recent_ns_per_tick(end_ticks));
}

std::optional<call_record> call_pairing::end(const erased_call& call, std::size_t* abandoned) {
  const std::int64_t end_ticks = tick_clock::now();
  call_record record;
  {
    const std::lock_guard lock(mutex_);
    const std::size_t dropped = drop_left_calls();
    if (abandoned != nullptr) *abandoned = dropped;
    const auto it = table_->entries.find(call.call_id());
    if (it == table_->entries.end()) return std::nullopt;
    record.inputs.kwargs = std::move(it->second.kwargs);
    table_->entries.erase(it);
    size_.store(table_->entries.size(), std::memory_order_relaxed);
  }
  finish_record(record, *function_, call, end_ticks);
  return record;
}

std::size_t call_pairing::in_flight() const {
  const std::lock_guard lock(mutex_);
  return table_->entries.size();
}

void call_pairing::reset_lock_in_child() noexcept { new (&mutex_) std::mutex; }

void call_pairing::unlock_after_fork(bool in_child) noexcept {
  if (in_child) {
    table_->entries.clear();
    size_.store(0, std::memory_order_relaxed);
  }
  mutex_.unlock();
}

}  // namespace detail
HOOKSCOPE_DETAIL_END_NAMESPACE
