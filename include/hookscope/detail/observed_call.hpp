// hookscope/detail/observed_call.hpp — how an observable runs a call between its callbacks: the named context, the
// function-type traits behind the annotation's checks, the observers and registry entry of an annotation, and the
// non-template steps every observed call shares (one copy per signature, not per annotation).
#pragma once

#include "hookscope/call_context.hpp"
#include "hookscope/config.hpp"
#include "hookscope/detail/fixed_string.hpp"
#include "hookscope/detail/type_name.hpp"
#include "hookscope/observer.hpp"
#include "hookscope/registry.hpp"
#include "hookscope/value.hpp"

#if HOOKSCOPE_ENABLED
#include "hookscope/capture.hpp"
#include "hookscope/detail/value_ops.hpp"

#include <span>
#include <tuple>
#include <utility>
#endif

#include <array>
#include <cstddef>
#include <string_view>
#include <type_traits>

HOOKSCOPE_DETAIL_BEGIN_NAMESPACE

namespace detail {

/// The context an observable's callbacks receive: a call_context that also finds arguments by name.
template <class Signature, fixed_string Params>
class named_call_context;

template <class R, class... Args, fixed_string Params>
class named_call_context<R(Args...), Params> : public call_context<R(Args...)> {
 public:
  static constexpr std::array<std::string_view, sizeof...(Args)> names = split_names<sizeof...(Args)>(Params.view());

  using call_context<R(Args...)>::call_context;

  /// Argument `I` as a const reference (redeclared: a using-declaration would be hidden by the overload below).
  template <std::size_t I>
  const auto& arg() const noexcept {
    return call_context<R(Args...)>::template arg<I>();
  }

