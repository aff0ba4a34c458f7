// Reclamation: when what a change replaced or removed may be freed, and the fences that make that safe.
//
// A replaced list may still be walked by an emission that published it as a hazard. A private context
// (see include/hookscope/detail/callbacks.hpp) is read by its owner thread only, so its owner frees a
// replaced list at once unless its own slots hold it, and otherwise defers it to its record until its
// emissions end. Any other change fences (membarrier) and scans the live records' slots, and keeps what is
// still in use for later. Nodes are reference-counted (their subscription and every list holding them);
// the last reference frees the callable, its clones and its hold on its context's memory.
#include "internal.hpp"

#if HOOKSCOPE_ENABLED

#include <algorithm>
#include <mutex>
#include <new>
#include <utility>
#include <vector>

#if defined(__linux__)
#include <linux/membarrier.h>
#include <sys/syscall.h>
#include <unistd.h>
#endif

HOOKSCOPE_DETAIL_BEGIN_NAMESPACE
namespace detail {

namespace {

void choose_fences() noexcept {
#if defined(__linux__) && !HOOKSCOPE_DETAIL_TSAN
  if (syscall(__NR_membarrier, MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED, 0, 0) == 0 &&
      syscall(__NR_membarrier, MEMBARRIER_CMD_PRIVATE_EXPEDITED, 0, 0) == 0) {
    asymmetric_fences.store(true, std::memory_order_seq_cst);
  }
#endif
}

void destroy_node(callback_node* node) noexcept;

void free_list_now(callback_list* list) noexcept {
  for (const callback_entry& e : *list) {
    unref_node(e.node);
    if (e.callable != e.node) unref_node(e.callable);  // a clone's entry keeps its origin's callable too
  }
  list->~callback_list();
  ::operator delete(list);
}

}  // namespace

callback_store::callback_store() {
  choose_fences();
  // A key's destructor runs after every thread_local's destructor, whatever their order of construction.
  if (pthread_key_create(&record_key, &release_record) != 0) record_key_made = false;
}

// Leaked on purpose: observers stay usable while other statics are destroyed.
callback_store& callbacks() {
  static callback_store* state = new callback_store;
  return *state;
}

void unref_node(callback_node* node) noexcept {
  if (node->refs.fetch_sub(1, std::memory_order_acq_rel) == 1) destroy_node(node);
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

namespace {

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

}  // namespace

void heavy_fence() noexcept {
#if defined(__linux__) && !HOOKSCOPE_DETAIL_TSAN
  if (asymmetric_fences.load(std::memory_order_relaxed)) {
    syscall(__NR_membarrier, MEMBARRIER_CMD_PRIVATE_EXPEDITED, 0, 0);
  }
#endif
  // Otherwise readers and writers both use seq_cst operations, which need no extra fence.
}

callback_list* make_list(std::uint32_t size) {
  void* raw = ::operator new(sizeof(callback_list) + (size + 1) * sizeof(callback_entry));
  auto* list = new (raw) callback_list;
  list->size = size;
  list->data()[size] = {nullptr, nullptr, nullptr};  // the end of emission's walk
  return list;
}

void hold_entries(const callback_entry* begin, const callback_entry* end) noexcept {
  for (const callback_entry* e = begin; e != end; ++e) {
    e->node->refs.fetch_add(1, std::memory_order_relaxed);
    if (e->callable != e->node) e->callable->refs.fetch_add(1, std::memory_order_relaxed);
  }
}

callback_list* list_without(const callback_list& list, const callback_node* node) {
  if (list.size <= 1) return nullptr;  // `node` was the only one: no empty list to allocate and free
  callback_list* next = make_list(list.size - 1);
  callback_entry* out = next->data();
  for (const callback_entry& e : list) {
    if (e.node != node) *out++ = e;
  }
  hold_entries(next->data(), out);
  return next;
}

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

}  // namespace detail
HOOKSCOPE_DETAIL_END_NAMESPACE

#endif  // HOOKSCOPE_ENABLED
