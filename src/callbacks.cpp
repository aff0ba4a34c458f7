// The slow paths of observers: registration, removal, contexts, thread records and memory reclamation.
//
// Locks: each context has a mutex guarding its table, its nodes and their links; one process-wide callback
// mutex guards the global callbacks, the thread records' free list, the set of contexts, the clone chains
// of copied contexts and the released ids. Order: the callback mutex before a context's. Emission (in the
// header) never takes either. User code (a callable's destructor) never runs under either: what a change
// frees is collected in a `garbage` and freed after the locks are released.
//
// Reclamation: a replaced list may still be walked by an emission that published it as a hazard. A private
// context (see the header) is read by its owner thread only, so its owner frees a replaced list at once
// unless its own slots hold it, and otherwise defers it to its record until its emissions end. Any other
// change fences (membarrier) and scans the live records' slots, and keeps what is still in use for later.
#include "hookscope/context.hpp"
#include "hookscope/detail/callbacks.hpp"

#if HOOKSCOPE_ENABLED

#include <algorithm>
#include <memory>
#include <mutex>
#include <new>
#include <thread>
#include <unordered_map>
#include <utility>
#include <vector>

#include <pthread.h>

#if defined(__linux__)
#include <linux/membarrier.h>
#include <sys/syscall.h>
#include <unistd.h>
#endif

