// hookscope/observable.hpp — functions annotated once, observed before and after every call.
//
// ```cpp
// namespace passes {
// namespace impl { Graph lower(Graph gm, const Settings& settings); }
// HOOKSCOPE_OBSERVABLE(lower, impl::lower, gm, settings);
// }
// passes::lower(g, s);  // called as before
// auto sub = passes::lower.observers.pre.add([](const auto& ctx) { use(ctx.template arg<"settings">()); });
// ```
//
// The hooks are generated at compile time from the function's type and the annotation's parameter names.
// With nobody listening a call costs one call of a few relaxed loads; in disabled builds it is the plain call.
#pragma once

#include "hookscope/config.hpp"
#include "hookscope/detail/fixed_string.hpp"
#include "hookscope/observer.hpp"
#include "hookscope/registry.hpp"
#include "hookscope/subscription.hpp"
#include "hookscope/value.hpp"

#if HOOKSCOPE_ENABLED
#include "hookscope/capture.hpp"
#include "hookscope/detail/value_ops.hpp"

#include <memory>
#endif

#include <array>
#include <atomic>
#include <cstddef>
#include <exception>
#include <new>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>
#include <tuple>
#include <type_traits>
#include <utility>

HOOKSCOPE_DETAIL_BEGIN_NAMESPACE

namespace detail {

template <class...>
inline constexpr bool dependent_false = false;

/// What the observable machinery may do to a call that its callbacks may not (erased_call befriends it).
struct call_access {
  static constexpr call_key key() noexcept { return {}; }
  static const void* result(const erased_call& c) noexcept { return c.result_; }
  static const void* const* args(const erased_call& c) noexcept { return c.args_; }
  static void finish(erased_call& c, const void* result) noexcept {
    c.result_ = result;
    c.post_ = true;
  }
  static std::exception_ptr& exception(erased_call& c) noexcept {
    return *std::launder(reinterpret_cast<std::exception_ptr*>(c.exception_));
  }
  static void fail(erased_call& c, std::exception_ptr e) noexcept {
    exception(c) = std::move(e);
    c.post_ = true;
  }
  static value_fields capture_args(const erased_call& c, const void* options) { return c.capture_args_with(options); }
};

}  // namespace detail

//=== call_context ===//

template <class Signature>
class call_context;

/// One call of an observable, as its pre and post callbacks see it: arguments as const references, the result.
///
/// It is also the call's erased_call (format_arg, capture_args, ...). Only the observable makes them.
template <class R, class... Args>
class call_context<R(Args...)> : public erased_call {
 public:
  using args_type = std::tuple<const std::remove_reference_t<Args>&...>;
  using result_type = R;

  // function(), exception() and is_post() are erased_call's.

  /// Every argument, as a tuple of const references.
  args_type args() const noexcept {
    return [this]<std::size_t... I>(std::index_sequence<I...>) {
      return args_type(this->template arg<I>()...);
    }(std::index_sequence_for<Args...>{});
  }
  /// Argument `I` as a const reference.
  template <std::size_t I>
  const auto& arg() const noexcept {
    static_assert(I < sizeof...(Args), "hookscope: call_context::arg<I>(): I is not less than the function's arity");
    using type = std::remove_reference_t<std::tuple_element_t<(I < sizeof...(Args) ? I : 0), std::tuple<Args...>>>;
    return *static_cast<const type*>(detail::call_access::args(*this)[I]);
  }
  /// The result (post callbacks of a call that returned), else null.
  const std::remove_reference_t<R>* return_value() const noexcept
    requires(!std::is_void_v<R>)
  {
    return static_cast<const std::remove_reference_t<R>*>(detail::call_access::result(*this));
  }

  /// Internal: made by the observable around each observed call (users cannot make the key). `addresses`: one
  /// per argument (the context holds nothing else of its own: the arguments are read through them).
  call_context(detail::call_key key, const function_info& f, const detail::call_ops& ops,
               const void* const* addresses) noexcept
      : erased_call(key, f, ops, addresses) {}

  /// Not for users: a call context exists only while its observable fires it.
  template <class First, class... Rest>
    requires(!std::is_same_v<std::remove_cvref_t<First>, detail::call_key> &&
             !std::is_base_of_v<erased_call, std::remove_cvref_t<First>>)
  explicit call_context(First&&, Rest&&...)
      : erased_call(detail::call_access::key(), not_reached<function_info>(), not_reached<detail::call_ops>(), {}) {
    static_assert(detail::dependent_false<First>,
                  "hookscope: call_context: only an observable makes call contexts; receive them in callbacks "
                  "instead: f.observers.pre.add([](const auto& ctx) { ... })");
  }
  call_context(const call_context&) = delete;
  call_context& operator=(const call_context&) = delete;
  ~call_context() = default;

