// HOOKSCOPE_RECORD's per-thread buffers: what a recording thread copies its calls into without a lock, an allocation
// or any formatting, for the writer (record.cpp) to format off the calling thread.
//
// Each recording thread has
//   - open calls: a stack of the calls it began and has not finished, each with its arguments in binary form
//     (detail/record_encoding.hpp). A call finds its entry through the call itself (erased_call's recording word), so
//     the thread or fiber that ends it (this one or another) claims it; the owner pops finished entries from the top.
//   - a ring: a single-producer, single-consumer queue of finished calls (record_message + arguments + result).
//     The producer is the thread, the consumer the writer, holding the writer's lock.
// Threads' buffers are never freed (a signal handler walks them, calls in flight may still point into them); those of
// a thread that ended are handed to the next thread that records once they hold nothing.
#pragma once

#include "hookscope/config.hpp"

#include <atomic>
#include <cstddef>
#include <cstdint>

HOOKSCOPE_DETAIL_BEGIN_NAMESPACE
namespace detail {

/// A finished call in a ring: this header, `args_bytes` of arguments, `result_bytes` of result, padded to 8 bytes.
struct record_message {
  enum : std::uint8_t { padding, call };  // a padding message (its first 8 bytes only) fills a ring's end
  std::uint32_t size;                     // the whole message, a multiple of 8
  std::uint8_t kind;
  bool threw;
  bool has_result;
  std::uint32_t given;
  std::uint32_t args_bytes;
  std::uint32_t result_bytes;
  const void* function;  // the recorded function (record.cpp)
  std::int64_t latency_ticks;
  std::int64_t end_ticks;  // when the call ended: the writer merges the threads' rings in this order

  const std::byte* args() const noexcept { return reinterpret_cast<const std::byte*>(this + 1); }
  const std::byte* result() const noexcept { return args() + args_bytes; }
};

/// A call begun on a thread and not yet finished, with its arguments in binary form after it.
struct open_call {
  enum : std::uint32_t { open, claimed, done, dropped };
  std::atomic<std::uint32_t> state;
  std::uint32_t size;   // the whole entry, a multiple of 8
  std::uint32_t below;  // the offset of the entry below it in its stack, or `none`
  std::uint32_t given;  // arguments given
  std::uint32_t args_bytes;
  const void* function;      // the recorded function
  const void* call;          // its call_id: the calls noted as left (left_calls.hpp) are found by it
  std::uint64_t left_since;  // left_calls_so_far() when it began: only later notes can be its own
  std::uint64_t generation;  // the process's fork generation when it began
  static constexpr std::uint32_t none = 0xffffffffU;

  std::byte* args() noexcept { return reinterpret_cast<std::byte*>(this + 1); }
};

constexpr std::size_t round_up8(std::size_t n) noexcept { return (n + 7) & ~std::size_t{7}; }

/// A single-producer, single-consumer ring of record_messages (positions count bytes since the start, never wrap).
class record_ring {
 public:
  /// `capacity`: a power of two.
  explicit record_ring(std::size_t capacity);
  record_ring(const record_ring&) = delete;
  record_ring& operator=(const record_ring&) = delete;

  std::size_t capacity() const noexcept { return mask_ + 1; }
  /// Producer: room for a message of `size` bytes (a multiple of 8, at most capacity() / 2), or null when full.
  std::byte* reserve(std::size_t size) noexcept;
  /// Producer: publishes the message reserved last, of `size` bytes.
  void commit(std::size_t size) noexcept;
  /// Bytes committed and not yet consumed (approximate for the producer).
  std::size_t used() const noexcept {
    return static_cast<std::size_t>(head_.load(std::memory_order_acquire) - tail_.load(std::memory_order_acquire));
  }

