// hookscope/detail/observer.hpp — static_observer: all of observer's API and its emission paths, trivially
// destructible, below the annotations that keep one in static storage and the registry entries that point to one;
// hookscope/observer.hpp is the documented front door (observer, which adds the destructor).
#pragma once

#include "hookscope/detail/callback_errors.hpp"
#include "hookscope/detail/callbacks.hpp"
#include "hookscope/detail/config.hpp"
#include "hookscope/detail/subscription.hpp"

#include <concepts>
#include <string_view>
#include <type_traits>
#include <utility>

HOOKSCOPE_DETAIL_BEGIN_NAMESPACE

namespace detail {

/// All of `observer`'s API, and no destructor: trivially destructible, so that one in static storage (an
/// annotation's) needs no guard and no exit-time destructor. Never destroyed, it stays valid for the
/// subscriptions that outlive it; one with a shorter life calls `retire()` before its memory goes.
template <class... Args>
class static_observer
#if HOOKSCOPE_ENABLED
    : private observer_core
#endif
{
 public:
  constexpr explicit static_observer(std::string_view name) noexcept
#if HOOKSCOPE_ENABLED
      : observer_core(name)
#endif
  {
#if !HOOKSCOPE_ENABLED
    (void)name;
#endif
  }
  static_observer(const static_observer&) = delete;
  static_observer& operator=(const static_observer&) = delete;

  /// What `observer`'s destructor does: unregisters every callback (their subscriptions may live on).
  void retire() noexcept {
#if HOOKSCOPE_ENABLED
    observer_core::retire();
#endif
  }

  /// The name given at construction (empty in disabled builds, which keep no strings).
  [[nodiscard]] std::string_view name() const noexcept {
#if HOOKSCOPE_ENABLED
    return name_;
#else
    return {};
#endif
  }

  /// Registers `callback` in the current context until the returned subscription ends.
  template <class F>
  [[nodiscard]] subscription add(F&& callback) {
    return add_impl(static_cast<F&&>(callback), false);
  }

  /// Registers `callback` for every thread and context until the returned subscription ends.
  template <class F>
  [[nodiscard]] subscription add_global(F&& callback) {
    return add_impl(static_cast<F&&>(callback), true);
  }

  /// Runs every callback visible from here with `args`; costs one load when nothing is registered.
  [[gnu::always_inline]] void observe(const Args&... args) const {
#if HOOKSCOPE_ENABLED
    if (worth_walking()) emit(args...);
#else
    ((void)args, ...);
#endif
  }

  /// Unregisters a released callback; false if `id` is not registered here (any more).
  bool remove(callback_id id) noexcept {
#if HOOKSCOPE_ENABLED
    return remove_id(id.value);
#else
    (void)id;
    return false;
#endif
  }

  /// True if `observe` called here would run at least one callback.
  [[nodiscard]] bool has_callbacks() const noexcept {
#if HOOKSCOPE_ENABLED
    return has_visible_callbacks();
#else
    return false;
#endif
  }

  /// Internal: whether `observe` here would walk any callback (cheap; may be stale while others register).
  friend bool hookscope_detail_worth_walking(const static_observer& o) noexcept {
#if HOOKSCOPE_ENABLED
    return o.worth_walking();
#else
    (void)o;
    return false;
#endif
  }

 private:
  template <class F>
  subscription add_impl(F&& callback, bool global) {
    using fn_type = std::decay_t<F>;
    static_assert(std::is_invocable_v<fn_type&, const Args&...>,
                  "hookscope: observer::add: the callback cannot be called with the observer's arguments; "
                  "it must accept (const Args&...) of observer<Args...>, e.g. [](const auto&... args) {}");
    static_assert(std::is_constructible_v<fn_type, F&&>,
                  "hookscope: observer::add: the callback must be copy- or move-constructible into storage");
#if HOOKSCOPE_ENABLED
    auto* node = new detail::callable_impl<fn_type, Args...>(static_cast<F&&>(callback));
    return subscription(add_node(node, global));
#else
    (void)callback;
    (void)global;
    return subscription();
#endif
  }

#if HOOKSCOPE_ENABLED
  // The common case (a record, asymmetric fences, one list to walk, global or the current context's, of one
  // callback) runs here, one straight path for each of the two lists, and keeps only its slot across the
  // callback. Every other case leaves by a tail call before any callback runs (walk_one_list, emit_general).
  [[gnu::noinline]] void emit(const Args&... args) const {
    detail::thread_record* record = detail::tls_fast_record;
    if (record == nullptr) [[unlikely]]
      return emit_general(args...);
    const detail::context_slot* own = detail::find_own_slot(*record, this);
    if (globals_.load(std::memory_order_relaxed) == nullptr) {
      if (own == nullptr) return;  // callbacks elsewhere only
      return emit_one_list<false>(*record, own->list, args...);
    }
    if (own != nullptr && own->list.load(std::memory_order_relaxed) != nullptr) return emit_general(args...);  // both
    emit_one_list<true>(*record, globals_, args...);
  }

  template <bool Global>
  [[gnu::always_inline]] void emit_one_list(detail::thread_record& record,
                                            const std::atomic<detail::callback_list*>& head,
                                            const Args&... args) const {
    detail::emission_slot* free = detail::emission<true>::first_slot_if_free(record);
    if (free == nullptr) [[unlikely]]
      return emit_general(args...);  // nested in another emission: the general walk finds a free slot
    detail::emission_slot& slot = *free;
    const detail::callback_list* list = head.load(std::memory_order_acquire);
    if (list == nullptr) return;
    if (!detail::emission<true>::try_protect(Global ? slot.globals : slot.own, head, list)) [[unlikely]]
      return emit_general(args...);  // replaced meanwhile: the general walk protects it anew
    if (list->size != 1) [[unlikely]]
      return walk_one_list(slot, Global, *list, args...);
    detail::emission<true> walk(slot, Global, !Global);
    run_entry(walk, *list->begin(), args...);
  }

  [[gnu::noinline]] void walk_one_list(detail::emission_slot& slot, bool global, const detail::callback_list& list,
                                       const Args&... args) const {
    detail::emission<true> walk(slot, global, !global);
    run(walk, list, args...);
  }

  // Global and context callbacks both, a thread's first emission, and every emission where membarrier is missing.
  [[gnu::noinline]] void emit_general(const Args&... args) const {
    if (detail::thread_record* record = detail::tls_fast_record) {
      walk<true>(*record, args...);
    } else {
      detail::thread_record& made = detail::this_thread_record();  // the thread's first emission makes it
      if (detail::tls_fast_record != nullptr) return walk<true>(made, args...);
      walk<false>(made, args...);
    }
  }

  template <bool Asymmetric>
  [[gnu::always_inline]] void walk(detail::thread_record& record, const Args&... args) const {
    const detail::emission_lists lists =
        detail::emission<Asymmetric>::snapshot(record, *this, detail::find_own_slot(record, this));
    if (lists.globals == nullptr && lists.own == nullptr) return;  // callbacks elsewhere only
    // Two paths: the own list then needs no register across the global callbacks, nor the slot's globals a clear.
    if (lists.globals == nullptr) {
      detail::emission<Asymmetric> walk(*lists.slot, false, true);
      run(walk, *lists.own, args...);
    } else {
      detail::emission<Asymmetric> walk(*lists.slot, true, lists.own != nullptr);
      run(walk, *lists.globals, args...);
      if (lists.own != nullptr) run(walk, *lists.own, args...);
    }
  }

  // A list is never empty; a null entry ends it.
  template <bool Asymmetric>
  [[gnu::always_inline]] void run(detail::emission<Asymmetric>& walk, const detail::callback_list& list,
                                  const Args&... args) const {
    const detail::callback_entry* entry = list.begin();
    do {
      run_entry(walk, *entry, args...);
    } while ((++entry)->node != nullptr);
  }

  template <bool Asymmetric>
  [[gnu::always_inline]] void run_entry(detail::emission<Asymmetric>& walk, const detail::callback_entry& entry,
                                        const Args&... args) const {
    using invoke_type = typename detail::callable_signature<Args...>::invoke_type;
    if (!walk.enter(entry)) return;
    try {
      reinterpret_cast<invoke_type>(entry.invoke)(entry.callable, args...);
    } catch (...) {
      // An observable's call whose emission this exception leaves never reaches its remaining callbacks: the
      // consumers that pair its pre and post callbacks are told (erased_call.hpp), before it leaves.
      if constexpr (requires { hookscope_detail_call_left(args...); }) {
        if (detail::callback_exception_leaves()) hookscope_detail_call_left(args...);
      }
      // Rethrows what is no exception: a forced unwind (pthread_exit, pthread_cancel) ends the thread.
      detail::handle_callback_exception(name_);
    }
  }
#endif
};

}  // namespace detail

HOOKSCOPE_DETAIL_END_NAMESPACE