 private:
  template <class T>
  static const T& not_reached() noexcept {  // only in the constructor above, which never compiles
    return *static_cast<const T*>(nullptr);
  }
};

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

/// The four observers around one observable: typed and type-erased callbacks, before and after each call. All
/// four fire `const erased_call&` (a typed callback is wrapped to see its call_context), so one emission loop
/// serves every observable of the program.
struct hook_observers {
  erased_observer pre;
  erased_observer post;
  erased_observer erased_pre;
  erased_observer erased_post;

  constexpr explicit hook_observers(std::string_view name) noexcept
      : pre(name), post(name), erased_pre(name), erased_post(name) {}

  // Not inlined: four checks inlined at every call site cost ~150 B each there (GCC outlined some of them anyway
  // in large translation units); a call to them costs no measurable time over the plain call.
  [[gnu::noinline]] bool listening() const noexcept {
    return hookscope_detail_worth_walking(pre) || hookscope_detail_worth_walking(post) ||
           hookscope_detail_worth_walking(erased_pre) || hookscope_detail_worth_walking(erased_post);
  }
};

/// What an annotation keeps at run time: its four observers and its registry entry (which points to two of them).
struct observable_state {
  hook_observers hooks;
  function_info info;

  constexpr observable_state(std::string_view name, std::span<const std::string_view> params,
                             std::string_view signature, std::string_view file, unsigned line) noexcept
      : hooks(name), info(name, params, signature, file, line, &hooks.erased_pre, &hooks.erased_post) {}
};

/// Registers an annotation from its static initialiser through one shared function: the initialiser of a TU of
/// many annotations is then a row of small calls rather than of inlined registrations (smaller, and much cheaper
/// for the compiler to optimise).
struct annotation_link {
  registry_link link;
  [[gnu::noinline]] explicit annotation_link(function_info& info) noexcept : link(info) {}
};

/// Calls the function of an observable: `fn` points to the function (pointer or member pointer), `args` to the
/// arguments, `object` to the object (or null); `result` is storage for the result. Returns the result's address
/// (null for void). One per signature: observables of one signature share it.
using call_thunk = const void* (*)(const void* fn, const void* const* args, void* object, void* result);

/// Makes `call()` and returns the address of its result, constructed in `result` when it is a value.
template <class R, class Call>
[[gnu::always_inline]] inline const void* store_result(Call&& call, [[maybe_unused]] void* result) {
  if constexpr (std::is_void_v<R>) {
    call();
    return nullptr;
  } else if constexpr (std::is_reference_v<R>) {
    R r = call();
    return std::addressof(r);
  } else {
    return ::new (result) R(call());
  }
}

/// An argument, as the function takes it, from its address (that of the observed call's own parameter).
template <class A>
[[gnu::always_inline]] inline A&& forward_arg(const void* address) noexcept {
  return static_cast<A&&>(*static_cast<std::remove_reference_t<A>*>(const_cast<void*>(address)));
}

template <class F, class Self, class R, class... A>
const void* call_function(const void* fn, const void* const* args, [[maybe_unused]] void* object, void* result) {
  const F f = *static_cast<const F*>(fn);
  return [&]<std::size_t... I>(std::index_sequence<I...>) {
    return store_result<R>(
        [&]() -> R {
          if constexpr (std::is_void_v<Self>) {
            return f(forward_arg<A>(args[I])...);
          } else {
            return (static_cast<Self*>(object)->*f)(forward_arg<A>(args[I])...);
          }
        },
        result);
  }(std::index_sequence_for<A...>{});
}

// The steps every observed call shares, in functions of their own: an annotation adds only its call site's
// listening check and its data (observable_state, names), the rest is shared by type or signature.

/// Pre callbacks, then the call; when it throws, the post callbacks, then the exception propagates.
[[gnu::noinline]] inline const void* begin_observed(const hook_observers& h, erased_call& call, call_thunk thunk,
                                                    const void* fn, void* object, void* result) {
  h.pre.observe(call);
  h.erased_pre.observe(call);
  try {
    return thunk(fn, call_access::args(call), object, result);
  } catch (...) {
    // No current exception is a forced unwind (pthread_exit, pthread_cancel): the thread ends, the call did not
    // return nor throw, so no post callback claims it did.
    if (!std::current_exception()) throw;
    struct forget {  // the context's destructor is trivial: it must not be left holding the exception
      erased_call& call;
      ~forget() { call_access::exception(call) = nullptr; }
    } reset{call};
    call_access::fail(call, std::current_exception());
    h.post.observe(call);
    h.erased_post.observe(call);
    throw;
  }
}