HOOKSCOPE_DETAIL_BEGIN_NAMESPACE
namespace detail {

struct context_state : context_base {
  std::atomic<std::size_t> refs{1};         // handles, and threads using it as their current context
  std::atomic<std::size_t> memory_refs{1};  // +1 while refs != 0, +1 per node whose ctx this is
  std::uint64_t owner_thread = 0;           // the thread that made it
  std::mutex mutex;
  // Guarded by the mutex:
  bool shared = false;                      // attached by another thread than its owner, ever
  bool dead = false;                        // its last handle went: nothing registers here any more
  std::vector<callback_node*> nodes;        // registered here, in registration order
  callback_list* retired = nullptr;         // replaced lists another thread may still walk
  // Guarded by the callback mutex:
  context_state* prev = nullptr;
  context_state* next = nullptr;
};

struct observer_access {
  static std::atomic<callback_list*>& globals(observer_core& o) noexcept { return o.globals_; }
  static std::atomic<std::uint64_t>& listeners(observer_core& o) noexcept { return o.listeners_; }
};

namespace {

context_state* state_of(void* ctx) noexcept { return static_cast<context_state*>(ctx); }
context_state* state_of(context_base* ctx) noexcept { return static_cast<context_state*>(ctx); }

void choose_fences() noexcept {
#if defined(__linux__) && !HOOKSCOPE_DETAIL_TSAN
  if (syscall(__NR_membarrier, MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED, 0, 0) == 0 &&
      syscall(__NR_membarrier, MEMBARRIER_CMD_PRIVATE_EXPEDITED, 0, 0) == 0) {
    asymmetric_fences.store(true, std::memory_order_seq_cst);
  }
#endif
}

void release_record(void* record) noexcept;

struct callback_store {
  callback_store() {
    choose_fences();
    // A key's destructor runs after every thread_local's destructor, whatever their order of construction.
    if (pthread_key_create(&record_key, &release_record) != 0) record_key_made = false;
  }
  std::mutex mutex;
  callback_list* retired = nullptr;              // replaced global lists (and orphans) still in use
  std::atomic<thread_record*> records{nullptr};  // every thread record, newest first
  std::atomic<std::size_t> record_count{0};
  thread_record* free_records = nullptr;
  context_state* contexts = nullptr;             // every live context
  std::unordered_map<std::uint64_t, callback_node*> released;  // by id
  std::uint64_t next_id = 1;
  std::atomic<std::uint64_t> next_thread_id{1};
  pthread_key_t record_key{};
  bool record_key_made = true;
};

// Leaked on purpose: observers stay usable while other statics are destroyed.
callback_store& callbacks() {
  static callback_store* state = new callback_store;
  return *state;
}

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

void destroy_node(callback_node* node) noexcept;

void unref_node(callback_node* node) noexcept {
  if (node->refs.fetch_sub(1, std::memory_order_acq_rel) == 1) destroy_node(node);
}

void free_list_now(callback_list* list) noexcept {
  for (const callback_entry& e : *list) {
    unref_node(e.node);
    if (e.callable != e.node) unref_node(e.callable);  // a clone's entry keeps its origin's callable too
  }
  list->~callback_list();
  ::operator delete(list);
}

void garbage::flush() noexcept {
  while (callback_list* list = lists_) {
    lists_ = list->next_retired;
    free_list_now(list);
  }
  for (std::size_t i = 0; i < count_; ++i) unref_node(inline_[i]);
  count_ = 0;
  for (callback_node* n : more_) unref_node(n);
  more_.clear();
}

void unref_context_memory(context_state* ctx) noexcept;

void destroy_node(callback_node* node) noexcept {
  if (node->id != 0) {
    auto& store = callbacks();
    const std::lock_guard lock(store.mutex);
    auto it = store.released.find(node->id);
    if (it != store.released.end() && it->second == node) store.released.erase(it);
  }
  callback_node* clones = nullptr;
  if (node->has_clones.load(std::memory_order_acquire)) {
    const std::lock_guard lock(callbacks().mutex);
    clones = std::exchange(node->next_clone, nullptr);
  }
  context_state* ctx = state_of(node->ctx);
  node->destroy(node);
  // No list calls this callable any more, so none holds its clones: drop the chain's references.
  while (callback_node* clone = clones) {
    clones = clone->next_clone;
    unref_node(clone);
  }
  if (ctx != nullptr) unref_context_memory(ctx);
}

// The writer's half of the fence: after it, every hazard a reader published before our store is visible.
void heavy_fence() noexcept {
#if defined(__linux__) && !HOOKSCOPE_DETAIL_TSAN
  if (asymmetric_fences.load(std::memory_order_relaxed)) {
    syscall(__NR_membarrier, MEMBARRIER_CMD_PRIVATE_EXPEDITED, 0, 0);
  }
#endif
  // Otherwise readers and writers both use seq_cst operations, which need no extra fence.
}

template <class F>
void for_each_slot(F&& f) {
  for (thread_record* r = callbacks().records.load(std::memory_order_acquire); r != nullptr; r = r->next) {
    for (slot_chunk* c = &r->first; c != nullptr; c = c->next.load(std::memory_order_acquire)) {
      for (emission_slot& s : c->slots) f(*r, s);
    }
  }
}

template <class F>
void for_each_own_slot(thread_record& r, F&& f) {
  for (std::uint32_t level = 0; level < r.depth; ++level) {
    f(level < slot_chunk::size ? r.first.slots[level] : deep_slot(r, level));
  }
}

callback_list* make_list(std::uint32_t size) {
  void* raw = ::operator new(sizeof(callback_list) + size * sizeof(callback_entry));
  auto* list = new (raw) callback_list;
  list->size = size;
  return list;
}

// Frees those of `*chain` that no thread walks now; keeps the others in `*chain`. Fences and scans.
void reclaim_shared(callback_list** chain, garbage& trash) {
  if (*chain == nullptr) return;
  heavy_fence();
  std::vector<const callback_list*> hazards;
  for_each_slot([&](thread_record&, emission_slot& s) {
    if (const callback_list* l = s.globals.load(std::memory_order_seq_cst)) hazards.push_back(l);
    if (const callback_list* l = s.own.load(std::memory_order_seq_cst)) hazards.push_back(l);
  });
  callback_list* keep = nullptr;
  while (callback_list* list = *chain) {
    *chain = list->next_retired;
    if (std::find(hazards.begin(), hazards.end(), list) != hazards.end()) {
      list->next_retired = keep;
      keep = list;
    } else {
      trash.add(list);
    }
  }
  *chain = keep;
}

// The owner of a private context frees `list` unless one of its own emissions walks it now.
void retire_private(thread_record& self, callback_list* list, garbage& trash) {
  bool used = false;
  for_each_own_slot(self, [&](emission_slot& s) { used = used || s.own.load(std::memory_order_relaxed) == list; });
  if (used) {
    list->next_retired = self.deferred;
    self.deferred = list;
  } else {
    trash.add(list);
  }
}

void flush_deferred(thread_record& self, garbage& trash) {
  callback_list* chain = std::exchange(self.deferred, nullptr);
  while (callback_list* list = chain) {
    chain = list->next_retired;
    retire_private(self, list, trash);
  }
}

//=== context tables ===//

context_slot* find_slot(context_state& ctx, const observer_core* o) noexcept {
  for (context_slot& s : ctx.slots) {
    if (s.observer.load(std::memory_order_relaxed) == o) return &s;
  }
  context_table* table = ctx.table.load(std::memory_order_relaxed);
  if (table == nullptr) return nullptr;
  const std::uint32_t used = table->used.load(std::memory_order_relaxed);
  for (std::uint32_t i = 0; i < used; ++i) {
    if (table->slots()[i].observer.load(std::memory_order_relaxed) == o) return &table->slots()[i];
  }
  return nullptr;
}

context_table* make_table(std::uint32_t capacity) {
  void* raw = ::operator new(sizeof(context_table) + capacity * sizeof(context_slot));
  auto* table = new (raw) context_table;
  table->capacity = capacity;
  for (std::uint32_t i = 0; i < capacity; ++i) new (&table->slots()[i]) context_slot;
  return table;
}

// The slot of `o` in `ctx`, made if missing (a free one reused, or the table grown). Context mutex held.
context_slot& slot_for_observer(context_state& ctx, const observer_core* o) {
  if (context_slot* s = find_slot(ctx, o)) return *s;
  for (context_slot& s : ctx.slots) {
    if (s.observer.load(std::memory_order_relaxed) == nullptr && s.list.load(std::memory_order_relaxed) == nullptr) {
      s.observer.store(o, std::memory_order_release);
      return s;
    }
  }
  context_table* table = ctx.table.load(std::memory_order_relaxed);
  const std::uint32_t used = table ? table->used.load(std::memory_order_relaxed) : 0;
  for (std::uint32_t i = 0; i < used; ++i) {
    context_slot& s = table->slots()[i];
    if (s.observer.load(std::memory_order_relaxed) == nullptr && s.list.load(std::memory_order_relaxed) == nullptr) {
      s.observer.store(o, std::memory_order_release);
      return s;
    }
  }
  if (table == nullptr || used == table->capacity) {
    context_table* grown = make_table(table ? table->capacity * 2 : 4);
    for (std::uint32_t i = 0; i < used; ++i) {
      grown->slots()[i].observer.store(table->slots()[i].observer.load(std::memory_order_relaxed),
                                       std::memory_order_relaxed);
      grown->slots()[i].list.store(table->slots()[i].list.load(std::memory_order_relaxed), std::memory_order_relaxed);
    }
    grown->used.store(used, std::memory_order_relaxed);
    grown->older = table;  // an emission may still read it; freed with the context
    ctx.table.store(grown, std::memory_order_release);
    table = grown;
  }
  context_slot& s = table->slots()[used];
  s.observer.store(o, std::memory_order_relaxed);
  table->used.store(used + 1, std::memory_order_release);
  return s;
}

//=== thread records ===//

constinit thread_local std::uint64_t tls_thread_id = 0;

std::uint64_t this_thread_id() noexcept {
  if (tls_thread_id == 0) tls_thread_id = callbacks().next_thread_id.fetch_add(1, std::memory_order_relaxed);
  return tls_thread_id;
}

void unref_context(context_state* ctx) noexcept;

// The key's destructor: runs when the thread ends, after its thread_locals are destroyed.
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
  if (tls_record == record) tls_record = nullptr;
  record->depth = 0;
  auto& store = callbacks();
  const std::lock_guard lock(store.mutex);
  record->next_free = store.free_records;
  store.free_records = record;
}

//=== context lifetime ===//

void unref_context_memory(context_state* ctx) noexcept {
  if (ctx->memory_refs.fetch_sub(1, std::memory_order_acq_rel) != 1) return;
  // Nobody reads it now; lists retired while another thread might have walked one go to the global chain.
  if (ctx->retired != nullptr) {
    auto& store = callbacks();
    garbage trash;
    const std::lock_guard lock(store.mutex);
    while (callback_list* list = ctx->retired) {
      ctx->retired = list->next_retired;
      list->next_retired = store.retired;
      store.retired = list;
    }
    reclaim_shared(&store.retired, trash);
  }
  for (context_table* t = ctx->table.load(std::memory_order_relaxed); t != nullptr;) {
    context_table* older = t->older;
    ::operator delete(t);
    t = older;
  }
  delete ctx;
}

// Whether the calling thread may change `ctx` as its private owner. Context mutex held.
bool owned_privately(const context_state& ctx) noexcept {
  return !ctx.shared && ctx.owner_thread == tls_thread_id && tls_record != nullptr;
}

// Replaces `slot`'s list by `next` (null when empty) and retires the old one. Context mutex held.
void install(context_state& ctx, context_slot& slot, callback_list* next, garbage& trash) {
  if (next != nullptr && next->size == 0) {
    ::operator delete(next);
    next = nullptr;
  }
  if (next != nullptr) {
    for (const callback_entry& e : *next) {
      e.node->refs.fetch_add(1, std::memory_order_relaxed);
      if (e.callable != e.node) e.callable->refs.fetch_add(1, std::memory_order_relaxed);
    }
  }
  callback_list* old = slot.list.exchange(next, std::memory_order_seq_cst);
  if (old == nullptr) return;
  if (owned_privately(ctx)) {
    thread_record& self = *tls_record;
    if (self.deferred != nullptr) flush_deferred(self, trash);
    retire_private(self, old, trash);
  } else {
    old->next_retired = ctx.retired;
    ctx.retired = old;
    reclaim_shared(&ctx.retired, trash);
  }
}

void insert_in_context(context_state& ctx, callback_node* node, observer_core* o, garbage& trash) {
  context_slot& slot = slot_for_observer(ctx, o);
  const callback_list* old = slot.list.load(std::memory_order_relaxed);
  const std::uint32_t size = old ? old->size : 0;
  callback_list* next = make_list(size + 1);
  callback_entry* out = next->data();
  for (std::uint32_t i = 0; i < size; ++i) out[i] = old->begin()[i];
  callback_node* callable = node->origin != nullptr ? node->origin : node;
  out[size] = {callable, callable->invoke, node};
  install(ctx, slot, next, trash);
  ctx.nodes.push_back(node);
  observer_access::listeners(*o).fetch_add(1, std::memory_order_relaxed);
}

// Takes `node` out of its context; it is never started again. Context mutex held. True if a reader on
// another thread may be running it (the caller must then wait).
bool unlink_from_context(context_state& ctx, callback_node* node, garbage& trash) {
  observer_core* owner = std::exchange(node->owner, nullptr);
  node->removed.store(true, std::memory_order_seq_cst);
  if (owner == nullptr) return false;
  context_slot* slot = find_slot(ctx, owner);
  const callback_list* old = slot->list.load(std::memory_order_relaxed);
  callback_list* next = make_list(old->size - 1);
  callback_entry* out = next->data();
  for (const callback_entry& e : *old) {
    if (e.node != node) *out++ = e;
  }
  install(ctx, *slot, next, trash);
  auto it = std::find(ctx.nodes.begin(), ctx.nodes.end(), node);
  if (it != ctx.nodes.end()) ctx.nodes.erase(it);
  observer_access::listeners(*owner).fetch_sub(1, std::memory_order_relaxed);
  return !owned_privately(ctx);
}

void destroy_context(context_state* ctx) noexcept {
  {
    garbage trash;
    const std::lock_guard lock(ctx->mutex);
    ctx->dead = true;
    while (!ctx->nodes.empty()) unlink_from_context(*ctx, ctx->nodes.back(), trash);
  }
  {
    auto& store = callbacks();
    const std::lock_guard lock(store.mutex);
    (ctx->prev ? ctx->prev->next : store.contexts) = ctx->next;
    if (ctx->next) ctx->next->prev = ctx->prev;
  }
  unref_context_memory(ctx);
}

void unref_context(context_state* ctx) noexcept {
  if (ctx != nullptr && ctx->refs.fetch_sub(1, std::memory_order_acq_rel) == 1) destroy_context(ctx);
}

context_state* new_context() {
  auto* ctx = new context_state;
  ctx->owner_thread = this_thread_id();
  auto& store = callbacks();
  const std::lock_guard lock(store.mutex);
  ctx->next = store.contexts;
  if (ctx->next) ctx->next->prev = ctx;
  store.contexts = ctx;
  return ctx;
}

context_state* ensure_context(thread_record& record) {
  if (record.ctx == nullptr) record.ctx = new_context();
  return state_of(record.ctx);
}

//=== global callbacks ===//

void install_globals(observer_core& o, callback_list* next, garbage& trash) {
  if (next != nullptr && next->size == 0) {
    ::operator delete(next);
    next = nullptr;
  }
  if (next != nullptr) {
    for (const callback_entry& e : *next) e.node->refs.fetch_add(1, std::memory_order_relaxed);
  }
  callback_list* old = observer_access::globals(o).exchange(next, std::memory_order_seq_cst);
  auto& store = callbacks();
  if (old != nullptr) {
    old->next_retired = store.retired;
    store.retired = old;
  }
  reclaim_shared(&store.retired, trash);
}

// Callback mutex held.
void unlink_global(callback_node* node, garbage& trash) {
  observer_core* owner = std::exchange(node->owner, nullptr);
  node->removed.store(true, std::memory_order_seq_cst);
  if (owner == nullptr) return;
  const callback_list* old = observer_access::globals(*owner).load(std::memory_order_relaxed);
  callback_list* next = make_list(old->size - 1);
  callback_entry* out = next->data();
  for (const callback_entry& e : *old) {
    if (e.node != node) *out++ = e;
  }
  install_globals(*owner, next, trash);
  observer_access::listeners(*owner).fetch_sub(1, std::memory_order_relaxed);
}

// Returns once `node` runs on no thread but (possibly) this one. After a heavy_fence().
void wait_until_idle(const callback_node* node) noexcept {
  const thread_record* self = tls_record;
  for_each_slot([&](thread_record& r, emission_slot& s) {
    if (&r == self) return;  // reset from inside the callback itself: it may finish
    while (s.node.load(std::memory_order_seq_cst) == node) std::this_thread::yield();
  });
}

// Unlinks `node` wherever it is registered; adds to `wait` (with a reference each) what another thread
// may be running now.
void unlink_anywhere(callback_node* node, garbage& trash, std::vector<callback_node*>& wait) {
  auto must_wait = [&](callback_node* n) {
    n->refs.fetch_add(1, std::memory_order_relaxed);
    wait.push_back(n);
  };
  if (node->ctx == nullptr) {
    const std::lock_guard lock(callbacks().mutex);
    unlink_global(node, trash);
    must_wait(node);
    return;
  }
  context_state& ctx = *state_of(node->ctx);
  {
    const std::lock_guard lock(ctx.mutex);
    if (!node->has_clones.load(std::memory_order_relaxed)) {
      if (unlink_from_context(ctx, node, trash)) must_wait(node);
      return;
    }
  }
  // Copied contexts hold clones of it: remove them all (the chain is stable under the callback mutex).
  const std::lock_guard lock(callbacks().mutex);
  for (callback_node* n = node; n != nullptr; n = n->next_clone) {
    context_state& where = *state_of(n->ctx);
    const std::lock_guard ctx_lock(where.mutex);
    if (unlink_from_context(where, n, trash)) must_wait(n);
  }
}

}  // namespace

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
  record->depth = 0;
  tls_record = record;
  if (store.record_key_made) pthread_setspecific(store.record_key, record);
  return *record;
}

