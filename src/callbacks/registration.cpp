// Registration: adding a callback (globally or in the current context), removing it (through its
// subscription, an id, or its observer's end), and waiting until a removed callback runs nowhere else.
//
// What `subscription::reset` promises is kept here: the node is unlinked (so no emission starts it again),
// then, if another thread may be running it, the writer fences and waits until no thread's slot marks it
// as running. A private context's owner removing its own callback needs neither.
#include "internal.hpp"

#if HOOKSCOPE_ENABLED

#include <memory>
#include <mutex>
#include <thread>
#include <utility>
#include <vector>

HOOKSCOPE_DETAIL_BEGIN_NAMESPACE
namespace detail {

namespace {

//=== global callbacks ===//

// Replaces `o`'s global list by `next` (null when empty; its entries already hold their references).
// Callback mutex held.
void install_globals(observer_core& o, callback_list* next, garbage& trash) {
  auto& globals = observer_access::globals(o);
  callback_list* old = globals.load(std::memory_order_relaxed);
  globals.store(next, scanned_store_order());
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
  node->removed.store(true, scanned_store_order());  // release_node fences before it waits
  if (owner == nullptr) return;
  callback_list* next = list_without(*observer_access::globals(*owner).load(std::memory_order_relaxed), node);
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
    hold_entries(next->data(), next->data() + size);
    next->data()[size] = {node, node->invoke, node};
    node->refs.store(2, std::memory_order_relaxed);  // its subscription's and the list's; nobody else has it yet
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

void observer_core::retire() noexcept {
  garbage trash;
  auto& store = callbacks();
  const std::lock_guard lock(store.mutex);
  while (const callback_list* list = globals_.load(std::memory_order_relaxed))
    unlink_global(list->begin()->node, trash);
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
HOOKSCOPE_DETAIL_END_NAMESPACE

#endif  // HOOKSCOPE_ENABLED
