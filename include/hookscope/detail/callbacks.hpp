// Internals of observers: callback storage, copy-on-write lists and the lock-free emission protocol.
//
// Where callbacks live: an observer holds its global callbacks; each context holds a small table from
// observer to that observer's callbacks in the context. An emission walks the observer's global list and
// the current context's list for that observer, nothing else: callbacks in other contexts cost nothing.
//
// Emission never takes a lock. Each thread owns a `thread_record` whose slots publish, one per emission under way,
// the lists being walked (hazard pointers, so writers never free them underneath) and the callback being
// run (so `subscription::reset` can wait for it to finish). Readers publish with a plain store plus a
// compiler fence; a writer that must see other threads' slots pays for the matching process-wide fence
// (Linux membarrier) and scans the records of the threads alive now (records are recycled, so there are
// as many as threads ever alive at once). A writer needs that only for global callbacks and for contexts
// that another thread may read: a context is *private* while no thread but its owner (the thread that
// made it) has attached it, and the owner changes a private context's callbacks with no fence and no
// scan — it looks at its own slots only. Where membarrier is missing, and under ThreadSanitizer, both
// sides use seq_cst atomics.
#pragma once

#include "hookscope/detail/config.hpp"

#if HOOKSCOPE_ENABLED

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <string_view>
#include <type_traits>

HOOKSCOPE_DETAIL_BEGIN_NAMESPACE
namespace detail {

class observer_core;

/// One registration of a callable in one observer: globally (ctx == nullptr) or in one context.
///
/// The registration made by `add` is the callable itself (`callable_impl` derives from it); a copied
/// context holds clones that call the original's callable and are removed with it.
struct callback_node {
  using erased_invoke = void (*)();
  erased_invoke invoke = nullptr;  // really void(*)(callback_node*, pass_t<Args>...)
  void (*destroy)(callback_node*) noexcept = nullptr;
  std::atomic<bool> removed{false};
  std::atomic<bool> has_clones{false};
  std::atomic<std::uint32_t> refs{1};  // the subscription (a clone: its origin's chain) + every list holding it
  void* ctx = nullptr;                 // its context_state (never changes), or null: global
  callback_node* origin = nullptr;     // a clone: the registration whose callable it calls
  // Guarded by the node's context's mutex, or the callback mutex for global nodes:
  observer_core* owner = nullptr;  // null once removed or its observer is gone
  // Guarded by the callback mutex:
  callback_node* next_clone = nullptr;  // the origin's chain of clones
  std::uint64_t id = 0;                 // given by `subscription::release`
};

/// Small trivially copyable arguments cross the type-erased call in registers, not through memory.
template <class T>
using pass_t = std::conditional_t<std::is_trivially_copyable_v<T> && sizeof(T) <= 2 * sizeof(void*), T, const T&>;

template <class... Args>
struct callable_signature {
  using invoke_type = void (*)(callback_node*, pass_t<Args>...);
};

template <class F, class... Args>
struct callable_impl final : callback_node {
  F fn;

  template <class G>
  explicit callable_impl(G&& g) : fn(static_cast<G&&>(g)) {
    invoke = reinterpret_cast<erased_invoke>(static_cast<typename callable_signature<Args...>::invoke_type>(&call));
    destroy = &destroy_self;
  }

  static void call(callback_node* self, pass_t<Args>... args) { static_cast<callable_impl*>(self)->fn(args...); }
  static void destroy_self(callback_node* self) noexcept { delete static_cast<callable_impl*>(self); }
};

/// What emission needs of one registration, copied out of the node so a walk touches one cache line per entry.
struct callback_entry {
  callback_node* callable;  // the node whose `invoke` and callable run
  callback_node::erased_invoke invoke;
  callback_node* node;  // the registration (a clone's, in a copied context)
};

/// An immutable snapshot of one observer's callbacks in one place (its globals, or one context): `size`
/// entries, never none (an empty list is a null pointer), then a null entry that ends emission's walk (it keeps
/// no end pointer across the callbacks).
struct callback_list {
  std::uint32_t size = 0;
  callback_list* next_retired = nullptr;  // writers' bookkeeping, never read by emission