emission_slot& deep_slot(thread_record& record, std::uint32_t depth) {
  slot_chunk* chunk = &record.first;
  for (std::uint32_t level = depth / slot_chunk::size; level > 0; --level) {
    slot_chunk* next = chunk->next.load(std::memory_order_acquire);
    if (next == nullptr) {
      next = new slot_chunk;
      chunk->next.store(next, std::memory_order_release);
    }
    chunk = next;
  }
  return chunk->slots[depth % slot_chunk::size];
}

std::size_t thread_records_made() noexcept { return callbacks().record_count.load(std::memory_order_relaxed); }

callback_node* observer_core::add_node(callback_node* node, bool global) {
  std::unique_ptr<callback_node, void (*)(callback_node*)> owned(node, [](callback_node* n) { n->destroy(n); });
  thread_record& record = this_thread_record();
  garbage trash;
  if (global) {
    const std::lock_guard lock(callbacks().mutex);
    node->owner = this;
    const callback_list* old = globals_.load(std::memory_order_relaxed);
    const std::uint32_t size = old ? old->size : 0;
    callback_list* next = make_list(size + 1);
    for (std::uint32_t i = 0; i < size; ++i) next->data()[i] = old->begin()[i];
    next->data()[size] = {node, node->invoke, node};
    install_globals(*this, next, trash);
    listeners_.fetch_add(1, std::memory_order_relaxed);
    return owned.release();
  }
  context_state* ctx = ensure_context(record);
  const std::lock_guard lock(ctx->mutex);
  ctx->memory_refs.fetch_add(1, std::memory_order_relaxed);
  node->ctx = ctx;
  if (ctx->dead) {  // a context whose last handle is going away on another thread right now
    node->removed.store(true, std::memory_order_relaxed);
    return owned.release();
  }
  node->owner = this;
  insert_in_context(*ctx, node, this, trash);
  return owned.release();
}

