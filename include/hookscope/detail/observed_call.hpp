// hookscope/detail/observed_call.hpp — how an observable runs a call someone listens to: the non-template step every
// observed call that threw shares, and the observed call of each signature (one copy per signature, not per
// annotation), which emits its pre and post callbacks around the call of its function, and fires the annotation's
// probes around it while a tool is attached to them.
#pragma once

#include "hookscope/detail/call_context.hpp"
#include "hookscope/detail/config.hpp"
#include "hookscope/detail/fixed_string.hpp"
#include "hookscope/detail/function_traits.hpp"
#include "hookscope/detail/observable_state.hpp"
#include "hookscope/detail/probed_call.hpp"
#include "hookscope/detail/erased_call.hpp"

#if HOOKSCOPE_ENABLED
#include "hookscope/detail/value_ops.hpp"
#endif

#include <array>
#include <cstddef>
#include <type_traits>

HOOKSCOPE_DETAIL_BEGIN_NAMESPACE
namespace detail {

#if HOOKSCOPE_ENABLED

/// The address of an argument or result as a call context keeps it: type-erased and const, read back through its
/// declared type, which restores a `volatile` cast away here.
template <class T>
[[gnu::always_inline]] inline const void* erased_address(T& object) noexcept {
  return const_cast<const void*>(static_cast<const volatile void*>(__builtin_addressof(object)));
}

/// Called in the handler of what an observed call threw: its post callbacks, then the exception propagates. A forced
/// unwind (pthread_exit, pthread_cancel: no current exception) propagates at once: the thread ends, the call neither
/// returned nor threw, and no post callback claims it did. Compiled once in the library (src/observed_call.cpp).
[[noreturn]] void fail_observed(erased_call& call);

/// Runs `invoke()` (the function) between `call`'s callbacks, `hooks` (its function's), and returns what it
/// returned. The emissions are called from here, not through a shared step: two fewer calls per observed call
/// (~0.8 ns, `bench/observable.bench.cpp`) for a few instructions more per signature. The observers are reached at
/// fixed offsets from `hooks`, not through the function_info's pointers: two dependent loads fewer a call.
template <class R, class Invoke>
[[gnu::always_inline]] inline R run_observed(const hook_observers& hooks, erased_call& call, Invoke&& invoke) {
  hooks.pre.observe(call);
  if constexpr (std::is_void_v<R>) {
    try {
      invoke();
    } catch (...) {
      fail_observed(call);
    }
    call_access::finish(call, nullptr);
    hooks.post.observe(call);
  } else {
    // The result, elided into `r` (or bound to it, for a reference); destroyed as usual if a post callback throws.
    R r = [&]() -> R {
      try {
        return invoke();
      } catch (...) {
        fail_observed(call);
      }
    }();
    call_access::finish(call, erased_address(r));
    hooks.post.observe(call);
    if constexpr (std::is_reference_v<R>) {
      return static_cast<R>(r);
    } else {
      return r;
    }
  }
}

/// How observed_call takes a parameter of type A: small trivially copyable values by value (in registers, so the
/// caller need not store them to take their address), everything else by reference (no copy or move added).
template <class A>
using observed_arg_t =
    std::conditional_t<!std::is_reference_v<A> && std::is_trivially_copyable_v<A> && sizeof(A) <= 2 * sizeof(void*), A,
                       A&>;

#if HOOKSCOPE_DETAIL_PROBES
/// Which of an annotation's probes a tool is attached to, as its caller read them (detail::entry_raised,
/// detail::return_raised); 0 for an observable type written by hand, which has none.
using raised_probes = unsigned;
#else
/// Nothing to pass in a build without probes (an empty class takes no register).
struct raised_probes {};
struct probe_functions_none {};
#endif

/// What the observed call shared by the annotations of one signature needs of one of them: its state, its function
/// and, with probes, its probe functions. One constant per annotation (detail::call_target_of), which a call site
/// passes by address: one argument for the three.
template <class Function, class Probes>
struct call_target {
  const observable_state* state;
  Function fn;
  [[no_unique_address]] Probes probes;
};

/// The observed calls of the annotations whose callbacks receive `Context` (a signature and its parameter names),
/// on the object of type `Self` (void for free functions; with the method's qualifiers, as in function_type); shared
/// by those annotations whatever their function. A class, so that the symbol of `call` spells its parameters as the
/// types they are.
template <class Context, class Self, bool NE>
struct observed;

template <class R, class... A, fixed_string Params, class Self, bool NE>
struct observed<named_call_context<R(A...), Params>, Self, NE> {
  using result = R;
  using function = typename function_pointer_type<Self, R, NE, A...>::type;
#if HOOKSCOPE_DETAIL_PROBES
  using probes = probe_functions;
#else
  using probes = probe_functions_none;
#endif
  using target = call_target<function, probes>;

