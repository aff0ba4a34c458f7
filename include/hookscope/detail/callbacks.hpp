// Internals of observers: callback storage, copy-on-write lists and the lock-free emission protocol.
//
// Emission never takes a lock. Each thread owns a `thread_record` whose slots publish, per nesting
// level, the list being walked (a hazard pointer, so writers never free it underneath) and the
// callback being run (so `subscription::reset` can wait for it to finish). Readers publish with a
// plain store plus a compiler fence; writers pay for the matching process-wide fence (Linux
// membarrier). Where membarrier is missing, and under ThreadSanitizer, both sides use seq_cst atomics.
#pragma once

#include "hookscope/config.hpp"

#if HOOKSCOPE_ENABLED

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <string_view>
#include <type_traits>

HOOKSCOPE_DETAIL_BEGIN_NAMESPACE
namespace detail {

struct context_state;
class observer_core;

/// A user callable with shared ownership: a copied context shares it with the original one.
struct callable_base {
  using erased_invoke = void (*)();
  erased_invoke invoke;                       // really void(*)(callable_base*, const Args&...)
  void (*destroy)(callable_base*) noexcept;
  std::size_t refs = 1;                       // guarded by the callback mutex
};

/// Small trivially copyable arguments cross the type-erased call in registers, not through memory.
template <class T>
using pass_t = std::conditional_t<std::is_trivially_copyable_v<T> && sizeof(T) <= 2 * sizeof(void*), T, const T&>;

template <class... Args>
struct callable_signature {
  using invoke_type = void (*)(callable_base*, pass_t<Args>...);
};

template <class F, class... Args>
struct callable_impl final : callable_base {
  F fn;

  template <class G>
  explicit callable_impl(G&& g) : callable_base{erase(&call), &destroy_self}, fn(static_cast<G&&>(g)) {}

  static void call(callable_base* self, pass_t<Args>... args) { static_cast<callable_impl*>(self)->fn(args...); }
  static void destroy_self(callable_base* self) noexcept { delete static_cast<callable_impl*>(self); }
  static erased_invoke erase(typename callable_signature<Args...>::invoke_type f) noexcept {
    return reinterpret_cast<erased_invoke>(f);
  }
};

/// One registration of a callable in one observer, either global (ctx == nullptr) or in a context.
struct callback_node {
  std::atomic<bool> removed{false};
  const context_state* ctx = nullptr;         // identity only, never dereferenced by emission
  callable_base* callable = nullptr;
  // Guarded by the callback mutex:
  observer_core* owner = nullptr;             // null once removed or its observer is gone
  std::uint64_t id = 0;
  std::uint32_t refs = 0;                     // lists holding the node + a subscription handle
};

/// What emission needs of one registration, copied out of the node so a walk touches one cache line per entry.
struct callback_entry {
  const context_state* ctx;                   // null: global
  callable_base* callable;
  callable_base::erased_invoke invoke;
  callback_node* node;
};

/// An immutable snapshot of an observer's callbacks: the global ones first, then the context ones.
struct callback_list {
  std::uint32_t size = 0;
  std::uint32_t global_count = 0;