bool observer_core::remove_id(std::uint64_t id) noexcept {
  if (id == 0) return false;
  callback_node* found = nullptr;
  {
    auto& store = callbacks();
    const std::lock_guard lock(store.mutex);
    auto it = store.released.find(id);
    if (it == store.released.end()) return false;
    callback_node* node = it->second;
    bool mine = false;
    if (node->ctx == nullptr) {
      mine = node->owner == this;
    } else {
      const std::lock_guard ctx_lock(state_of(node->ctx)->mutex);
      mine = node->owner == this;
    }
    if (!mine) return false;
    std::uint32_t refs = node->refs.load(std::memory_order_relaxed);
    do {
      if (refs == 0) return false;  // being freed right now
    } while (!node->refs.compare_exchange_weak(refs, refs + 1, std::memory_order_acquire));
    store.released.erase(it);
    found = node;
  }
  release_node(found, true);  // as a subscription's reset: unlink, wait until idle, drop the handle
  return true;
}

bool observer_core::has_visible_callbacks() const noexcept {
  if (globals_.load(std::memory_order_acquire) != nullptr) return true;
  const thread_record* record = tls_record;
  if (record == nullptr || record->ctx == nullptr) return false;
  context_state& ctx = *state_of(record->ctx);
  const std::lock_guard lock(ctx.mutex);
  const context_slot* slot = find_slot(ctx, this);
  return slot != nullptr && slot->list.load(std::memory_order_relaxed) != nullptr;
}