  /// Builds the context and runs the callbacks around the call of `to.fn` (on `object` for a member function); while
  /// a tool is attached to the probes (`raised`), between them.
  [[gnu::noinline]] static R call(const target& to, [[maybe_unused]] raised_probes raised,
                                  [[maybe_unused]] void* object, observed_arg_t<A>... args) noexcept(NE) {
#if HOOKSCOPE_DETAIL_PROBES
    if (raised != 0) [[unlikely]] {
      return call_probed(to, raised, object, args...);
    }
#endif
    const std::array<const void*, sizeof...(A)> addresses{erased_address(args)...};
    named_call_context<R(A...), Params> ctx(call_access::key(), to.state->info, call_ops_of<Params, R, A...>,
                                            addresses.data());
    return run_observed<R>(to.state->hooks, ctx, [&]() -> R { return invoke(to, object, args...); });
  }

 private:
  /// The call of the annotation's function (on `object` for a member function).
  [[gnu::always_inline]] static R invoke(const target& to, [[maybe_unused]] void* object, observed_arg_t<A>&... args) {
    if constexpr (std::is_void_v<Self>) {
      return to.fn(static_cast<A&&>(args)...);
    } else {
      return (object_at<Self>(object).*to.fn)(static_cast<A&&>(args)...);
    }
  }

#if HOOKSCOPE_DETAIL_PROBES
  /// The call between the probes, apart: the call above, which every callback's call takes, keeps the registers and
  /// the code of a call without probes. What fires them is compiled once, in the library.
  [[gnu::noinline]] static R call_probed(const target& to, unsigned raised, [[maybe_unused]] void* object,
                                         observed_arg_t<A>... args) noexcept(NE) {
    const std::array<const void*, sizeof...(A)> addresses{erased_address(args)...};
    return run_probed<R>(raised, to.probes, to.state->info.name, object, addresses.data(), [&]() -> R {
      if (to.state->hooks.listening()) return call(to, 0, object, args...);
      return invoke(to, object, args...);
    });
  }
#endif
};

/// The constant an annotation's calls pass to the observed call `Observed` of its signature (detail::call_target):
/// the state of the annotation at `Site`, its function `Fn`, and its probes'. Hidden, as the probes are, so that a
/// shared library's calls reach its own module's probes.
template <class Site, class Observed, auto Fn, bool Method, class... A>
[[gnu::visibility("hidden")]] inline constexpr typename Observed::target call_target_of = [] {
  typename Observed::target to{&Site::state, Fn, {}};
#if HOOKSCOPE_DETAIL_PROBES
  if constexpr (Site::probes::exist) {
    to.probes = probe_functions_of<Site, typename Observed::result, Method, A...>;
  }
#endif
  return to;
}();

/// What the caller of the annotation at `Site` passes as detail::raised_probes: its probes' semaphores as one word.
template <class Site>
[[gnu::always_inline]] inline raised_probes raised_probes_of() noexcept {
#if HOOKSCOPE_DETAIL_PROBES
  if constexpr (Site::probes::exist) {
    return Site::probes::semaphores();
  } else {
    return 0;
  }
#else
  return {};
#endif
}

/// The observed call of an annotation called with its first `sizeof...(G)` arguments (the others left to the
/// function's defaults): the context has the arguments given, and `invoke(args...)` calls the function by name. One
/// per annotation and count (the call by name is the annotation's own), made only where such a call is written.
template <class Context, bool NE>
struct observed_given;

template <class R, class... A, fixed_string Params, bool NE>
struct observed_given<named_call_context<R(A...), Params>, NE> {
  template <class Invoke, class... G>
  [[gnu::noinline]] static R call(const observable_state& state, Invoke invoke, G&... args) noexcept(NE) {
    static_assert(sizeof...(G) < sizeof...(A));
    // The omitted arguments' entries stay null: erased_call never reads past the arguments given.
    const std::array<const void*, sizeof...(A)> addresses{erased_address(args)...};
    named_call_context<R(A...), Params> ctx(call_access::key(), state.info, call_ops_of<Params, R, A...>,
                                            addresses.data(), sizeof...(G));
    return run_observed<R>(state.hooks, ctx, [&]() -> R { return invoke(args...); });
  }
};

#endif

}  // namespace detail
HOOKSCOPE_DETAIL_END_NAMESPACE