/// Post callbacks of a call that returned (`result`: its address, null for void).
[[gnu::noinline]] inline void end_observed(const hook_observers& h, erased_call& call, const void* result) {
  call_access::finish(call, result);
  h.post.observe(call);
  h.erased_post.observe(call);
}

/// Runs one observed call and hands its result back; one instantiation per result type.
template <class R>
[[gnu::noinline]] R run_observed(const hook_observers& h, erased_call& call, call_thunk thunk, const void* fn,
                                 void* object) {
  if constexpr (std::is_void_v<R>) {
    begin_observed(h, call, thunk, fn, object, nullptr);
    end_observed(h, call, nullptr);
  } else if constexpr (std::is_reference_v<R>) {
    const void* r = begin_observed(h, call, thunk, fn, object, nullptr);
    end_observed(h, call, r);
    return static_cast<R>(*static_cast<std::remove_reference_t<R>*>(const_cast<void*>(r)));
  } else {
    alignas(R) unsigned char storage[sizeof(R)];
    R* r = static_cast<R*>(const_cast<void*>(begin_observed(h, call, thunk, fn, object, storage)));
    struct destroy {
      R* r;
      ~destroy() { r->~R(); }
    } guard{r};
    end_observed(h, call, r);
    return static_cast<R&&>(*r);
  }
}

/// How observed_call takes a parameter of type A: small trivially copyable values by value (in registers, so the
/// caller need not store them to take their address), everything else by reference (no copy or move added).
template <class A>
using observed_arg_t =
    std::conditional_t<!std::is_reference_v<A> && std::is_trivially_copyable_v<A> && sizeof(A) <= 2 * sizeof(void*),
                       A, A&>;

/// An observed call of an annotation: builds the context, runs the callbacks around the call. Shared by the
/// annotations of one signature and parameter names (the context's type), whatever their function.
template <class Context, class F, class Self, class R, bool NE, class... A>
[[gnu::noinline]] R observed_call(observable_state& state, const F* fn, void* object,
                                  observed_arg_t<A>... args) noexcept(NE) {
  const std::array<const void*, sizeof...(A)> addresses{static_cast<const void*>(std::addressof(args))...};
  Context ctx(call_access::key(), state.info, call_ops_for<R, A...>, addresses.data());
  return run_observed<R>(state.hooks, ctx, &call_function<F, Self, R, A...>, fn, object);
}

#else
/// What function_info points to in disabled builds, whose observers hold nothing.
inline constinit erased_observer no_observer{""};
#endif

}  // namespace detail

//=== observer_view ===//

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

//=== observable ===//

/// A function annotated for observation; `HOOKSCOPE_OBSERVABLE` declares one as an `inline constexpr` object.
///
/// Its call operator has the function's parameter types and `noexcept`-ness (a member function's takes the
/// object first). `observers.pre` and `observers.post` are subscribe-only views of its events, whose callbacks
/// receive `const call_context<R(Args...)>&` (with arguments also by name); `orig` is the function; `info` its
/// registry entry. `Scope` qualifies the name (the macros pass the namespace or class); `File` is a file name
/// without directories, so the type is the same whatever include path reached the annotation.
template <auto Fn, fixed_string Name, fixed_string Params, class Scope = detail::no_scope, fixed_string File = "",
          unsigned Line = 0, class Shape = detail::shape_of<decltype(Fn)>>
class observable;

template <auto Fn, fixed_string Name, fixed_string Params, class Scope, fixed_string File, unsigned Line, class Self,
          class R, bool NE, class... A>