  /// The argument named `Name` in the annotation; a name not there does not compile.
  template <fixed_string Name>
  const auto& arg() const noexcept {
    constexpr std::size_t index = index_of(names, Name.view());
    static_assert(index < sizeof...(Args),
                  "hookscope: call_context::arg<Name>(): no parameter has that name in this observable; "
                  "use one of the names given to HOOKSCOPE_OBSERVABLE (listed in the template arguments below)");
    return call_context<R(Args...)>::template arg<(index < sizeof...(Args) ? index : 0)>();  // only the message above
  }
};

/// What an observable needs of a function type: the object it is called on (void for free functions), the
/// result, noexcept-ness and the parameters.
template <class Self, class R, bool NE, class... A>
struct callable_shape {};

template <class F>
struct shape_traits {
  static_assert(sizeof(F) == 0,
                "hookscope: observable<&fn, ...>: fn must be a function or a member function; for an overloaded "
                "one, pick the overload (HOOKSCOPE_OBSERVABLE_OVERLOAD or static_cast<Type*>(&fn))");
  using type = void;
};
template <class R, class... A, bool NE>
struct shape_traits<R (*)(A...) noexcept(NE)> {
  using type = callable_shape<void, R, NE, A...>;
};
template <class C, class R, class... A, bool NE>
struct shape_traits<R (C::*)(A...) noexcept(NE)> {
  using type = callable_shape<C, R, NE, A...>;
};
template <class C, class R, class... A, bool NE>
struct shape_traits<R (C::*)(A...) const noexcept(NE)> {
  using type = callable_shape<const C, R, NE, A...>;
};

template <class F>
struct c_variadic {
  static_assert(sizeof(F) == 0,
                "hookscope: HOOKSCOPE_OBSERVABLE: a C variadic function (with '...', like printf) cannot be observed: "
                "its variable arguments cannot be forwarded; annotate a function with a fixed parameter list "
                "instead (a wrapper, one taking a va_list, or one instantiation of a variadic template)");
  using type = void;
};
template <class R, class... A, bool NE>
struct shape_traits<R (*)(A..., ...) noexcept(NE)> : c_variadic<R (*)(A..., ...)> {};
template <class C, class R, class... A, bool NE>
struct shape_traits<R (C::*)(A..., ...) noexcept(NE)> : c_variadic<R (C::*)(A..., ...)> {};
template <class C, class R, class... A, bool NE>
struct shape_traits<R (C::*)(A..., ...) const noexcept(NE)> : c_variadic<R (C::*)(A..., ...) const> {};

template <class F>
using shape_of = typename shape_traits<F>::type;

/// The function type of a shape: shape_traits the other way round.
template <class Self, class R, bool NE, class... A>
struct shape_function {
  using type = R (Self::*)(A...) noexcept(NE);
};
template <class R, bool NE, class... A>
struct shape_function<void, R, NE, A...> {
  using type = R (*)(A...) noexcept(NE);
};
template <class C, class R, bool NE, class... A>
struct shape_function<const C, R, NE, A...> {
  using type = R (C::*)(A...) const noexcept(NE);
};

template <class Shape>
struct shape_arity {
  static constexpr std::size_t value = 0;  // not a function: shape_traits says so
};
template <class Self, class R, bool NE, class... A>
struct shape_arity<callable_shape<Self, R, NE, A...>> {
  static constexpr std::size_t value = sizeof...(A);
};
/// The number of parameters of the function type F.
template <class F>
inline constexpr std::size_t arity_of = shape_arity<shape_of<F>>::value;

/// Selects the overload of a function of type F (HOOKSCOPE_OBSERVABLE_OVERLOAD).
template <class F>
constexpr F* pick_overload(F* f) noexcept {
  return f;
}

/// The object parameter of a member observable; a placeholder nobody can pass for free functions.
struct no_object {
  no_object() = delete;
};
template <class Self>
using object_ref = std::conditional_t<std::is_void_v<Self>, no_object, Self>&;

/// Every argument of a call, captured and named by the annotation (what recorders store).
#if HOOKSCOPE_ENABLED
template <class Args>
inline constexpr bool all_capturable = false;
template <class... T>
inline constexpr bool all_capturable<std::tuple<const T&...>> = (capturable<T> && ...);

template <class Context>
value_fields capture_args(const Context& ctx, capture_options options) {
  static_assert(all_capturable<typename Context::args_type>,
                "hookscope: this parameter type cannot be captured: a recorder needs every parameter of the "
                "function to be capturable (see hookscope::capturable)");
  return call_access::capture_args(ctx, &options);
}
#else
template <class Context, class Options>
value_fields capture_args(const Context&, const Options&) {
  return {};  // no call is ever observed in a disabled build
}
#endif

/// The registry entry of an observable given to a recorder: a live observable_function, or an annotation's type.
template <class Observable>
const function_info& function_info_of(const Observable& target) {
  if constexpr (requires { target.info(); }) {
    return target.info();
  } else {
    return std::remove_cvref_t<Observable>::info;
  }
}

#if HOOKSCOPE_ENABLED

/// The two observers around one observable, before and after each call. Typed callbacks (`observers.pre`) and
/// type-erased ones (`function_info::pre()`) are registrations on the same observer, which fires
/// `const erased_call&` (a typed callback is wrapped to see its call_context): one event, two ways to subscribe,
/// callbacks in registration order whichever way they came, and one emission loop for every observable.
struct hook_observers {
  erased_observer pre;
  erased_observer post;

  constexpr explicit hook_observers(std::string_view name) noexcept : pre(name), post(name) {}

  /// An annotation's are never destroyed; an observable_function's end with it.
  void retire() noexcept {
    pre.retire();
    post.retire();
  }

  // Inlined at every call site: two compares of static counters take fewer bytes there than a call's setup
  // (tools/annotation_cost.py: 732 B per annotation against 738 B through a call), and an observed call saves the
  // call (pre + post on an observable: 7.3 ns over the plain call against 7.9 ns, bench/observable.bench.cpp).
  [[gnu::always_inline]] bool listening() const noexcept {
    return hookscope_detail_worth_walking(pre) || hookscope_detail_worth_walking(post);
  }
};

/// What an annotation keeps at run time: its two observers and its registry entry (which points to them).
struct observable_state {
  hook_observers hooks;
  function_info info;

