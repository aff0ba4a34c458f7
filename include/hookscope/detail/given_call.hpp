// hookscope/detail/given_call.hpp — the call operators of an annotation given fewer arguments than its function has
// parameters: the arguments given are converted to their parameter types, the callbacks see them, and the function is
// called by name, so that its own defaults supply the rest (the site's `by_name`, which the macros define); and the
// calls an annotation refuses with a message of its own.
#pragma once

#include "hookscope/detail/call_context.hpp"
#include "hookscope/detail/config.hpp"
#include "hookscope/detail/fixed_string.hpp"
#include "hookscope/detail/function_traits.hpp"
#include "hookscope/detail/observed_call.hpp"
#include "hookscope/detail/probed_call.hpp"

#include <array>
#include <cstddef>
#include <type_traits>
#include <tuple>
#include <utility>

HOOKSCOPE_DETAIL_BEGIN_NAMESPACE
namespace detail {

/// The type of parameter `I` of `A...`.
template <std::size_t I, class... A>
using nth_param = std::tuple_element_t<I, std::tuple<A...>>;

/// Whether the annotation at `Site` can call its function by name with arguments of types `G...` (the function's
/// own defaults then supply the rest).
template <class Site, class... G>
concept callable_by_name = requires(G&&... g) {
  Site::by_name(static_cast<G&&>(g)...);
};

template <class Site, class... G>
constexpr bool check_by_name() noexcept {
  static_assert(callable_by_name<Site, G...>,
                "hookscope: HOOKSCOPE_OBSERVABLE: this call omits arguments, and the function cannot be called by "
                "name with the ones given (the annotation: Site = hookscope_detail_site_<name>): an omitted "
                "parameter has no default where the function is declared before the annotation, or the call by name "
                "is ambiguous (another overload as good), reaches an inaccessible member, or takes by value a type "
                "that can be neither copied nor moved. Pass every argument, or give the parameter a default before "
                "the annotation. An observable written by hand (observable<&fn, \"name\", \"params\">) cannot "
                "call by name: pass every argument, or annotate with the macros");
  return callable_by_name<Site, G...>;
}

#if HOOKSCOPE_ENABLED
/// The call of an annotation given its first arguments (detail::given_call) with someone listening: between the
/// probes while a tool is attached to them (the operands of the arguments left to their defaults are then 0), else
/// between the process's callbacks. `Method`: `object` is the object of a member function, which the entry probe
/// carries first.
template <class Site, class Context, bool NE, bool Method, class Invoke, class... G>
[[gnu::always_inline]] inline decltype(auto) slow_given_call([[maybe_unused]] void* object, Invoke invoke,
                                                             G&... args) noexcept(NE) {
#if HOOKSCOPE_DETAIL_PROBES
  if constexpr (Site::probes::exist) {
    if (const unsigned raised = Site::probes::semaphores()) {
      using result = typename Context::result_type;
      const std::array<const void*, sizeof...(G)> addresses{erased_address(args)...};
      return run_probed<result>(raised, probe_functions_of<Site, result, Method, G...>, Site::state.info.name, object,
                                addresses.data(), [&]() -> result {
                                  if (Site::state.hooks.listening()) {
                                    return observed_given<Context, NE>::call(Site::state, invoke, args...);
                                  }
                                  return invoke(args...);
                                });
    }
  }
#endif
  return observed_given<Context, NE>::call(Site::state, invoke, args...);
}
#endif

/// The call operator of an annotation given its first `sizeof...(I)` arguments: they are converted to their
/// parameters' types as a full call converts them, the callbacks see them, and the function is called by name (a
/// default applies only to a call through the name, never through a pointer). `Self`: as in observable.
template <class Site, class Context, class Self, bool NE, class Indices>
class given_call;

/// Whether a call by name with these arguments cannot throw: the function's noexcept, and its defaults', which are
/// evaluated in the call (a noexcept function whose default throws lets the exception out to its caller).
template <class Site, class... G>
constexpr bool nothrow_by_name() noexcept {
  if constexpr (callable_by_name<Site, G...>) {
    return noexcept(Site::by_name(std::declval<G>()...));
  } else {
    return false;
  }
}

template <class Site, class R, class... A, fixed_string Params, bool NE, std::size_t... I>
class given_call<Site, named_call_context<R(A...), Params>, void, NE, std::index_sequence<I...>> {
  static constexpr bool nothrow = NE && nothrow_by_name<Site, nth_param<I, A...>...>();