class observable<Fn, Name, Params, Scope, File, Line, detail::callable_shape<Self, R, NE, A...>> {
  static constexpr detail::names_problem problem_ = detail::check_names(Params.view(), sizeof...(A));
  static_assert(problem_ != detail::names_problem::default_argument,
                "hookscope: HOOKSCOPE_OBSERVABLE: default arguments ('b = 3') are not supported in the parameter "
                "names: a default is not part of the function's type, so the observable is called with every "
                "argument; give the names only (a, b), or annotate a wrapper with the shorter parameter list");
  static_assert(problem_ != detail::names_problem::empty,
                "hookscope: HOOKSCOPE_OBSERVABLE: a parameter name is empty (a stray comma?); give one name per "
                "parameter: HOOKSCOPE_OBSERVABLE(lower, impl::lower, gm, settings)");
  static_assert(problem_ != detail::names_problem::not_identifier,
                "hookscope: HOOKSCOPE_OBSERVABLE: a parameter name is not an identifier; give each parameter's "
                "name only, without its type or anything else: HOOKSCOPE_OBSERVABLE(lower, impl::lower, gm, settings)");
  static_assert(problem_ != detail::names_problem::duplicate,
                "hookscope: HOOKSCOPE_OBSERVABLE: two parameters have the same name; callbacks find arguments by "
                "name (arg<\"name\">), so give each parameter a name of its own");
  static_assert(problem_ != detail::names_problem::count,
                "hookscope: HOOKSCOPE_OBSERVABLE: give exactly one name per parameter of the function");

 public:
  using context_type = detail::named_call_context<R(A...), Params>;
  using observers_type = observers_of<context_type>;

 private:
  using name_ = detail::qualified_name<Scope, Name>;
#if HOOKSCOPE_ENABLED
  static inline constinit detail::observable_state state_{name_::text.view(), context_type::names,
                                                          detail::type_name<decltype(Fn)>(), File.view(), Line};
  static inline detail::annotation_link link_{state_.info};
#else
  static inline constinit function_info info_{name_::text.view(), context_type::names,
                                              detail::type_name<decltype(Fn)>(), File.view(), Line,
                                              &detail::no_observer, &detail::no_observer};
#endif

 public:
#if HOOKSCOPE_ENABLED
  static constexpr observers_type observers{{detail::call_access::key(), state_.hooks.pre},
                                            {detail::call_access::key(), state_.hooks.post}};
  static constexpr const function_info& info = state_.info;
#else
  static constexpr observers_type observers{observer_view<context_type>(detail::call_access::key()),
                                            observer_view<context_type>(detail::call_access::key())};
  static constexpr const function_info& info = info_;
#endif
  static constexpr decltype(Fn) orig = Fn;

  constexpr observable() noexcept {
#if HOOKSCOPE_ENABLED
    (void)&link_;  // declaring the object registers the function, even if it is never called
#endif
  }

  /// Calls the function, with the callbacks around it when anyone listens.
  [[gnu::always_inline]] inline R operator()(A... args) const noexcept(NE)
    requires std::is_void_v<Self>
  {
#if HOOKSCOPE_ENABLED
    if (state_.hooks.listening()) [[unlikely]] {
      return detail::observed_call<context_type, decltype(Fn), Self, R, NE, A...>(state_, &orig, nullptr, args...);
    }
#endif
    return Fn(static_cast<A&&>(args)...);
  }

  /// Calls the member function on `object`, with the callbacks around it when anyone listens.
  [[gnu::always_inline]] inline R operator()(detail::object_ref<Self> object, A... args) const noexcept(NE)
    requires(!std::is_void_v<Self>)
  {
#if HOOKSCOPE_ENABLED
    if (state_.hooks.listening()) [[unlikely]] {
      return detail::observed_call<context_type, decltype(Fn), Self, R, NE, A...>(
          state_, &orig, const_cast<void*>(static_cast<const void*>(&object)), args...);
    }
#endif
    return (object.*Fn)(static_cast<A&&>(args)...);
  }
};

//=== make_observable ===//

namespace detail {

inline constexpr std::string_view positional_names[] = {"arg0", "arg1", "arg2",  "arg3",  "arg4",  "arg5",
                                                        "arg6", "arg7", "arg8",  "arg9",  "arg10", "arg11",
                                                        "arg12", "arg13", "arg14", "arg15"};

template <class F>
struct callable_signature_of : callable_signature_of<decltype(&F::operator())> {};
template <class R, class... A, bool NE>
struct callable_signature_of<R (*)(A...) noexcept(NE)> {
  using type = R(A...);
};
template <class C, class R, class... A, bool NE>
struct callable_signature_of<R (C::*)(A...) noexcept(NE)> {
  using type = R(A...);
};
template <class C, class R, class... A, bool NE>
struct callable_signature_of<R (C::*)(A...) const noexcept(NE)> {
  using type = R(A...);
};

template <class Signature>
struct trampolines;

}  // namespace detail

template <class Signature>
class observable_function;