  constexpr observable_state(std::string_view name, std::span<const std::string_view> params,
                             std::string_view signature, std::string_view file, unsigned line) noexcept
      : hooks(name), info(name, params, signature, file, line, &hooks.pre, &hooks.post) {}
};

/// Registers an annotation from its static initialiser through one shared function: the initialiser of a TU of
/// many annotations is then a row of small calls rather than of inlined registrations (smaller, and much cheaper
/// for the compiler to optimise). For annotations in a class, or an observable type written by hand: those at
/// namespace scope are listed instead (below).
struct annotation_link {
  registry_link link;
  [[gnu::noinline]] explicit annotation_link(function_info& info) noexcept : link(info) {}
};

// An annotation at namespace scope lists its registry entry in the linker section `hookscope_sites` (a pointer per
// annotation and translation unit: HOOKSCOPE_DETAIL_LIST_SITE), and each module (the program, or a shared library)
// links the whole list once, from one static initialiser: no initialiser, unwind entry or call per annotation.
// GNU ld and LLVM's lld define __start_/__stop_ of a section whose name is an identifier; weak, so that a module
// without a listed annotation links; hidden, so that each module sees its own list.
extern "C" {
[[gnu::weak, gnu::visibility("hidden")]] extern function_info* const __start_hookscope_sites[];  // NOLINT
[[gnu::weak, gnu::visibility("hidden")]] extern function_info* const __stop_hookscope_sites[];   // NOLINT
}

/// The module's listed annotations, linked into the registry. An inline variable: initialised before anything
/// defined below this header in each translation unit that includes it, so before any of them can call an
/// annotation; hidden, so once per module.
[[gnu::visibility("hidden")]] inline const bool module_sites_linked =
    (registry_link::link_all(__start_hookscope_sites, __stop_hookscope_sites), true);

/// Called in the handler of what an observed call threw: its post callbacks, then the exception propagates. A forced
/// unwind (pthread_exit, pthread_cancel: no current exception) propagates at once: the thread ends, the call neither
/// returned nor threw, and no post callback claims it did. Compiled once in the library (src/observed_call.cpp).
[[noreturn]] void fail_observed(erased_call& call);

/// Runs `invoke()` (the function) between `call`'s callbacks and returns what it returned. The emissions are called
/// from here, not through a shared step: two fewer calls per observed call (~0.8 ns, `bench/observable.bench.cpp`)
/// for a few instructions more per signature.
template <class R, class Invoke>
[[gnu::always_inline]] inline R run_observed(erased_call& call, Invoke&& invoke) {
  call.function().pre().observe(call);
  if constexpr (std::is_void_v<R>) {
    try {
      invoke();
    } catch (...) {
      fail_observed(call);
    }
    call_access::finish(call, nullptr);
    call.function().post().observe(call);
  } else {
    // The result, elided into `r` (or bound to it, for a reference); destroyed as usual if a post callback throws.
    R r = [&]() -> R {
      try {
        return invoke();
      } catch (...) {
        fail_observed(call);
      }
    }();
    call_access::finish(call, __builtin_addressof(r));
    call.function().post().observe(call);
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
    std::conditional_t<!std::is_reference_v<A> && std::is_trivially_copyable_v<A> && sizeof(A) <= 2 * sizeof(void*),
                       A, A&>;

/// The observed calls of the annotations whose callbacks receive `Context` (a signature and its parameter names),
/// on the object of type `Self` (void for free functions); shared by those annotations whatever their function. A
/// class, so that the symbol of `call` spells its parameters as the types they are.
template <class Context, class Self, bool NE>
struct observed;

template <class R, class... A, fixed_string Params, class Self, bool NE>
struct observed<named_call_context<R(A...), Params>, Self, NE> {
  using function = typename shape_function<Self, R, NE, A...>::type;

  /// Builds the context and runs the callbacks around the call of `fn` (on `object` for a member function).
  [[gnu::noinline]] static R call(const function_info& info, function fn, [[maybe_unused]] void* object,
                                  observed_arg_t<A>... args) noexcept(NE) {
    const std::array<const void*, sizeof...(A)> addresses{static_cast<const void*>(__builtin_addressof(args))...};
    named_call_context<R(A...), Params> ctx(call_access::key(), info, call_ops_for<R, A...>, addresses.data());
    return run_observed<R>(ctx, [&]() -> R {
      if constexpr (std::is_void_v<Self>) {
        return fn(static_cast<A&&>(args)...);
      } else {
        return (static_cast<Self*>(object)->*fn)(static_cast<A&&>(args)...);
      }
    });
  }
};

#else
/// What function_info points to in disabled builds, whose observers hold nothing.
inline constinit erased_observer no_observer{""};
#endif

}  // namespace detail

HOOKSCOPE_DETAIL_END_NAMESPACE