observer_core::~observer_core() {
  garbage trash;
  auto& store = callbacks();
  const std::lock_guard lock(store.mutex);
  while (const callback_list* list = globals_.load(std::memory_order_relaxed)) unlink_global(list->begin()->node, trash);
  if (listeners_.load(std::memory_order_relaxed) == 0) return;
  for (context_state* ctx = store.contexts; ctx != nullptr; ctx = ctx->next) {
    const std::lock_guard ctx_lock(ctx->mutex);
    context_slot* slot = find_slot(*ctx, this);
    if (slot == nullptr) continue;
    while (const callback_list* list = slot->list.load(std::memory_order_relaxed)) {
      unlink_from_context(*ctx, list->begin()->node, trash);
    }
    slot->observer.store(nullptr, std::memory_order_release);
  }
}

void release_node(callback_node* node, bool unregister) noexcept {
  if (unregister) {
    std::vector<callback_node*> wait;  // allocates only when another thread may run it (never when private)
    {
      garbage trash;
      unlink_anywhere(node, trash, wait);
    }
    if (!wait.empty()) {
      heavy_fence();
      for (callback_node* n : wait) wait_until_idle(n);
      for (callback_node* n : wait) unref_node(n);
    }
  }
  unref_node(node);
}

std::uint64_t keep_node(callback_node* node) noexcept {
  std::uint64_t id = 0;
  {
    auto& store = callbacks();
    const std::lock_guard lock(store.mutex);
    if (node->id == 0) node->id = store.next_id++;
    id = node->id;
    store.released.emplace(id, node);
  }
  unref_node(node);
  return id;
}