/// A run-time observable wrapper around any callable: the same `observers` as an annotated function, for code
/// you cannot annotate; `function_pointer()` swaps it into a table of plain function pointers.
///
/// Not copyable or movable (its function pointer refers to it); `make_observable` returns it by value.
template <class R, class... A>
class observable_function<R(A...)> {
  static_assert(sizeof...(A) <= std::size(detail::positional_names),
                "hookscope: make_observable: at most 16 parameters");

 public:
  using context_type = detail::named_call_context<R(A...), "">;
  using observers_type = observers_of<context_type>;
  using pointer = R (*)(A...);

  template <class F>
  observable_function(std::string_view name, F&& target)
      : name_(name),
        target_(new std::decay_t<F>(static_cast<F&&>(target))),
        destroy_([](void* t) noexcept { delete static_cast<std::decay_t<F>*>(t); }),
        call_([](void* t, A&&... args) -> R { return (*static_cast<std::decay_t<F>*>(t))(static_cast<A&&>(args)...); }) {}
  observable_function(const observable_function&) = delete;
  observable_function& operator=(const observable_function&) = delete;
  ~observable_function() {
    if (pointer_ != nullptr) detail::trampolines<R(A...)>::release(this);
    destroy_(target_);
  }

  /// Calls the wrapped callable, with the callbacks around it when anyone listens.
  R operator()(A... args) const {
#if HOOKSCOPE_ENABLED
    if (hooks_.listening()) [[unlikely]] return observed(args...);
#endif
    return call_(target_, static_cast<A&&>(args)...);
  }

  /// A plain function pointer that calls this object, for function-pointer tables; valid while it lives.
  /// At most 16 such pointers per signature exist at once (std::length_error beyond).
  pointer function_pointer() {
    if (pointer_ == nullptr) pointer_ = detail::trampolines<R(A...)>::claim(this);
    return pointer_;
  }

  /// Its description: the name given, parameters named arg0, arg1, ...; `info().pre()` for erased callbacks.
  const function_info& info() const noexcept { return info_; }

 private:
  std::string name_;
  void* target_;
  void (*destroy_)(void*) noexcept;
  R (*call_)(void*, A&&...);
  pointer pointer_ = nullptr;
#if HOOKSCOPE_ENABLED
  detail::hook_observers hooks_{name_};
  function_info info_{name_, std::span(detail::positional_names).first(sizeof...(A)),
                      detail::type_name<R(A...)>(), {}, 0, &hooks_.erased_pre, &hooks_.erased_post};
#else
  function_info info_{name_, std::span(detail::positional_names).first(sizeof...(A)),
                      detail::type_name<R(A...)>(), {}, 0, &detail::no_observer, &detail::no_observer};
#endif

 public:
  /// The callbacks around every call: `pre` before it, `post` after it (also when it threw); subscribe-only.
#if HOOKSCOPE_ENABLED
  const observers_type observers{{detail::call_access::key(), hooks_.pre}, {detail::call_access::key(), hooks_.post}};
#else
  const observers_type observers{observer_view<context_type>(detail::call_access::key()),
                                 observer_view<context_type>(detail::call_access::key())};
#endif

 private:
#if HOOKSCOPE_ENABLED
  static const void* call_target(const void*, const void* const* args, void* self, void* result) {
    const auto& f = *static_cast<const observable_function*>(self);
    return [&]<std::size_t... I>(std::index_sequence<I...>) {
      return detail::store_result<R>([&]() -> R { return f.call_(f.target_, detail::forward_arg<A>(args[I])...); },
                                     result);
    }(std::index_sequence_for<A...>{});
  }

  R observed(A&... args) const {
    const std::array<const void*, sizeof...(A)> addresses{static_cast<const void*>(std::addressof(args))...};
    context_type ctx(detail::call_access::key(), info_, detail::call_ops_for<R, A...>, addresses.data());
    return detail::run_observed<R>(hooks_, ctx, &call_target, nullptr,
                                   const_cast<void*>(static_cast<const void*>(this)));
  }
#endif
};

/// Wraps a function pointer or any callable into an observable_function named `name` (the seed's
/// `_make_observable`): `auto lower = hookscope::make_observable("lower", &third_party::lower);`
template <class F>
observable_function<typename detail::callable_signature_of<std::decay_t<F>>::type> make_observable(
    std::string_view name, F&& target) {
  return {name, static_cast<F&&>(target)};
}

namespace detail {

/// A fixed pool of plain functions per signature, each forwarding to the observable_function bound to it.
template <class R, class... A>
struct trampolines<R(A...)> {
  static constexpr std::size_t capacity = 16;
  static inline std::atomic<const observable_function<R(A...)>*> bound[capacity]{};