  const callback_entry* begin() const noexcept { return reinterpret_cast<const callback_entry*>(this + 1); }
  const callback_entry* end() const noexcept { return begin() + size; }
  callback_entry* data() noexcept { return reinterpret_cast<callback_entry*>(this + 1); }
};

/// One observer's entry in a context's table.
struct context_slot {
  std::atomic<const observer_core*> observer{nullptr};
  std::atomic<callback_list*> list{nullptr};
};

/// A context's table of observers; grows by replacement, older tables are kept until the context ends.
struct context_table {
  std::uint32_t capacity = 0;
  std::atomic<std::uint32_t> used{0};
  context_table* older = nullptr;

  context_slot* slots() noexcept { return reinterpret_cast<context_slot*>(this + 1); }
  const context_slot* slots() const noexcept { return reinterpret_cast<const context_slot*>(this + 1); }
};

/// What emission reads of a context (context_state derives from it): the slots of its first observers
/// inline (they never move), then a table for more.
struct context_base {
  static constexpr std::uint32_t inline_slots = 4;
  context_slot slots[inline_slots];
  std::atomic<context_table*> table{nullptr};
};

/// One emission's hazards. A slot is in use while it holds a list (`globals` or `own`): an emission takes the
/// thread's first slot that holds none, so nested emissions (a callback that emits) and a signal handler's take the
/// next ones, with no depth counter to keep. `node` is the callback running now, cleared when the walk ends: left in
/// place, it would name a finished callback while the slot's next walk has published its list but not yet its first
/// callback, and `reset()` of the finished one would wait for that walk (for a whole signal handler that interrupted
/// it there).
struct emission_slot {
  std::atomic<const callback_node*> node{nullptr};
  std::atomic<const callback_list*> globals{nullptr};
  std::atomic<const callback_list*> own{nullptr};

  /// Whether an emission walks from this slot now; read by its owner only.
  [[gnu::always_inline]] bool in_use() const noexcept {
    return own.load(std::memory_order_relaxed) != nullptr || globals.load(std::memory_order_relaxed) != nullptr;
  }
};

struct slot_chunk {
  static constexpr std::uint32_t size = 16;
  emission_slot slots[size];
  std::atomic<slot_chunk*> next{nullptr};
};

/// Per-thread emission state; recycled for later threads when its thread ends.
struct thread_record {
  slot_chunk first;                    // the first 16 emissions under way; more chain chunks
  context_base* ctx = nullptr;         // current context (a strong reference), owner only
  std::uint64_t thread_id = 0;         // unique per thread, never reused
  callback_list* deferred = nullptr;   // private lists this thread retired while walking them
  thread_record* next = nullptr;       // every record made, for writers to scan
  thread_record* next_free = nullptr;  // guarded by the callback mutex
};

inline constinit thread_local thread_record* tls_record = nullptr;
/// tls_record when readers publish with plain stores (asymmetric fences on), else null: emission's fast path
/// tests one thread-local for both "this thread has a record" and the fence mode (set once, before any record).
inline constinit thread_local thread_record* tls_fast_record = nullptr;
inline constinit std::atomic<bool> asymmetric_fences{false};

thread_record& make_thread_record();
/// The record's first slot not in use, chunks added as needed (the slow path of nested emissions).
emission_slot& free_slot(thread_record& record);

inline thread_record& this_thread_record() {
  thread_record* r = tls_record;
  return r != nullptr ? *r : make_thread_record();
}

/// Whether readers may publish hazards with plain stores (the writer's membarrier fences for both sides);
/// otherwise both sides use seq_cst operations. Emission reads it once and walks in that mode.
[[gnu::always_inline]] inline bool asymmetric_fences_on() noexcept {
#if HOOKSCOPE_DETAIL_TSAN
  return false;  // ThreadSanitizer does not see membarrier
#else
  return asymmetric_fences.load(std::memory_order_relaxed);
#endif
}

/// Stores a hazard so that a writer's later scan is guaranteed to see it (the reader's half of the fence).
template <bool Asymmetric, class T>
[[gnu::always_inline]] inline void publish(std::atomic<const T*>& slot, const T* value) noexcept {
  if constexpr (Asymmetric) {
    slot.store(value, std::memory_order_release);
    std::atomic_signal_fence(std::memory_order_seq_cst);
  } else {
    slot.store(value, std::memory_order_seq_cst);
  }
}

/// Loads `head` and publishes it in `slot` until the published value is still the current one.
template <bool Asymmetric, class List>
inline const callback_list* protect(std::atomic<const callback_list*>& slot, const std::atomic<List*>& head) noexcept {
  const callback_list* list = head.load(std::memory_order_acquire);
  while (list != nullptr) {
    publish<Asymmetric>(slot, list);
    const callback_list* again = head.load(std::memory_order_seq_cst);
    if (again == list) break;
    list = again;
  }
  return list;
}

/// The type-independent part of an observer: its name, its global callbacks and how many it has in all.
class observer_core {
 public:
  constexpr explicit observer_core(std::string_view name) noexcept : name_(name) {}
  observer_core(const observer_core&) = delete;
  observer_core& operator=(const observer_core&) = delete;
  // No destructor (an annotation's observers are never destroyed): an observer that ends calls retire().

