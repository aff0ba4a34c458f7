// hookscope/detail/function_traits.hpp — what the annotations need of a function's type: the object it is called
// on, its result, noexcept-ness and parameters (function_type_of), the type back from them, its arity, and the call
// signature of any callable (make_observable).
#pragma once

#include "hookscope/config.hpp"

#include <cstddef>
#include <type_traits>

HOOKSCOPE_DETAIL_BEGIN_NAMESPACE
namespace detail {

/// What an observable needs of a function type: the object it is called on (void for free functions), the
/// result, noexcept-ness and the parameters.
template <class Self, class R, bool NE, class... A>
struct function_type {};

template <class F>
struct function_type_traits {
  static_assert(sizeof(F) == 0,
                "hookscope: observable<&fn, ...>: fn must be a function or a member function; for an overloaded "
                "one, pick the overload (HOOKSCOPE_OBSERVABLE_OVERLOAD or static_cast<Type*>(&fn))");
  using type = void;
};
template <class R, class... A, bool NE>
struct function_type_traits<R (*)(A...) noexcept(NE)> {
  using type = function_type<void, R, NE, A...>;
};
template <class C, class R, class... A, bool NE>
struct function_type_traits<R (C::*)(A...) noexcept(NE)> {
  using type = function_type<C, R, NE, A...>;
};
template <class C, class R, class... A, bool NE>
struct function_type_traits<R (C::*)(A...) const noexcept(NE)> {
  using type = function_type<const C, R, NE, A...>;
};

template <class F>
struct c_variadic_function {
  static_assert(sizeof(F) == 0,
                "hookscope: HOOKSCOPE_OBSERVABLE: a C variadic function (with '...', like printf) cannot be observed: "
                "its variable arguments cannot be forwarded; annotate a function with a fixed parameter list "
                "instead (a wrapper, one taking a va_list, or one instantiation of a variadic template)");
  using type = void;
};
template <class R, class... A, bool NE>
struct function_type_traits<R (*)(A..., ...) noexcept(NE)> : c_variadic_function<R (*)(A..., ...)> {};
template <class C, class R, class... A, bool NE>
struct function_type_traits<R (C::*)(A..., ...) noexcept(NE)> : c_variadic_function<R (C::*)(A..., ...)> {};
template <class C, class R, class... A, bool NE>
struct function_type_traits<R (C::*)(A..., ...) const noexcept(NE)> : c_variadic_function<R (C::*)(A..., ...) const> {};

template <class F>
using function_type_of = typename function_type_traits<F>::type;

/// The function pointer type of a function_type: function_type_traits the other way round.
template <class Self, class R, bool NE, class... A>
struct function_pointer_type {
  using type = R (Self::*)(A...) noexcept(NE);
};
template <class R, bool NE, class... A>
struct function_pointer_type<void, R, NE, A...> {
  using type = R (*)(A...) noexcept(NE);
};
template <class C, class R, bool NE, class... A>
struct function_pointer_type<const C, R, NE, A...> {
  using type = R (C::*)(A...) const noexcept(NE);
};

template <class T>
struct function_type_arity {
  static constexpr std::size_t value = 0;  // not a function: function_type_traits says so
};
template <class Self, class R, bool NE, class... A>
struct function_type_arity<function_type<Self, R, NE, A...>> {
  static constexpr std::size_t value = sizeof...(A);
};
/// The number of parameters of the function type F.
template <class F>
inline constexpr std::size_t arity_of = function_type_arity<function_type_of<F>>::value;

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

/// The call signature R(A...) of a function pointer, a member function pointer or a class with one call operator
/// (make_observable).
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

}  // namespace detail
HOOKSCOPE_DETAIL_END_NAMESPACE