  template <std::size_t I>
  static R call(A... args) {
    return (*bound[I].load(std::memory_order_acquire))(static_cast<A&&>(args)...);
  }

  static R (*claim(const observable_function<R(A...)>* f))(A...) {
    static constexpr auto entries = []<std::size_t... I>(std::index_sequence<I...>) {
      return std::array<R (*)(A...), capacity>{&call<I>...};
    }(std::make_index_sequence<capacity>{});
    for (std::size_t i = 0; i < capacity; ++i) {
      const observable_function<R(A...)>* expected = nullptr;
      if (bound[i].compare_exchange_strong(expected, f, std::memory_order_acq_rel)) return entries[i];
    }
    throw std::length_error("hookscope: observable_function::function_pointer: more than 16 function pointers of "
                            "one signature are live; destroy unused observable_function objects");
  }

  static void release(const observable_function<R(A...)>* f) noexcept {
    for (auto& slot : bound) {
      const observable_function<R(A...)>* expected = f;
      slot.compare_exchange_strong(expected, nullptr, std::memory_order_acq_rel);
    }
  }
};

}  // namespace detail

HOOKSCOPE_DETAIL_END_NAMESPACE

/// Declares `name` as the observable form of the function `fn`, whose parameters are named `...`.
///
/// `HOOKSCOPE_OBSERVABLE(lower, impl::lower, gm, settings);` then `lower(g, s)` calls `impl::lower` with hooks.
/// The registry knows it by its name qualified with the enclosing namespace ("passes::lower"; anonymous
/// namespaces left out); its `file` is the file's name without directories. Use it at namespace scope.
#define HOOKSCOPE_OBSERVABLE(name, fn, ...)                                                              \
  struct hookscope_detail_scope_of_##name; /* found by the registry name: its namespace */              \
  inline constexpr ::hookscope::observable<&fn, #name, #__VA_ARGS__,                                     \
                                           ::hookscope::detail::scope_of_tag<hookscope_detail_scope_of_##name>, \
                                           ::hookscope::detail::file_name_of<__FILE__>(), __LINE__>      \
  name {}

/// As HOOKSCOPE_OBSERVABLE, for one overload of `fn`: `type` is its function type, e.g. `double(double)`.
#define HOOKSCOPE_OBSERVABLE_OVERLOAD(name, type, fn, ...)                                               \
  struct hookscope_detail_scope_of_##name;                                                               \
  inline constexpr ::hookscope::observable<::hookscope::detail::pick_overload<type>(&fn), #name, #__VA_ARGS__, \
                                           ::hookscope::detail::scope_of_tag<hookscope_detail_scope_of_##name>, \
                                           ::hookscope::detail::file_name_of<__FILE__>(), __LINE__>      \
  name {}

/// Inside class `cls`, makes `name(args...)` the observed call of the member function `impl` (declared
/// before), and `name##_observers()` its observers; the registry knows it as "cls::name", `cls` qualified as
/// the compiler names the class ("llm::model::forward", "model<int>::forward").
///
/// `HOOKSCOPE_OBSERVABLE_METHOD(Model, forward, forward_impl, input_ids, attention_mask)` then
/// `model.forward(ids, mask)`, and `Model::forward_observers().pre.add(...)`.
#define HOOKSCOPE_OBSERVABLE_METHOD(cls, name, impl, ...)                                                      \
  using name##_observable =                                                                                    \
      ::hookscope::observable<&cls::impl, #name, #__VA_ARGS__, ::hookscope::detail::class_scope<cls>,          \
                              ::hookscope::detail::file_name_of<__FILE__>(), __LINE__>;                       \
  template <class... HookscopeArgs>                                                                            \
  decltype(auto) name(HookscopeArgs&&... hookscope_args) {                                                     \
    return name##_observable{}(*this, static_cast<HookscopeArgs&&>(hookscope_args)...);                        \
  }                                                                                                            \
  template <class... HookscopeArgs>                                                                            \
  decltype(auto) name(HookscopeArgs&&... hookscope_args) const {                                               \
    return name##_observable{}(*this, static_cast<HookscopeArgs&&>(hookscope_args)...);                        \
  }                                                                                                            \
  static constexpr const auto& name##_observers() noexcept {                                                   \
    (void)name##_observable{}; /* registers the method even if it is never called */                          \
    return name##_observable::observers;                                                                       \
  }                                                                                                            \
  static_assert(true, "")
