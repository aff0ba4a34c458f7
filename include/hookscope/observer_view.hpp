// hookscope/observer_view.hpp — the subscribe-only side of an observable's events: `observers.pre` and
// `observers.post` of an annotation or an observable_function, whose callbacks receive the call's context.
#pragma once

#include "hookscope/call_context.hpp"
#include "hookscope/config.hpp"
#include "hookscope/erased_call.hpp"
#include "hookscope/function_info.hpp"
#include "hookscope/subscription.hpp"

#include <type_traits>
#include <utility>

HOOKSCOPE_DETAIL_BEGIN_NAMESPACE

/// The subscribe-only side of an observable's pre or post event: callbacks receive `const Context&`.
///
/// Only the observable fires it (calling the function does); `observe` does not compile here.
template <class Context>
class observer_view {
 public:
  /// Registers `callback` in the current context until the returned subscription ends.
  template <class F>
  [[nodiscard]] subscription add(F&& callback) const {
    return add_impl(static_cast<F&&>(callback), false);
  }
  /// Registers `callback` for every thread and context until the returned subscription ends.
  template <class F>
  [[nodiscard]] subscription add_global(F&& callback) const {
    return add_impl(static_cast<F&&>(callback), true);
  }
  /// Unregisters a released callback; false if `id` is not registered here (any more).
  bool remove(callback_id id) const noexcept {
#if HOOKSCOPE_ENABLED
    return observer_->remove(id);
#else
    (void)id;
    return false;
#endif
  }
  /// True if a call made here would run at least one of these callbacks.
  [[nodiscard]] bool has_callbacks() const noexcept {
#if HOOKSCOPE_ENABLED
    return observer_->has_callbacks();
#else
    return false;
#endif
  }

  /// Does not compile: only the observable fires its events.
  template <class... T>
  void observe(T&&...) const {
    static_assert(detail::dependent_false<T...>,
                  "hookscope: observers.pre/post: only the observable fires its events; call the function itself "
                  "(f(args...)) to run its callbacks, or use a hookscope::observer<...> for events of your own");
  }

#if HOOKSCOPE_ENABLED
  constexpr observer_view(detail::call_key, erased_observer& o) noexcept : observer_(&o) {}
#else
  constexpr explicit observer_view(detail::call_key) noexcept {}
#endif

 private:
  template <class F>
  subscription add_impl(F&& callback, bool global) const {
    using fn_type = std::decay_t<F>;
    static_assert(std::is_invocable_v<fn_type&, const Context&>,
                  "hookscope: observer::add: the callback cannot be called with the observer's arguments; "
                  "it must accept the call's context: [](const auto& ctx) { ... }");
    static_assert(std::is_constructible_v<fn_type, F&&>,
                  "hookscope: observer::add: the callback must be copy- or move-constructible into storage");
#if HOOKSCOPE_ENABLED
    // The observer fires the call as an erased_call; the callback sees the context it really is.
    auto typed = [fn = fn_type(static_cast<F&&>(callback))](const erased_call& call) mutable {
      fn(static_cast<const Context&>(call));
    };
    return global ? observer_->add_global(std::move(typed)) : observer_->add(std::move(typed));
#else
    (void)callback;
    (void)global;
    return subscription();
#endif
  }

#if HOOKSCOPE_ENABLED
  erased_observer* observer_;
#endif
};

/// The callbacks around every call of an observable: `pre` before it, `post` after it (also when it threw).
template <class Context>
struct observers_of {
  observer_view<Context> pre;
  observer_view<Context> post;
};

HOOKSCOPE_DETAIL_END_NAMESPACE