bool node_active(const callback_node* node) noexcept { return !node->removed.load(std::memory_order_acquire); }

}  // namespace detail

//=== context ===//

context::context() : state_(detail::new_context()) {}

context::context(const context& other) noexcept : state_(other.state_) {
  if (state_ != nullptr) state_->refs.fetch_add(1, std::memory_order_relaxed);
}

context::~context() { detail::unref_context(state_); }

context context::current() {
  detail::thread_record& record = detail::this_thread_record();
  detail::context_state* ctx = detail::ensure_context(record);
  ctx->refs.fetch_add(1, std::memory_order_relaxed);
  return context(ctx);
}

context::scope context::attach() const {
  detail::thread_record& record = detail::this_thread_record();
  if (state_ != nullptr) {
    state_->refs.fetch_add(1, std::memory_order_relaxed);
    if (state_->owner_thread != detail::this_thread_id()) {
      // From now on other threads read it: its writers fence and scan. Under its mutex, so that no change
      // made as private can overlap this thread's first read.
      const std::lock_guard lock(state_->mutex);
      state_->shared = true;
    }
  }
  return scope(detail::state_of(std::exchange(record.ctx, state_)));
}

context context::copy() const {
  context result;
  if (state_ == nullptr) return result;
  detail::garbage trash;
  auto& store = detail::callbacks();
  const std::lock_guard lock(store.mutex);
  const std::lock_guard from_lock(state_->mutex);
  const std::lock_guard to_lock(result.state_->mutex);
  for (detail::callback_node* original : state_->nodes) {
    detail::callback_node* origin = original->origin != nullptr ? original->origin : original;
    auto* clone = new detail::callback_node;
    clone->destroy = [](detail::callback_node* n) noexcept { delete n; };
    clone->invoke = origin->invoke;
    clone->origin = origin;
    clone->ctx = result.state_;
    result.state_->memory_refs.fetch_add(1, std::memory_order_relaxed);
    clone->owner = original->owner;
    // Removing the registration removes its clones: they share its callable, and reset() promises that
    // the callable runs nowhere once it returns.
    clone->next_clone = origin->next_clone;  // the chain holds the clone's first reference
    origin->next_clone = clone;
    origin->has_clones.store(true, std::memory_order_release);
    detail::insert_in_context(*result.state_, clone, clone->owner, trash);
  }
  return result;
}

context::scope::~scope() {
  if (!engaged_) return;
  detail::thread_record& record = detail::this_thread_record();
  detail::unref_context(detail::state_of(std::exchange(record.ctx, previous_)));
}

HOOKSCOPE_DETAIL_END_NAMESPACE

#endif  // HOOKSCOPE_ENABLED
