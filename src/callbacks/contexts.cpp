// Contexts: a context's table of observers, the callback lists it holds per observer and how they change,
// its lifetime (handles, the threads using it, the nodes registered in it), and the public `context`.
//
// A context's lists change under its mutex. While it is private (only its owner thread has attached it),
// its owner replaces a list and frees the old one at once unless its own emissions walk it; otherwise the
// old list waits in the context's retired chain until no thread's hazard holds it (reclamation.cpp).
#include "hookscope/context.hpp"
#include "internal.hpp"

#if HOOKSCOPE_ENABLED

#include <algorithm>
#include <mutex>
#include <new>
#include <utility>

HOOKSCOPE_DETAIL_BEGIN_NAMESPACE
namespace detail {

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

namespace {

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

}  // namespace

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

namespace {

// Whether the calling thread may change `ctx` as its private owner. Context mutex held.
bool owned_privately(const context_state& ctx) noexcept {
  return !ctx.shared && ctx.owner_thread == tls_thread_id && tls_record != nullptr;
}

// Replaces `slot`'s list by `next` (null when empty; its entries already hold their references) and retires
// the old one. `privately`: owned_privately(ctx). Context mutex held.
void install(context_state& ctx, context_slot& slot, callback_list* next, bool privately, garbage& trash) {
  callback_list* old = slot.list.load(std::memory_order_relaxed);
  if (privately) {
    // Only this thread reads a private context, and it reads in program order.
    slot.list.store(next, std::memory_order_release);
    if (old == nullptr) return;
    thread_record& self = *tls_record;
    if (self.deferred != nullptr) flush_deferred(self, trash);
    retire_private(self, old, trash);
    return;
  }
  slot.list.store(next, scanned_store_order());
  if (old == nullptr) return;
  old->next_retired = ctx.retired;
  ctx.retired = old;
  reclaim_shared(&ctx.retired, trash);
}

}  // namespace

void insert_in_context(context_state& ctx, callback_node* node, observer_core* o, garbage& trash) {
  context_slot& slot = slot_for_observer(ctx, o);
  const callback_list* old = slot.list.load(std::memory_order_relaxed);
  const std::uint32_t size = old ? old->size : 0;
  callback_list* next = make_list(size + 1);
  callback_entry* out = next->data();
  for (std::uint32_t i = 0; i < size; ++i) out[i] = old->begin()[i];
  hold_entries(out, out + size);
  callback_node* callable = node->origin != nullptr ? node->origin : node;
  out[size] = {callable, callable->invoke, node};
  // The new list's reference. No other thread changes `node`'s count now (it is being added; a clone's only
  // other holder, its origin's chain, is under the callback mutex, held by copy()), so a plain increment
  // does; the callable of a clone is its origin, which others may hold.
  node->refs.store(node->refs.load(std::memory_order_relaxed) + 1, std::memory_order_relaxed);
  if (callable != node) callable->refs.fetch_add(1, std::memory_order_relaxed);
  install(ctx, slot, next, owned_privately(ctx), trash);
  ctx.nodes.push_back(node);
  observer_access::listeners(*o).fetch_add(1, std::memory_order_relaxed);
}

bool unlink_from_context(context_state& ctx, callback_node* node, garbage& trash) {
  observer_core* owner = std::exchange(node->owner, nullptr);
  const bool privately = owned_privately(ctx);
  // Private: no other thread can be running it. Otherwise the caller fences before it waits.
  node->removed.store(true, privately ? std::memory_order_release : scanned_store_order());
  if (owner == nullptr) return false;
  context_slot* slot = find_slot(ctx, owner);
  install(ctx, *slot, list_without(*slot->list.load(std::memory_order_relaxed), node), privately, trash);
  auto it = std::find(ctx.nodes.begin(), ctx.nodes.end(), node);
  if (it != ctx.nodes.end()) ctx.nodes.erase(it);
  observer_access::listeners(*owner).fetch_sub(1, std::memory_order_relaxed);
  return !privately;
}

namespace {

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

}  // namespace

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