  /// Consumer: the position after the last committed message.
  std::uint64_t committed() const noexcept { return head_.load(std::memory_order_acquire); }
  /// Consumer: the oldest message committed before position `until` (committed()), padding skipped, or null.
  const record_message* front(std::uint64_t until) noexcept {
    std::uint64_t tail = tail_.load(std::memory_order_relaxed);
    while (tail < until) {
      const auto* m = reinterpret_cast<const record_message*>(data_ + (tail & mask_));
      if (m->kind == record_message::call) return m;
      tail += m->size;
      tail_.store(tail, std::memory_order_release);
    }
    return nullptr;
  }
  /// Consumer: releases the message front() gave.
  void pop(const record_message& m) noexcept {
    tail_.store(tail_.load(std::memory_order_relaxed) + m.size, std::memory_order_release);
  }
  /// Producer: sleeps until the consumer freed room (wake_producer), for at most `timeout_ns`.
  void wait_for_room(long timeout_ns) noexcept;
  /// Consumer: wakes the producer if it waits for room.
  void wake_producer() noexcept {
    if (!waiting_.load(std::memory_order_acquire) || !waiting_.exchange(false, std::memory_order_acq_rel)) return;
    room_freed_.fetch_add(1, std::memory_order_release);
    wake_waiter();
  }
  /// Forgets every message (a forked child: its parent writes them). With no producer running.
  void discard() noexcept { tail_.store(head_.load(std::memory_order_relaxed), std::memory_order_relaxed); }

 private:
  void wake_waiter() noexcept;

  std::byte* data_;
  std::uint64_t mask_;
  std::atomic<bool> waiting_{false};                // the producer sleeps on room_freed_
  std::atomic<std::uint32_t> room_freed_{0};        // a futex word
  alignas(64) std::atomic<std::uint64_t> head_{0};  // the producer's line
  std::uint64_t tail_seen_ = 0;                     // the consumer's position as the producer last read it
  std::uint64_t reserved_at_ = 0;                   // where the reserved message starts (after any padding)
  alignas(64) std::atomic<std::uint64_t> tail_{0};  // the consumer's line
};

/// One thread's stack of open calls (only its thread pushes and pops; any thread claims an entry).
class open_calls {
 public:
  explicit open_calls(std::size_t capacity);
  open_calls(const open_calls&) = delete;
  open_calls& operator=(const open_calls&) = delete;

  /// Pops the finished entries from the top, then returns room for a new entry and the bytes its arguments may take
  /// (`*args_room`), or null when the stack is full. The entry is pushed by push().
  open_call* top_room(std::size_t* args_room) noexcept;
  /// Pushes the entry made in top_room's room, with `args_bytes` of arguments.
  void push(open_call* entry, std::uint32_t args_bytes) noexcept;
  /// Pops the finished entries from the top.
  void pop_finished() noexcept;
  /// Calls `f(open_call&)` on every entry in the stack.
  template <class F>
  void for_each(F f) noexcept {
    for (std::uint32_t at = last_; at != open_call::none;) {
      auto* entry = reinterpret_cast<open_call*>(data_ + at);
      f(*entry);
      at = entry->below;
    }
  }
  bool empty() const noexcept { return last_ == open_call::none; }
  /// Whether any entry is still open or claimed (the stack cannot be handed to another thread).
  bool holds_unfinished() noexcept;
  /// Forgets every entry (a forked child's, or a stack handed to another thread once it holds nothing unfinished).
  void clear() noexcept {
    top_ = 0;
    last_ = open_call::none;
  }

 private:
  std::byte* data_;
  std::size_t capacity_;
  std::size_t top_ = 0;                   // bytes in use
  std::uint32_t last_ = open_call::none;  // the offset of the top entry
};

/// A recording thread's buffers.
struct record_thread {
  record_thread(std::size_t ring_bytes, std::size_t open_bytes) : ring(ring_bytes), calls(open_bytes) {}
  record_ring ring;
  open_calls calls;
  std::uint64_t left_seen = 0;        // the notes of left_calls.hpp read so far
  std::atomic<bool> released{false};  // its thread ended
  record_thread* next = nullptr;      // the list of every thread's buffers (set before it is published)
};

extern constinit thread_local record_thread* this_thread_buffers;
/// this_record_thread's first call on a thread (record_buffers.cpp).
record_thread* make_this_record_thread(std::size_t ring_bytes, std::size_t open_bytes) noexcept;

/// The calling thread's buffers, made at its first call with these sizes; null when the thread is ending or the
/// memory cannot be had. Inline: every recorded call takes them, twice.
inline record_thread* this_record_thread(std::size_t ring_bytes, std::size_t open_bytes) noexcept {
  if (record_thread* t = this_thread_buffers) [[likely]] {
    return t;
  }
  return make_this_record_thread(ring_bytes, open_bytes);
}

/// The calling thread's buffers if it has any (a fork handler's look), else null.
record_thread* this_record_thread_if_any() noexcept;

/// The first of every thread's buffers (then `next`): async-signal-safe.
record_thread* first_record_thread() noexcept;

}  // namespace detail
HOOKSCOPE_DETAIL_END_NAMESPACE