 public:
  [[gnu::always_inline]] constexpr R operator()(nth_param<I, A...>... args) const noexcept(nothrow) {
    if constexpr (check_by_name<Site, nth_param<I, A...>...>()) {
#if HOOKSCOPE_ENABLED
      if (hooks_or_probes<Site>()) [[unlikely]] {
        return slow_given_call<Site, named_call_context<R(A...), Params>, nothrow, false>(
            nullptr,
            [](nth_param<I, A...>&... a) -> R { return Site::by_name(static_cast<nth_param<I, A...>&&>(a)...); },
            args...);
      }
#endif
      return Site::by_name(static_cast<nth_param<I, A...>&&>(args)...);
    } else {
      __builtin_unreachable();  // only the message above
    }
  }
};

// A member function's: its object is passed on by name as given (an rvalue for a `&&`-qualified method), so that the
// call by name reaches the overload of the method's ref-qualifier.
template <class Site, class R, class... A, fixed_string Params, class Self, bool NE, std::size_t... I>
class given_call<Site, named_call_context<R(A...), Params>, Self, NE, std::index_sequence<I...>> {
  static constexpr bool nothrow = NE && nothrow_by_name<Site, object_ref<Self>, nth_param<I, A...>...>();

 public:
  [[gnu::always_inline]] constexpr R operator()(object_ref<Self> object, nth_param<I, A...>... args) const
      noexcept(nothrow) {
    if constexpr (check_by_name<Site, object_ref<Self>, nth_param<I, A...>...>()) {
#if HOOKSCOPE_ENABLED
      if (hooks_or_probes<Site>()) [[unlikely]] {
        return slow_given_call<Site, named_call_context<R(A...), Params>, nothrow, true>(
            object_address(object),
            [&object](nth_param<I, A...>&... a) -> R {
              return Site::by_name(static_cast<object_ref<Self>>(object), static_cast<nth_param<I, A...>&&>(a)...);
            },
            args...);
      }
#endif
      return Site::by_name(static_cast<object_ref<Self>>(object), static_cast<nth_param<I, A...>&&>(args)...);
    } else {
      __builtin_unreachable();  // only the message above
    }
  }
};

/// A parameter type nobody can pass: an annotation of a function without parameters has no shorter call, but
/// observable's using-declaration needs an operator to name.
struct no_given_call {
  no_given_call() = delete;
};

/// The call operators of an annotation given fewer arguments than its function has parameters: one per count.
template <class Site, class Context, class Self, bool NE, class Counts>
struct given_calls;

template <class Site, class Context, class Self, bool NE, std::size_t... K>
struct given_calls<Site, Context, Self, NE, std::index_sequence<K...>>
    : given_call<Site, Context, Self, NE, std::make_index_sequence<K>>... {
  using given_call<Site, Context, Self, NE, std::make_index_sequence<K>>::operator()...;
};

template <class Site, class Context, class Self, bool NE>
struct given_calls<Site, Context, Self, NE, std::index_sequence<>> {
  void operator()(no_given_call&) const = delete;
};

template <class... G>
inline constexpr bool refused_call = false;

/// What a refused call returns: converts to the result expected, so that the compiler reports the refusal only.
struct refused_result {
  template <class T>
  operator T() const noexcept;
};

/// What is wrong with the object `O` (as a forwarding reference deduces it: `T&` for an lvalue) given to the
/// observable of a member function whose object is `Self` (function_type) when it cannot be its object.
enum class object_problem { other_class, const_object, lvalue_object, rvalue_object, rvalue_object_unqualified, other };

template <class Self, class O>
constexpr object_problem object_problem_of() noexcept {
  using given = std::remove_reference_t<O>;
  if (!std::is_base_of_v<std::remove_cvref_t<Self>, std::remove_cv_t<given>>) return object_problem::other_class;
  if (std::is_const_v<given> && !std::is_const_v<std::remove_reference_t<Self>>) return object_problem::const_object;
  if (std::is_rvalue_reference_v<Self> && std::is_lvalue_reference_v<O>) return object_problem::lvalue_object;
  if (std::is_lvalue_reference_v<Self> && !std::is_lvalue_reference_v<O>) return object_problem::rvalue_object;
  if (!std::is_reference_v<Self> && !std::is_lvalue_reference_v<O>) return object_problem::rvalue_object_unqualified;
  return object_problem::other;
}

/// The calls an annotation refuses with one hookscope message rather than every candidate: more arguments than the
/// function has parameters (`Arity`, the object not counted), and, for a member function whose object is `Self`, an
/// object that cannot be its object (an lvalue for a `&&`-qualified method, a const object for a non-const one, ...).
template <class Self, std::size_t Arity>
struct refused_calls {
  template <class... G>
    requires(sizeof...(G) > Arity + (std::is_void_v<Self> ? 0 : 1))
  refused_result operator()(G&&...) const {
    static_assert(refused_call<G...>,
                  "hookscope: HOOKSCOPE_OBSERVABLE: this call gives more arguments than the annotated function has "
                  "parameters (the annotation's function type is in the observable's template arguments)");
    return {};
  }