  std::string_view name() const noexcept { return name_; }

 protected:
  // Registers `node` (already owned) globally or in the current context; returns it.
  callback_node* add_node(callback_node* node, bool global);
  bool remove_id(std::uint64_t id) noexcept;
  bool has_visible_callbacks() const noexcept;
  // Unregisters every callback, global or in any context, so that its subscriptions outlive it safely.
  void retire() noexcept;

  /// Whether `observe` has anything to walk anywhere; decides without touching any list.
  bool worth_walking() const noexcept { return listeners_.load(std::memory_order_relaxed) != 0; }

  std::string_view name_;
  std::atomic<callback_list*> globals_{nullptr};
  std::atomic<std::uint64_t> listeners_{0};  // registrations of this observer, global or in any context

  friend struct observer_access;
  template <bool>
  friend class emission;
};

/// The current context's slot for `o` on this thread, or null; reads nothing but the context's slots.
[[gnu::always_inline]] inline const context_slot* find_own_slot(const thread_record& r,
                                                                const observer_core* o) noexcept {
  const context_base* ctx = r.ctx;
  if (ctx == nullptr) return nullptr;
#pragma GCC unroll 4
  for (const context_slot& s : ctx->slots) {  // unrolled: one compare each, `o` stays in a register
    if (s.observer.load(std::memory_order_relaxed) == o) return &s;
  }
  if (const context_table* table = ctx->table.load(std::memory_order_acquire)) [[unlikely]] {
    const std::uint32_t used = table->used.load(std::memory_order_acquire);
    const context_slot* slots = table->slots();
    for (std::uint32_t i = 0; i < used; ++i) {
      if (slots[i].observer.load(std::memory_order_relaxed) == o) return &slots[i];
    }
  }
  return nullptr;
}

/// What one emission walks: the slot it took and the lists it protected there (null: none there).
struct emission_lists {
  emission_slot* slot;
  const callback_list* globals;
  const callback_list* own;
};

/// One walk over an observer's callbacks on this thread: takes the thread's first free slot, protects the lists it
/// walks there and marks the running callback in it. `Asymmetric`: as asymmetric_fences_on() said.
///
/// Made only once the lists to walk are protected; the destructor clears the lists it was told of, which frees
/// the slot.
template <bool Asymmetric>
class emission {
 public:
  /// Protects `o`'s global list and, if `own` (the current context's slot for `o`), its list there, in the
  /// thread's next slot. Both null: nothing to walk, and nothing stays published.
  [[gnu::always_inline]] static emission_lists snapshot(thread_record& record, const observer_core& o,
                                                        const context_slot* own) noexcept {
    emission_slot& slot = slot_for(record);
    // protect(), inlined but for its rare retry.
    const callback_list* globals = o.globals_.load(std::memory_order_acquire);
    if (globals != nullptr) {
      publish<Asymmetric>(slot.globals, globals);
      if (o.globals_.load(std::memory_order_seq_cst) != globals) [[unlikely]]
        globals = protect_globals(slot, o);
    }
    const callback_list* own_list = nullptr;
    if (own != nullptr) {
      own_list = own->list.load(std::memory_order_acquire);
      if (own_list != nullptr) {
        publish<Asymmetric>(slot.own, own_list);
        if (own->list.load(std::memory_order_seq_cst) != own_list) [[unlikely]]
          own_list = protect_own(slot, *own);
      }
    }
    return {&slot, globals, own_list};
  }

