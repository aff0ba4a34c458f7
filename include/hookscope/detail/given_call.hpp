// hookscope/detail/given_call.hpp — the call operators of an annotation given fewer arguments than its function has
// parameters: the arguments given are converted to their parameter types, the callbacks see them, and the function is
// called by name, so that its own defaults supply the rest (the site's `by_name`, which the macros define).
#pragma once

#include "hookscope/call_context.hpp"
#include "hookscope/config.hpp"
#include "hookscope/detail/fixed_string.hpp"
#include "hookscope/detail/observed_call.hpp"
#include "hookscope/detail/probed_call.hpp"

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

template <class Site, class R, class... A, fixed_string Params, class Self, bool NE, std::size_t... I>
class given_call<Site, named_call_context<R(A...), Params>, Self, NE, std::index_sequence<I...>> {
  static constexpr bool nothrow = NE && nothrow_by_name<Site, Self&, nth_param<I, A...>...>();

 public:
  [[gnu::always_inline]] constexpr R operator()(Self& object, nth_param<I, A...>... args) const noexcept(nothrow) {
    if constexpr (check_by_name<Site, Self&, nth_param<I, A...>...>()) {
#if HOOKSCOPE_ENABLED
      if (hooks_or_probes<Site>()) [[unlikely]] {
        return slow_given_call<Site, named_call_context<R(A...), Params>, nothrow, true>(
            const_cast<void*>(static_cast<const void*>(&object)),
            [&object](nth_param<I, A...>&... a) -> R {
              return Site::by_name(object, static_cast<nth_param<I, A...>&&>(a)...);
            },
            args...);
      }
#endif
      return Site::by_name(object, static_cast<nth_param<I, A...>&&>(args)...);
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
inline constexpr bool too_many_arguments = false;

/// A call given more arguments than the function has parameters: one message rather than every candidate.
template <std::size_t Arity>
struct too_many_calls {
  template <class... G>
    requires(sizeof...(G) > Arity)
  void operator()(G&&...) const {
    static_assert(too_many_arguments<G...>,
                  "hookscope: HOOKSCOPE_OBSERVABLE: this call gives more arguments than the annotated function has "
                  "parameters (the annotation's function type is in the observable's template arguments)");
  }
};

}  // namespace detail
HOOKSCOPE_DETAIL_END_NAMESPACE
