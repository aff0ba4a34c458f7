// What the files of src/callbacks/ share and nothing else needs: the context's full state, the process-wide
// callback store, the `garbage` that defers frees until the locks are released, and the functions one file
// calls in another. Private to the library (not installed); the emission protocol it serves is described in
// include/hookscope/detail/callbacks.hpp.
//
// The files, one concern each:
//   reclamation.cpp   fences, freeing lists and nodes, the hazard scans that decide when a list may go
//   threads.cpp       thread ids and thread records (made, recycled when their thread ends)
//   contexts.cpp      context tables, a context's callback lists and lifetime, the public `context`
//   registration.cpp  adding and removing callbacks (global or in a context), waiting for running ones
//
// Locks: each context has a mutex guarding its table, its nodes and their links; one process-wide callback
// mutex guards the global callbacks, the thread records' free list, the set of contexts, the clone chains
// of copied contexts and the released ids. Order: the callback mutex before a context's. Emission (in the
// public header) never takes either. User code (a callable's destructor) never runs under either: what a
// change frees is collected in a `garbage` and freed after the locks are released.
#pragma once

#include "hookscope/detail/callbacks.hpp"

#if HOOKSCOPE_ENABLED

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <mutex>
#include <unordered_map>
#include <vector>

#include <pthread.h>

HOOKSCOPE_DETAIL_BEGIN_NAMESPACE
namespace detail {

struct context_state : context_base {
  std::atomic<std::size_t> refs{1};         // handles, and threads using it as their current context
  std::atomic<std::size_t> memory_refs{1};  // +1 while refs != 0, +1 per node whose ctx this is
  std::uint64_t owner_thread = 0;           // the thread that made it
  std::mutex mutex;
  // Guarded by the mutex:
  bool shared = false;                // attached by another thread than its owner, ever
  bool dead = false;                  // its last handle went: nothing registers here any more
  std::vector<callback_node*> nodes;  // registered here, in registration order
  callback_list* retired = nullptr;   // replaced lists another thread may still walk
  // Guarded by the callback mutex:
  context_state* prev = nullptr;
  context_state* next = nullptr;
};

struct observer_access {
  static std::atomic<callback_list*>& globals(observer_core& o) noexcept { return o.globals_; }
  static std::atomic<std::uint64_t>& listeners(observer_core& o) noexcept { return o.listeners_; }
};

inline context_state* state_of(void* ctx) noexcept { return static_cast<context_state*>(ctx); }
inline context_state* state_of(context_base* ctx) noexcept { return static_cast<context_state*>(ctx); }

/// Everything process-wide: global lists retired, thread records, live contexts, released ids.
struct callback_store {
  callback_store();  // chooses the fences, makes the thread-record key
  std::mutex mutex;
  callback_list* retired = nullptr;              // replaced global lists (and orphans) still in use
  std::atomic<thread_record*> records{nullptr};  // every thread record, newest first
  std::atomic<std::size_t> record_count{0};
  thread_record* free_records = nullptr;
  context_state* contexts = nullptr;                           // every live context
  std::unordered_map<std::uint64_t, callback_node*> released;  // by id
  std::uint64_t next_id = 1;
  std::atomic<std::uint64_t> next_thread_id{1};
  pthread_key_t record_key{};
  bool record_key_made = true;
};

/// The process-wide store (made on first use, never destroyed).
callback_store& callbacks();

// What a change frees: lists and node references, released after the locks, since freeing a node may
// destroy a callable, which is user code and may itself use hookscope.
class garbage {
 public:
  garbage() = default;
  garbage(const garbage&) = delete;
  garbage& operator=(const garbage&) = delete;
  ~garbage() { flush(); }

  void add(callback_list* list) noexcept {
    list->next_retired = lists_;
    lists_ = list;
  }
  void unref(callback_node* node) {
    if (count_ < inline_size) {
      inline_[count_++] = node;
    } else {
      more_.push_back(node);
    }
  }
  void flush() noexcept;

 private:
  static constexpr std::size_t inline_size = 4;
  callback_list* lists_ = nullptr;
  callback_node* inline_[inline_size] = {};
  std::size_t count_ = 0;
  std::vector<callback_node*> more_;
};

//=== reclamation.cpp ===//

void unref_node(callback_node* node) noexcept;
// The writer's half of the fence: after it, every hazard a reader published before our store is visible.
void heavy_fence() noexcept;
callback_list* make_list(std::uint32_t size);
// Takes a reference, for a new list, on each node (and clone's callable) of [begin, end).
void hold_entries(const callback_entry* begin, const callback_entry* end) noexcept;
// A new list of `list`'s entries but `node`'s, each holding its reference; null if none is left.
callback_list* list_without(const callback_list& list, const callback_node* node);

/// The order of a writer's store that a later hazard scan must not miss: with asymmetric fences the
/// heavy_fence() before the scan orders it; otherwise it pairs, seq_cst, with the readers' seq_cst stores.
inline std::memory_order scanned_store_order() noexcept {
  return asymmetric_fences.load(std::memory_order_relaxed) ? std::memory_order_release : std::memory_order_seq_cst;
}
// Frees those of `*chain` that no thread walks now; keeps the others in `*chain`. Fences and scans.
void reclaim_shared(callback_list** chain, garbage& trash);
// The owner of a private context frees `list` unless one of its own emissions walks it now.
void retire_private(thread_record& self, callback_list* list, garbage& trash);
void flush_deferred(thread_record& self, garbage& trash);

template <class F>
void for_each_slot(F&& f) {
  for (thread_record* r = callbacks().records.load(std::memory_order_acquire); r != nullptr; r = r->next) {
    for (slot_chunk* c = &r->first; c != nullptr; c = c->next.load(std::memory_order_acquire)) {
      for (emission_slot& s : c->slots) f(*r, s);
    }
  }
}

// `r`: the calling thread's record; its slots in use.
template <class F>
void for_each_own_slot(thread_record& r, F&& f) {
  for (slot_chunk* c = &r.first; c != nullptr; c = c->next.load(std::memory_order_relaxed)) {
    for (emission_slot& s : c->slots) {
      if (s.in_use()) f(s);
    }
  }
}

//=== threads.cpp ===//

extern constinit thread_local std::uint64_t tls_thread_id;
std::uint64_t this_thread_id() noexcept;
// The thread-specific key's destructor: runs when the thread ends, after its thread_locals are destroyed.
void release_record(void* record) noexcept;

//=== contexts.cpp ===//

context_state* new_context();
context_state* ensure_context(thread_record& record);
void unref_context(context_state* ctx) noexcept;
void unref_context_memory(context_state* ctx) noexcept;
context_slot* find_slot(context_state& ctx, const observer_core* o) noexcept;
// Context mutex held: adds `node` (a registration of `o`, or a clone) at the end of its observer's list.
void insert_in_context(context_state& ctx, callback_node* node, observer_core* o, garbage& trash);
// Takes `node` out of its context; it is never started again. Context mutex held. True if a reader on
// another thread may be running it (the caller must then wait).
bool unlink_from_context(context_state& ctx, callback_node* node, garbage& trash);

}  // namespace detail
HOOKSCOPE_DETAIL_END_NAMESPACE

#endif  // HOOKSCOPE_ENABLED
