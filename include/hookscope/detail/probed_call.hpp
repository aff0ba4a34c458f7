// hookscope/detail/probed_call.hpp — how an annotation runs a call while a tool is attached to its probes: the entry
// probe, the call (between the process's own callbacks if it has any), and the return probe, also when it throws.
#pragma once

#include "hookscope/config.hpp"
#include "hookscope/detail/probe_sites.hpp"

#if HOOKSCOPE_ENABLED

#include "hookscope/call_context.hpp"
#include "hookscope/detail/fixed_string.hpp"
#include "hookscope/detail/function_traits.hpp"
#include "hookscope/detail/observed_call.hpp"

#include <exception>
#include <type_traits>

HOOKSCOPE_DETAIL_BEGIN_NAMESPACE
namespace detail {

/// Whether anyone listens to the annotation at `Site`: a callback in the process, or a tool at one of its probes
/// (three relaxed loads then: the two observers' counters, and the probes' two semaphores as one word).
template <class Site>
[[gnu::always_inline]] inline bool hooks_or_probes() noexcept {
#if HOOKSCOPE_DETAIL_PROBES
  if constexpr (Site::probes::exist) {
    return Site::state.hooks.listening() || Site::probes::attached();
  }
#endif
  return Site::state.hooks.listening();
}

}  // namespace detail
HOOKSCOPE_DETAIL_END_NAMESPACE

#endif

#if HOOKSCOPE_DETAIL_PROBES

HOOKSCOPE_DETAIL_BEGIN_NAMESPACE
namespace detail {

/// What the return probe carries for a result of type R.
template <class R>
using result_operand_t = decltype(probe_operand(std::declval<const std::remove_cvref_t<R>&>()));

/// Runs `invoke()` and fires the return probe of `Probes` after it: with the result's operand and 0 when it
/// returned, with a zero operand and 1 when it threw (then the exception propagates). A forced unwind (pthread_exit,
/// pthread_cancel: no current exception) fires nothing, as it fires no post callback.
template <class Probes, class R, class Invoke>
[[gnu::always_inline]] inline R run_probed(const char* name, Invoke&& invoke) {
  if constexpr (std::is_void_v<R>) {
    try {
      invoke();
    } catch (...) {
      if (std::current_exception()) Probes::leave(name, 1);
      throw;
    }
    Probes::leave(name, 0);
  } else {
    R r = [&]() -> R {
      try {
        return invoke();
      } catch (...) {
        if (std::current_exception()) Probes::leave_with(name, 1, result_operand_t<R>{});
        throw;
      }
    }();
    Probes::leave_with(name, 0, probe_operand(r));
    if constexpr (std::is_reference_v<R>) {
      return static_cast<R>(r);
    } else {
      return r;
    }
  }
}

/// The call of the annotation at `Site` (whose callbacks receive `Context`) while a tool may be attached to its
/// probes: one per annotation, since each has probes of its own name.
template <class Site, class Context, class Self, bool NE>
struct probed;

template <class Site, class R, class... A, fixed_string Params, class Self, bool NE>
struct probed<Site, named_call_context<R(A...), Params>, Self, NE> {
  using context = named_call_context<R(A...), Params>;
  using function = typename function_pointer_type<Self, R, NE, A...>::type;
  using probes = typename Site::probes;

  [[gnu::noinline]] static R call(function fn, [[maybe_unused]] void* object, observed_arg_t<A>... args) noexcept(NE) {
    const char* const name = Site::state.info.name.data();
    probes::enter(name, entry_operands<probes::operands, !std::is_void_v<Self>>(object, args...));
    return run_probed<probes, R>(name, [&]() -> R {
      if (Site::state.hooks.listening()) {
        return observed<context, Self, NE>::call(Site::state.info, fn, object, args...);
      }
      if constexpr (std::is_void_v<Self>) {
        return fn(static_cast<A&&>(args)...);
      } else {
        return (static_cast<Self*>(object)->*fn)(static_cast<A&&>(args)...);
      }
    });
  }
};

/// The same for a call given its first `sizeof...(G)` arguments (detail::given_call): the entry probe's operands of
/// the arguments left to their defaults are 0.
template <class Site, class Context, bool NE>
struct probed_given;

template <class Site, class R, class... A, fixed_string Params, bool NE>
struct probed_given<Site, named_call_context<R(A...), Params>, NE> {
  using context = named_call_context<R(A...), Params>;
  using probes = typename Site::probes;

  template <bool Method, class Invoke, class... G>
  [[gnu::noinline]] static R call(void* object, Invoke invoke, G&... args) noexcept(NE) {
    const char* const name = Site::state.info.name.data();
    probes::enter(name, entry_operands<probes::operands, Method>(object, args...));
    return run_probed<probes, R>(name, [&]() -> R {
      if (Site::state.hooks.listening()) return observed_given<context, NE>::call(Site::state.info, invoke, args...);
      return invoke(args...);
    });
  }
};

}  // namespace detail
HOOKSCOPE_DETAIL_END_NAMESPACE

#endif

#if HOOKSCOPE_ENABLED

HOOKSCOPE_DETAIL_BEGIN_NAMESPACE
namespace detail {

/// The call of an annotation given its first arguments (detail::given_call) with someone listening: between the
/// probes while a tool is attached to them, else between the process's callbacks. `Method`: `object` is the object
/// of a member function, which the entry probe carries first.
template <class Site, class Context, bool NE, bool Method, class Invoke, class... G>
[[gnu::always_inline]] inline decltype(auto) slow_given_call([[maybe_unused]] void* object, Invoke invoke,
                                                             G&... args) noexcept(NE) {
#if HOOKSCOPE_DETAIL_PROBES
  if constexpr (Site::probes::exist) {
    if (Site::probes::attached()) {
      return probed_given<Site, Context, NE>::template call<Method>(object, invoke, args...);
    }
  }
#endif
  return observed_given<Context, NE>::call(Site::state.info, invoke, args...);
}

}  // namespace detail
HOOKSCOPE_DETAIL_END_NAMESPACE

#endif
