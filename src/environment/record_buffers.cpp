// HOOKSCOPE_RECORD's per-thread buffers (see record_buffers.hpp).
#include "record_buffers.hpp"

#include <linux/futex.h>
#include <pthread.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <cstring>
#include <mutex>
#include <new>

HOOKSCOPE_DETAIL_BEGIN_NAMESPACE
namespace detail {
constinit thread_local record_thread* this_thread_buffers = nullptr;

namespace {

// Only the offsets of these first 8 bytes are read in a padding message.
static_assert(offsetof(record_message, kind) < 8 && sizeof(record_message) % 8 == 0);
static_assert(sizeof(open_call) % 8 == 0);

// Not zeroed: the kernel maps pages as they are first written, so a thread that records little costs little.
std::byte* uninitialised_bytes(std::size_t n) {
  return static_cast<std::byte*>(::operator new (n, std::align_val_t{64}));
}

constinit std::atomic<record_thread*> threads_head{nullptr};
constinit std::mutex threads_mutex;  // guards handing a released thread's buffers to a new thread
constinit thread_local bool this_thread_ending = false;

// The thread-specific key's destructor runs after the thread's thread_local destructors, whose calls are recorded:
// only then are its buffers released (and a call made later, by another key's destructor, takes the value tree).
pthread_key_t release_key;
void release_buffers(void* buffers) noexcept {
  this_thread_ending = true;
  this_thread_buffers = nullptr;
  static_cast<record_thread*>(buffers)->released.store(true, std::memory_order_release);
}
const bool key_made = pthread_key_create(&release_key, &release_buffers) == 0;

// A released thread's buffers that hold nothing any more: every message written, every open call finished (a call
// still open may end on another thread, which copies its arguments from them).
record_thread* reusable_buffers(std::size_t ring_bytes) noexcept {
  const std::lock_guard lock(threads_mutex);
  for (record_thread* t = threads_head.load(std::memory_order_acquire); t != nullptr; t = t->next) {
    if (!t->released.load(std::memory_order_acquire) || t->ring.capacity() != ring_bytes || t->ring.used() != 0)
      continue;
    if (t->calls.holds_unfinished()) continue;
    t->calls.clear();
    t->released.store(false, std::memory_order_relaxed);
    return t;
  }
  return nullptr;
}

}  // namespace

record_ring::record_ring(std::size_t capacity) : data_(uninitialised_bytes(capacity)), mask_(capacity - 1) {}

std::byte* record_ring::reserve(std::size_t size) noexcept {
  const std::uint64_t head = head_.load(std::memory_order_relaxed);
  const std::size_t offset = static_cast<std::size_t>(head & mask_);
  const std::size_t to_end = capacity() - offset;
  const std::size_t padding = size <= to_end ? 0 : to_end;  // a message is never split: the end is skipped
  if (head + padding + size - tail_seen_ > capacity()) {
    tail_seen_ = tail_.load(std::memory_order_acquire);
    if (head + padding + size - tail_seen_ > capacity()) return nullptr;
  }
  if (padding != 0) {
    auto* pad = reinterpret_cast<record_message*>(data_ + offset);
    pad->size = static_cast<std::uint32_t>(padding);
    pad->kind = record_message::padding;
  }
  reserved_at_ = head + padding;
  return data_ + (reserved_at_ & mask_);
}

void record_ring::wait_for_room(long timeout_ns) noexcept {
  const std::uint32_t seen = room_freed_.load(std::memory_order_acquire);
  waiting_.store(true);  // seq_cst, as the consumer's load: either it sees the flag, or this thread sees the room
  if (tail_.load() != tail_seen_) return;  // room was freed meanwhile
  const timespec timeout{0, timeout_ns};
  (void)::syscall(SYS_futex, reinterpret_cast<std::uint32_t*>(&room_freed_), FUTEX_WAIT_PRIVATE, seen, &timeout,
                  nullptr, 0);
}

void record_ring::wake_waiter() noexcept {
  (void)::syscall(SYS_futex, reinterpret_cast<std::uint32_t*>(&room_freed_), FUTEX_WAKE_PRIVATE, 1, nullptr, nullptr,
                  0);
}

void record_ring::commit(std::size_t size) noexcept { head_.store(reserved_at_ + size, std::memory_order_release); }

open_calls::open_calls(std::size_t capacity) : data_(uninitialised_bytes(capacity)), capacity_(capacity) {}

void open_calls::pop_finished() noexcept {
  while (last_ != open_call::none) {
    auto* top = reinterpret_cast<open_call*>(data_ + last_);
    const std::uint32_t state = top->state.load(std::memory_order_acquire);
    if (state != open_call::done && state != open_call::dropped) return;
    top_ = last_;
    last_ = top->below;
  }
}

open_call* open_calls::top_room(std::size_t* args_room) noexcept {
  pop_finished();
  if (top_ + sizeof(open_call) > capacity_) return nullptr;
  *args_room = capacity_ - top_ - sizeof(open_call);
  return reinterpret_cast<open_call*>(data_ + top_);
}

void open_calls::push(open_call* entry, std::uint32_t args_bytes) noexcept {
  entry->args_bytes = args_bytes;
  entry->size = static_cast<std::uint32_t>(round_up8(sizeof(open_call) + args_bytes));
  entry->below = last_;
  last_ = static_cast<std::uint32_t>(top_);
  top_ += entry->size;
}

bool open_calls::holds_unfinished() noexcept {
  bool unfinished = false;
  for_each([&](open_call& c) {
    const std::uint32_t state = c.state.load(std::memory_order_acquire);
    unfinished = unfinished || state == open_call::open || state == open_call::claimed;
  });
  return unfinished;
}

record_thread* make_this_record_thread(std::size_t ring_bytes, std::size_t open_bytes) noexcept {
  if (this_thread_buffers != nullptr || this_thread_ending) return this_thread_buffers;
  if (!key_made) return nullptr;
  record_thread* t = reusable_buffers(ring_bytes);
  if (t == nullptr) {
    try {
      t = new record_thread(ring_bytes, open_bytes);
    } catch (...) {
      return nullptr;
    }
    t->next = threads_head.load(std::memory_order_relaxed);
    while (!threads_head.compare_exchange_weak(t->next, t, std::memory_order_release, std::memory_order_relaxed)) {
    }
  }
  (void)pthread_setspecific(release_key, t);
  this_thread_buffers = t;
  return t;
}

record_thread* this_record_thread_if_any() noexcept { return this_thread_buffers; }

record_thread* first_record_thread() noexcept { return threads_head.load(std::memory_order_acquire); }

}  // namespace detail
HOOKSCOPE_DETAIL_END_NAMESPACE