  /// The record's first slot when no emission of the thread is under way (the common case), else null (free_slot).
  [[gnu::always_inline]] static emission_slot* first_slot_if_free(thread_record& r) noexcept {
    emission_slot& first = r.first.slots[0];
    return first.in_use() ? nullptr : &first;
  }

  /// Publishes `list`, loaded from `head`, in `slot`: true if it is still `head`'s (then protected), else false
  /// with nothing left published. The common case's snapshot, with no retry: the caller starts over.
  [[gnu::always_inline]] static bool try_protect(std::atomic<const callback_list*>& slot,
                                                 const std::atomic<callback_list*>& head,
                                                 const callback_list* list) noexcept {
    publish<Asymmetric>(slot, list);
    if (head.load(std::memory_order_seq_cst) == list) [[likely]]
      return true;
    slot.store(nullptr, std::memory_order_release);
    return false;
  }

  /// `globals`, `own`: which lists `slot` holds (a slot's fields are null unless published). Always inlined, the
  /// destructor included (the exception cleanup too): the walk's state then lives in registers instead of a stack
  /// object whose address the cleanup would need.
  [[gnu::always_inline]] emission(emission_slot& slot, bool globals, bool own) noexcept
      : slot_(slot), globals_(globals), own_(own) {}
  emission(const emission&) = delete;
  emission& operator=(const emission&) = delete;
  /// Gives the slot back: its running callback and its lists cleared.
  [[gnu::always_inline]] ~emission() {
    // Addressed anew from the slot: otherwise GCC keeps the fields' addresses, computed when they were
    // published, in registers or on the stack across every callback.
    emission_slot* slot = &slot_;
    asm("" : "+r"(slot));
    slot->node.store(nullptr, std::memory_order_release);
    if (globals_) slot->globals.store(nullptr, std::memory_order_release);
    if (own_) slot->own.store(nullptr, std::memory_order_release);
  }

  /// True if `entry` is still registered; it is then marked as running.
  [[gnu::always_inline]] bool enter(const callback_entry& entry) noexcept {
    const callback_node* node = entry.node;  // a local: the fence below does not make it reload
    publish<Asymmetric>(slot_.node, node);
    return !node->removed.load(std::memory_order_seq_cst);
  }

 private:
  // Out of line, taking the slot and the place rather than the atomics' addresses, which the caller would
  // otherwise keep live across the callbacks. A list found gone is unpublished (nothing may stay published
  // when the walk does not start).
  [[gnu::noinline]] static const callback_list* protect_globals(emission_slot& slot, const observer_core& o) noexcept {
    const callback_list* list = protect<Asymmetric>(slot.globals, o.globals_);
    if (list == nullptr) slot.globals.store(nullptr, std::memory_order_release);
    return list;
  }
  [[gnu::noinline]] static const callback_list* protect_own(emission_slot& slot, const context_slot& own) noexcept {
    const callback_list* list = protect<Asymmetric>(slot.own, own.list);
    if (list == nullptr) slot.own.store(nullptr, std::memory_order_release);
    return list;
  }

  [[gnu::always_inline]] static emission_slot& slot_for(thread_record& r) noexcept {
    if (emission_slot* first = first_slot_if_free(r)) [[likely]]
      return *first;
    return free_slot(r);
  }

  emission_slot& slot_;
  bool globals_;
  bool own_;
};

/// Removes `node` from its observer (if still there), waits until it runs nowhere else, drops the handle.
void release_node(callback_node* node, bool unregister) noexcept;
/// Leaves `node` registered, drops the handle and returns the id `observer::remove` takes.
std::uint64_t keep_node(callback_node* node) noexcept;
bool node_active(const callback_node* node) noexcept;

/// For tests: how many thread records exist (made, never freed: recycled when their thread ends).
std::size_t thread_records_made() noexcept;

}  // namespace detail
HOOKSCOPE_DETAIL_END_NAMESPACE

#endif  // HOOKSCOPE_ENABLED
