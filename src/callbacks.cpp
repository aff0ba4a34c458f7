// The slow paths of observers: registration, removal, contexts, thread records and memory reclamation.
//
// Every change to any observer's callbacks happens under one process-wide mutex: changes are rare, and a
// single lock makes the links between nodes, observers and contexts trivially consistent, including when
// an observer, a context or a thread goes away while subscriptions to it still exist. Emission (in the
// header) never takes it. User code (a callable's destructor) never runs under it.
#include "hookscope/context.hpp"
#include "hookscope/detail/callbacks.hpp"

#if HOOKSCOPE_ENABLED

#include <algorithm>
#include <memory>
#include <mutex>
#include <new>
#include <thread>
#include <utility>
#include <vector>

#if defined(__linux__)
#include <linux/membarrier.h>
#include <sys/syscall.h>
#include <unistd.h>
#endif

HOOKSCOPE_DETAIL_BEGIN_NAMESPACE
namespace detail {

struct context_state {
  std::atomic<std::size_t> refs{1};
  std::vector<callback_node*> nodes;  // registration order; guarded by the callback mutex
};

struct observer_access {
  static std::atomic<callback_list*>& list(observer_core& o) noexcept { return o.list_; }
  static std::atomic<std::uintptr_t>& listeners(observer_core& o) noexcept { return o.listeners_; }
};

namespace {

struct callback_store {
  std::mutex mutex;
  std::vector<callback_list*> retired;          // replaced lists that a reader may still walk
  std::atomic<thread_record*> records{nullptr};  // every thread record, newest first
  std::uint64_t next_id = 1;
  bool fences_chosen = false;
};

// Leaked on purpose: observers stay usable while other statics are destroyed.
callback_store& callbacks() {
  static callback_store* state = new callback_store;
  return *state;
}

// Callables whose last registration went away; destroyed after the mutex is released, because a
// destructor is user code and may itself use hookscope (a callback owning a subscription, say).
class garbage {
 public:
  garbage() = default;
  garbage(const garbage&) = delete;
  garbage& operator=(const garbage&) = delete;
  ~garbage() {
    for (callable_base* c : callables_) c->destroy(c);
  }
  void add(callable_base* c) { callables_.push_back(c); }