  const callback_entry* begin() const noexcept { return reinterpret_cast<const callback_entry*>(this + 1); }
  const callback_entry* end() const noexcept { return begin() + size; }
  callback_entry* data() noexcept { return reinterpret_cast<callback_entry*>(this + 1); }
};

/// `observer_core::listeners_`: nobody, anybody (walk the list), or the one context all callbacks are in.
inline constexpr std::uintptr_t no_listener = 0;
inline constexpr std::uintptr_t any_listener = 1;

struct emission_slot {
  std::atomic<const callback_list*> list{nullptr};
  std::atomic<const callback_node*> node{nullptr};
};

struct slot_chunk {
  static constexpr std::uint32_t size = 16;
  emission_slot slots[size];
  std::atomic<slot_chunk*> next{nullptr};
};

/// Per-thread emission state; never freed, reused by later threads.
struct thread_record {
  slot_chunk first;                           // nesting levels 0..15; deeper levels chain chunks
  std::uint32_t depth = 0;                    // only touched by the owning thread
  context_state* ctx = nullptr;               // current context (a strong reference), owner only
  thread_record* next = nullptr;              // every record ever made, for writers to scan
  std::atomic<bool> in_use{true};
};

inline constinit thread_local thread_record* tls_record = nullptr;
inline constinit std::atomic<bool> asymmetric_fences{false};

thread_record& make_thread_record();
emission_slot& deep_slot(thread_record& record, std::uint32_t depth);

inline thread_record& this_thread_record() {
  thread_record* r = tls_record;
  return r != nullptr ? *r : make_thread_record();
}

/// Stores a hazard so that a writer's later scan is guaranteed to see it (the reader's half of the fence).
template <class T>
inline void publish(std::atomic<const T*>& slot, const T* value) noexcept {
#if HOOKSCOPE_DETAIL_TSAN
  slot.store(value, std::memory_order_seq_cst);
#else
  if (asymmetric_fences.load(std::memory_order_relaxed)) [[likely]] {
    slot.store(value, std::memory_order_release);
    std::atomic_signal_fence(std::memory_order_seq_cst);
  } else {
    slot.store(value, std::memory_order_seq_cst);
  }
#endif
}

/// One walk over an observer's list: protects it, filters by context, marks the running callback.
class emission {
 public:
  // Always inlined, the destructor included (the exception cleanup too): the walk's state then lives in
  // registers instead of a stack object whose address the cleanup would need.
  [[gnu::always_inline]] explicit emission(const std::atomic<callback_list*>& head) noexcept
      : record_(this_thread_record()), slot_(slot_for(record_)), ctx_(record_.ctx) {
    const callback_list* list = head.load(std::memory_order_acquire);
    for (;;) {
      publish(slot_.list, list);
      const callback_list* again = head.load(std::memory_order_seq_cst);
      if (again == list) break;
      list = again;
    }
    list_ = list;
    ++record_.depth;
  }
  emission(const emission&) = delete;
  emission& operator=(const emission&) = delete;
  [[gnu::always_inline]] ~emission() {
    --record_.depth;
    slot_.node.store(nullptr, std::memory_order_release);
    slot_.list.store(nullptr, std::memory_order_release);
  }

  const callback_list* list() const noexcept { return list_; }

  /// True if `entry` belongs here and is still registered; it is then marked as running.
  [[gnu::always_inline]] bool enter(const callback_entry& entry) noexcept {
    if (entry.ctx != nullptr && entry.ctx != ctx_) return false;
    publish(slot_.node, static_cast<const callback_node*>(entry.node));
    return !entry.node->removed.load(std::memory_order_seq_cst);
  }

 private:
  static emission_slot& slot_for(thread_record& r) noexcept {
    return r.depth < slot_chunk::size ? r.first.slots[r.depth] : deep_slot(r, r.depth);
  }

  thread_record& record_;
  emission_slot& slot_;
  const context_state* ctx_;
  const callback_list* list_ = nullptr;
};

/// The type-independent part of an observer: its name and its current callback list.
class observer_core {
 public:
  constexpr explicit observer_core(std::string_view name) noexcept : name_(name) {}
  observer_core(const observer_core&) = delete;
  observer_core& operator=(const observer_core&) = delete;
  ~observer_core();

  std::string_view name() const noexcept { return name_; }

 protected:
  // Registers `callable` (already owned) globally or in the current context; returns the node.
  callback_node* add_node(callable_base* callable, bool global);
  bool remove_id(std::uint64_t id) noexcept;
  bool has_visible_callbacks() const noexcept;

  /// Whether `observe` on this thread has anything to walk; decides without touching the list.
  bool worth_walking() const noexcept {
    const std::uintptr_t who = listeners_.load(std::memory_order_relaxed);
    if (who == no_listener) [[likely]] return false;
    if (who == any_listener) return true;
    const thread_record* record = tls_record;
    return record != nullptr && reinterpret_cast<std::uintptr_t>(record->ctx) == who;
  }

  std::string_view name_;
  std::atomic<callback_list*> list_{nullptr};
  std::atomic<std::uintptr_t> listeners_{no_listener};

  friend struct observer_access;
};

/// Removes `node` from its observer (if still there), waits until it runs nowhere else, drops the handle.
void release_node(callback_node* node, bool unregister) noexcept;
bool node_active(const callback_node* node) noexcept;

}  // namespace detail
HOOKSCOPE_DETAIL_END_NAMESPACE

#endif  // HOOKSCOPE_ENABLED
