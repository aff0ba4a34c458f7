// Thread records: each thread's emission state (its hazard slots and current context), made on the thread's
// first use and recycled for a later thread when it ends.
//
// A record is never freed: writers scan the list of every record made without a lock, so records stay
// as many as threads were ever alive at once. A thread gives its record back from a pthread key's
// destructor, which runs after the thread's thread_locals are destroyed, so that a thread_local whose
// destructor fires an observer still finds the record (and re-arms the key if it had to make one again).
#include "internal.hpp"

#if HOOKSCOPE_ENABLED

#include <mutex>

#include <pthread.h>

HOOKSCOPE_DETAIL_BEGIN_NAMESPACE
namespace detail {

constinit thread_local std::uint64_t tls_thread_id = 0;

std::uint64_t this_thread_id() noexcept {
  if (tls_thread_id == 0) tls_thread_id = callbacks().next_thread_id.fetch_add(1, std::memory_order_relaxed);
  return tls_thread_id;
}

void release_record(void* raw) noexcept {
  auto* record = static_cast<thread_record*>(raw);
  if (record == nullptr) return;
  // Dropping the context may run callable destructors, which may fire observers: the record stays ours
  // until then. Anything that makes a record again after this re-arms the key for another round.
  while (context_base* ctx = record->ctx) {
    record->ctx = nullptr;
    unref_context(state_of(ctx));
  }
  {
    garbage trash;
    flush_deferred(*record, trash);
  }
  if (tls_record == record) {
    tls_record = nullptr;
    tls_fast_record = nullptr;
  }
  auto& store = callbacks();
  const std::lock_guard lock(store.mutex);
  record->next_free = store.free_records;
  store.free_records = record;
}

thread_record& make_thread_record() {
  auto& store = callbacks();
  thread_record* record = nullptr;
  {
    const std::lock_guard lock(store.mutex);
    record = store.free_records;
    if (record != nullptr) {
      store.free_records = record->next_free;
    } else {
      record = new thread_record;
      record->next = store.records.load(std::memory_order_relaxed);
      store.records.store(record, std::memory_order_release);
      store.record_count.fetch_add(1, std::memory_order_relaxed);
    }
  }
  record->thread_id = this_thread_id();
  tls_record = record;
  if (asymmetric_fences_on()) tls_fast_record = record;  // chosen once, by callbacks() above
  if (store.record_key_made) pthread_setspecific(store.record_key, record);
  return *record;
}

emission_slot& free_slot(thread_record& record) {
  for (slot_chunk* chunk = &record.first;; chunk = chunk->next.load(std::memory_order_acquire)) {
    for (emission_slot& s : chunk->slots) {
      if (!s.in_use()) return s;
    }
    if (chunk->next.load(std::memory_order_relaxed) == nullptr) {
      chunk->next.store(new slot_chunk, std::memory_order_release);  // writers scan it from now on
    }
  }
}

std::size_t thread_records_made() noexcept { return callbacks().record_count.load(std::memory_order_relaxed); }

}  // namespace detail
HOOKSCOPE_DETAIL_END_NAMESPACE

#endif  // HOOKSCOPE_ENABLED