 private:
  std::vector<callable_base*> callables_;
};

void choose_fences() {
  auto& store = callbacks();
  if (store.fences_chosen) return;
  store.fences_chosen = true;
#if defined(__linux__) && !HOOKSCOPE_DETAIL_TSAN
  if (syscall(__NR_membarrier, MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED, 0, 0) == 0 &&
      syscall(__NR_membarrier, MEMBARRIER_CMD_PRIVATE_EXPEDITED, 0, 0) == 0) {
    asymmetric_fences.store(true, std::memory_order_seq_cst);
  }
#endif
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

callback_list* make_list(std::uint32_t size, std::uint32_t global_count) {
  void* raw = ::operator new(sizeof(callback_list) + size * sizeof(callback_entry));
  auto* list = new (raw) callback_list;
  list->size = size;
  list->global_count = global_count;
  return list;
}

void unref_node(callback_node* node, garbage& trash) {
  if (--node->refs != 0) return;
  if (--node->callable->refs == 0) trash.add(node->callable);
  delete node;
}

void free_list(callback_list* list, garbage& trash) {
  for (const callback_entry& e : *list) unref_node(e.node, trash);
  list->~callback_list();
  ::operator delete(list);
}

// Frees the retired lists no reader is walking any more. Called with the mutex held.
void reclaim(garbage& trash) {
  auto& store = callbacks();
  if (store.retired.empty()) return;
  heavy_fence();
  std::vector<const callback_list*> hazards;
  for_each_slot([&](thread_record&, emission_slot& s) {
    if (const callback_list* l = s.list.load(std::memory_order_seq_cst)) hazards.push_back(l);
  });
  auto still_used = [&](callback_list* l) { return std::find(hazards.begin(), hazards.end(), l) != hazards.end(); };
  auto keep = std::stable_partition(store.retired.begin(), store.retired.end(), still_used);
  for (auto it = keep; it != store.retired.end(); ++it) free_list(*it, trash);
  store.retired.erase(keep, store.retired.end());
}

// Who `observe` must walk the list for: nobody, anybody, or the single context holding every callback.
std::uintptr_t listeners_of(const callback_list* list) noexcept {
  if (list == nullptr) return no_listener;
  if (list->global_count != 0) return any_listener;
  const context_state* only = list->begin()->ctx;
  for (const callback_entry& e : *list) {
    if (e.ctx != only) return any_listener;
  }
  return reinterpret_cast<std::uintptr_t>(only);
}

// Publishes `next` (null when empty) as `o`'s list and retires the old one. Mutex held.
void install(observer_core& o, callback_list* next) {
  if (next != nullptr) {
    for (const callback_entry& e : *next) ++e.node->refs;
    if (next->size == 0) {
      next->~callback_list();
      ::operator delete(next);
      next = nullptr;
    }
  }
  callback_list* old = observer_access::list(o).exchange(next, std::memory_order_seq_cst);
  // After the list: a reader that sees the new summary finds at least the new list.
  observer_access::listeners(o).store(listeners_of(next), std::memory_order_seq_cst);
  if (old != nullptr) callbacks().retired.push_back(old);
}

callback_entry entry_of(callback_node* node) noexcept {
  return {node->ctx, node->callable, node->callable->invoke, node};
}

void insert_node(observer_core& o, callback_node* node) {
  const callback_list* old = observer_access::list(o).load(std::memory_order_relaxed);
  const std::uint32_t size = old ? old->size : 0;
  const std::uint32_t globals = old ? old->global_count : 0;
  const bool global = node->ctx == nullptr;
  callback_list* next = make_list(size + 1, globals + (global ? 1 : 0));
  const std::uint32_t at = global ? globals : size;  // globals stay in front of context callbacks
  callback_entry* out = next->data();
  for (std::uint32_t i = 0; i < at; ++i) out[i] = old->begin()[i];
  out[at] = entry_of(node);
  for (std::uint32_t i = at; i < size; ++i) out[i + 1] = old->begin()[i];
  install(o, next);
}

// Takes `node` out of its observer and context; it is never started again. Mutex held.
void unlink(callback_node* node) {
  observer_core* owner = std::exchange(node->owner, nullptr);
  node->removed.store(true, std::memory_order_seq_cst);
  if (owner == nullptr) return;
  const callback_list* old = observer_access::list(*owner).load(std::memory_order_relaxed);
  callback_list* next = make_list(old->size - 1, old->global_count - (node->ctx == nullptr ? 1 : 0));
  callback_entry* out = next->data();
  for (const callback_entry& e : *old) {
    if (e.node != node) *out++ = e;
  }
  install(*owner, next);
  if (node->ctx != nullptr) {
    auto& nodes = const_cast<context_state*>(node->ctx)->nodes;
    nodes.erase(std::find(nodes.begin(), nodes.end(), node));
  }
}

// Returns once `node` runs on no thread but (possibly) this one. Mutex not held.
void wait_until_idle(const callback_node* node) noexcept {
  heavy_fence();
  const thread_record* self = tls_record;
  for_each_slot([&](thread_record& r, emission_slot& s) {
    if (&r == self) return;  // reset from inside the callback itself: it may finish
    while (s.node.load(std::memory_order_seq_cst) == node) std::this_thread::yield();
  });
}

context_state* ensure_context(thread_record& record) {
  if (record.ctx == nullptr) record.ctx = new context_state;
  return record.ctx;
}

void destroy_context(context_state* ctx) {
  garbage trash;
  {
    const std::lock_guard lock(callbacks().mutex);
    while (!ctx->nodes.empty()) unlink(ctx->nodes.back());
    reclaim(trash);
  }
  delete ctx;
}

void unref_context(context_state* ctx) noexcept {
  if (ctx != nullptr && ctx->refs.fetch_sub(1, std::memory_order_acq_rel) == 1) destroy_context(ctx);
}

constinit thread_local bool thread_exiting = false;

// Gives the thread's record back, and drops its context, when the thread ends.
struct record_releaser {
  bool armed = false;
  ~record_releaser() {
    thread_record* record = tls_record;
    if (!armed || record == nullptr) return;
    unref_context(std::exchange(record->ctx, nullptr));
    thread_exiting = true;
    tls_record = nullptr;
    record->depth = 0;
    record->in_use.store(false, std::memory_order_release);
  }
};
thread_local record_releaser releaser;

}  // namespace

thread_record& make_thread_record() {
  auto& store = callbacks();
  thread_record* record = nullptr;
  {
    const std::lock_guard lock(store.mutex);
    choose_fences();
    for (thread_record* r = store.records.load(std::memory_order_relaxed); r != nullptr; r = r->next) {
      bool free = false;
      if (!r->in_use.load(std::memory_order_acquire) && r->in_use.compare_exchange_strong(free, true)) {
        record = r;
        break;
      }
    }
    if (record == nullptr) {
      record = new thread_record;
      record->next = store.records.load(std::memory_order_relaxed);
      store.records.store(record, std::memory_order_release);
    }
  }
  tls_record = record;
  // A record made while the thread's thread_locals are being destroyed cannot be given back; it leaks.
  if (!thread_exiting) releaser.armed = true;
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

callback_node* observer_core::add_node(callable_base* callable, bool global) {
  std::unique_ptr<callable_base, void (*)(callable_base*)> owned(callable, [](callable_base* c) { c->destroy(c); });
  thread_record& record = this_thread_record();
  auto node = std::make_unique<callback_node>();
  node->callable = callable;
  node->ctx = global ? nullptr : ensure_context(record);
  node->refs = 1;  // the subscription's
  garbage trash;
  const std::lock_guard lock(callbacks().mutex);
  node->owner = this;
  node->id = callbacks().next_id++;
  if (!global) const_cast<context_state*>(node->ctx)->nodes.push_back(node.get());
  insert_node(*this, node.get());
  reclaim(trash);
  owned.release();
  return node.release();
}

bool observer_core::remove_id(std::uint64_t id) noexcept {
  callback_node* found = nullptr;
  {
    const std::lock_guard lock(callbacks().mutex);
    if (const callback_list* list = list_.load(std::memory_order_relaxed)) {
      for (const callback_entry& e : *list) {
        if (e.node->id == id) found = e.node;
      }
    }
    if (found == nullptr) return false;
    ++found->refs;  // a handle of our own, so that the node outlives the wait
  }
  release_node(found, true);  // as a subscription's reset: unlink, wait until idle, drop the handle
  return true;
}

bool observer_core::has_visible_callbacks() const noexcept {
  const thread_record* record = tls_record;
  const context_state* ctx = record != nullptr ? record->ctx : nullptr;
  const std::lock_guard lock(callbacks().mutex);
  const callback_list* list = list_.load(std::memory_order_relaxed);
  if (list == nullptr) return false;
  return std::any_of(list->begin(), list->end(), [&](const callback_entry& e) {
    return e.ctx == nullptr || e.ctx == ctx;
  });
}

observer_core::~observer_core() {
  garbage trash;
  const std::lock_guard lock(callbacks().mutex);
  while (const callback_list* list = list_.load(std::memory_order_relaxed)) unlink(list->begin()->node);
  reclaim(trash);
}

void release_node(callback_node* node, bool unregister) noexcept {
  if (unregister) {
    {
      garbage trash;
      const std::lock_guard lock(callbacks().mutex);
      unlink(node);
      reclaim(trash);
    }
    wait_until_idle(node);
  }
  garbage trash;
  const std::lock_guard lock(callbacks().mutex);
  unref_node(node, trash);
}

bool node_active(const callback_node* node) noexcept { return !node->removed.load(std::memory_order_acquire); }

}  // namespace detail

//=== context ===//

context::context() : state_(new detail::context_state) {}

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
  if (state_ != nullptr) state_->refs.fetch_add(1, std::memory_order_relaxed);
  return scope(std::exchange(record.ctx, state_));
}

context context::copy() const {
  context result;
  if (state_ == nullptr) return result;
  detail::garbage trash;
  const std::lock_guard lock(detail::callbacks().mutex);
  for (detail::callback_node* original : state_->nodes) {
    auto* clone = new detail::callback_node;
    clone->ctx = result.state_;
    clone->callable = original->callable;
    ++clone->callable->refs;
    clone->owner = original->owner;
    clone->id = detail::callbacks().next_id++;
    result.state_->nodes.push_back(clone);
    detail::insert_node(*clone->owner, clone);
  }
  detail::reclaim(trash);
  return result;
}

context::scope::~scope() {
  if (!engaged_) return;
  detail::thread_record& record = detail::this_thread_record();
  detail::unref_context(std::exchange(record.ctx, previous_));
}

HOOKSCOPE_DETAIL_END_NAMESPACE

#endif  // HOOKSCOPE_ENABLED
