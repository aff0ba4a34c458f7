// hookscope/detail/function_traits.hpp — what the annotations need of a function's type: the object it is called
// on and how (its cv- and ref-qualifiers), its result, noexcept-ness and parameters (function_type_of), the type back
// from them, its arity, and the call signature of any callable (make_observable).
#pragma once

#include "hookscope/detail/config.hpp"

#include <cstddef>
#include <type_traits>

HOOKSCOPE_DETAIL_BEGIN_NAMESPACE
namespace detail {

/// What an observable needs of a function type: the object it is called on (void for free functions; for a member
/// function of class C, `Self` is C with the method's qualifiers: `C`, `const C`, `C&`, `const C&`, `C&&` or
/// `const C&&`), the result, noexcept-ness and the parameters.
template <class Self, class R, bool NE, class... A>
struct function_type {
  using self_type = Self;
};

template <class F>
struct function_type_traits {
  static_assert(sizeof(F) == 0,
                "hookscope: observable<&fn, ...>: fn is neither a function nor a member function (a variable, a data "
                "member, a function object?): annotate a function, or wrap a callable with make_observable");
  using type = void;
};
template <class R, class... A, bool NE>
struct function_type_traits<R (*)(A...) noexcept(NE)> {
  using type = function_type<void, R, NE, A...>;
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

template <class F>
struct volatile_method {
  static_assert(sizeof(F) == 0,
                "hookscope: HOOKSCOPE_OBSERVABLE_METHOD: a volatile-qualified member function cannot be observed "
                "(annotations are called on objects that are not volatile); annotate a method without 'volatile' "
                "that calls it");
  using type = void;
};

/// The function pointer type of a function_type: function_type_traits the other way round.
template <class Self, class R, bool NE, class... A>
struct function_pointer_type {
  using type = R (Self::*)(A...) noexcept(NE);
};
template <class R, bool NE, class... A>
struct function_pointer_type<void, R, NE, A...> {
  using type = R (*)(A...) noexcept(NE);
};

// The qualifiers of a member function that annotations observe besides none, with the `Self` of function_type each
// stands for (C is the class): X(qualifiers, Self).
#define HOOKSCOPE_DETAIL_METHOD_QUALIFIERS(X) \
  X(const, const C) X(&, C&) X(const&, const C&) X(&&, C&&) X(const&&, const C&&)
// The qualifiers of a member function that annotations refuse: X(qualifiers).
#define HOOKSCOPE_DETAIL_VOLATILE_QUALIFIERS(X) \
  X(volatile) X(const volatile) X(volatile&) X(const volatile&) X(volatile&&) X(const volatile&&)

#define HOOKSCOPE_DETAIL_METHOD_TYPE(qualifiers, self)                     \
  template <class C, class R, class... A, bool NE>                         \
  struct function_type_traits<R (C::*)(A...) qualifiers noexcept(NE)> {    \
    using type = function_type<self, R, NE, A...>;                         \
  };                                                                       \
  template <class C, class R, class... A, bool NE>                         \
  struct function_type_traits<R (C::*)(A..., ...) qualifiers noexcept(NE)> \
      : c_variadic_function<R (C::*)(A..., ...) qualifiers> {};            \
  template <class C, class R, bool NE, class... A>                         \
  struct function_pointer_type<self, R, NE, A...> {                        \
    using type = R (C::*)(A...) qualifiers noexcept(NE);                   \
  };
#define HOOKSCOPE_DETAIL_VOLATILE_METHOD_TYPE(qualifiers)                                                   \
  template <class C, class R, class... A, bool NE>                                                          \
  struct function_type_traits<R (C::*)(A...) qualifiers noexcept(NE)> : volatile_method<R (C::*)(A...)> {}; \
  template <class C, class R, class... A, bool NE>                                                          \
  struct function_type_traits<R (C::*)(A..., ...) qualifiers noexcept(NE)> : volatile_method<R (C::*)(A...)> {};

template <class C, class R, class... A, bool NE>
struct function_type_traits<R (C::*)(A...) noexcept(NE)> {
  using type = function_type<C, R, NE, A...>;
};
template <class C, class R, class... A, bool NE>
struct function_type_traits<R (C::*)(A..., ...) noexcept(NE)> : c_variadic_function<R (C::*)(A..., ...)> {};
HOOKSCOPE_DETAIL_METHOD_QUALIFIERS(HOOKSCOPE_DETAIL_METHOD_TYPE)
HOOKSCOPE_DETAIL_VOLATILE_QUALIFIERS(HOOKSCOPE_DETAIL_VOLATILE_METHOD_TYPE)

#undef HOOKSCOPE_DETAIL_METHOD_TYPE
#undef HOOKSCOPE_DETAIL_VOLATILE_METHOD_TYPE
#undef HOOKSCOPE_DETAIL_METHOD_QUALIFIERS
#undef HOOKSCOPE_DETAIL_VOLATILE_QUALIFIERS

template <class F>
using function_type_of = typename function_type_traits<F>::type;

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
/// Selects the overload of a member function of type F, qualifiers included: `int(int) const&`
/// (HOOKSCOPE_OBSERVABLE_METHOD_OVERLOAD).
template <class F, class C>
constexpr F C::*pick_method_overload(F C::*f) noexcept {
  return f;
}

/// The object parameter of a member observable, as the method's qualifiers let it be called: `C&` for a method
/// without ref-qualifier (`const C&` if const), as declared for a ref-qualified one (`C&&` takes rvalues only); a
/// placeholder nobody can pass for free functions.
struct no_object {
  no_object() = delete;
};
template <class Self>
using object_ref =
    std::conditional_t<std::is_reference_v<Self>, Self, std::conditional_t<std::is_void_v<Self>, no_object, Self>&>;

/// The address of the object of a member function, as the observed call carries it: never through the class's own
/// `operator&` (a smart pointer's returns another object's address; a deleted one must still compile).
template <class T>
[[gnu::always_inline]] inline void* object_address(T& object) noexcept {
  return const_cast<void*>(static_cast<const void*>(__builtin_addressof(object)));
}

/// The object at `object` as the member function of function_type `Self` is called on it: an rvalue for a
/// `&&`-qualified method.
template <class Self>
[[gnu::always_inline]] inline object_ref<Self> object_at(void* object) noexcept {
  return static_cast<object_ref<Self>>(*static_cast<std::remove_reference_t<Self>*>(object));
}

/// `self` (`*this` in HOOKSCOPE_OBSERVABLE_METHOD's `name`, called on an rvalue) as the annotated method of type F
/// takes its object: moved for a ref-qualified method; for one without ref-qualifier, which is the same function on
/// an lvalue or an rvalue, as the lvalue its observable takes.
template <class F, class T>
[[gnu::always_inline]] constexpr auto&& rvalue_object(T& self) noexcept {
  if constexpr (std::is_reference_v<typename function_type_of<std::remove_cv_t<F>>::self_type>) {
    return static_cast<T&&>(self);
  } else {
    return self;
  }
}

/// The call signature R(A...) of a function pointer, a member function pointer or a class with one call operator
/// (make_observable), whose call operator make_observable calls on the stored object, an lvalue.
template <class F>
struct callable_signature_of : callable_signature_of<decltype(&F::operator())> {};
template <class R, class... A, bool NE>
struct callable_signature_of<R (*)(A...) noexcept(NE)> {
  using type = R(A...);
};
template <class C, class F>
struct callable_signature_of<F C::*> {
  static_assert(sizeof(F C::*) == 0,
                "hookscope: make_observable: the callable's operator() cannot be called on an lvalue (it is "
                "'&&'-qualified or volatile), and make_observable calls it on the object it stores, on every call: "
                "give it an operator() without ref-qualifier, or '&' or 'const&'");
  using type = void;
};
#define HOOKSCOPE_DETAIL_CALL_OPERATOR(qualifiers)                       \
  template <class C, class R, class... A, bool NE>                       \
  struct callable_signature_of<R (C::*)(A...) qualifiers noexcept(NE)> { \
    using type = R(A...);                                                \
  };
HOOKSCOPE_DETAIL_CALL_OPERATOR()
HOOKSCOPE_DETAIL_CALL_OPERATOR(const)
HOOKSCOPE_DETAIL_CALL_OPERATOR(&)
HOOKSCOPE_DETAIL_CALL_OPERATOR(const&)
#undef HOOKSCOPE_DETAIL_CALL_OPERATOR

}  // namespace detail
HOOKSCOPE_DETAIL_END_NAMESPACE