  template <class O, class... G>
    requires(!std::is_void_v<Self> && sizeof...(G) <= Arity && !std::is_convertible_v<O&&, object_ref<Self>>)
  refused_result operator()(O&&, G&&...) const {
    constexpr object_problem problem = object_problem_of<Self, O>();
    static_assert(problem != object_problem::other_class || refused_call<O>,
                  "hookscope: HOOKSCOPE_OBSERVABLE_METHOD: the object given is not of the annotated method's class, "
                  "nor of a class derived from it");
    static_assert(problem != object_problem::const_object || refused_call<O>,
                  "hookscope: HOOKSCOPE_OBSERVABLE_METHOD: the annotated method is not const and the object given is "
                  "const, as a call of the method itself would refuse: call it on a non-const object");
    static_assert(problem != object_problem::lvalue_object || refused_call<O>,
                  "hookscope: HOOKSCOPE_OBSERVABLE_METHOD: the annotated method is '&&'-qualified and the object "
                  "given is an lvalue, as a call of the method itself would refuse: call it on an rvalue "
                  "(std::move(object).name(...))");
    static_assert(problem != object_problem::rvalue_object || refused_call<O>,
                  "hookscope: HOOKSCOPE_OBSERVABLE_METHOD: the annotated method is '&'-qualified and the object given "
                  "is an rvalue, as a call of the method itself would refuse: call it on an lvalue");
    static_assert(problem != object_problem::rvalue_object_unqualified || refused_call<O>,
                  "hookscope: observable<&C::method, ...>: the observable of a non-const method without "
                  "ref-qualifier takes its object as an lvalue (C&): pass an lvalue (HOOKSCOPE_OBSERVABLE_METHOD's "
                  "name(...) does so when called on an rvalue)");
    static_assert(problem != object_problem::other || refused_call<O>,
                  "hookscope: HOOKSCOPE_OBSERVABLE_METHOD: the object given cannot be the annotated method's object "
                  "(an inaccessible or ambiguous base class?)");
    return {};
  }
};

}  // namespace detail
HOOKSCOPE_DETAIL_END_NAMESPACE
