// hookscope/detail/capture_fields.hpp — the fields of an aggregate, for its capture: how many (by aggregate
// initialisation, as Boost.PFR counts them, but only up to max_aggregate_fields + 1) and all of them at once
// (by a structured binding). Cheaper to compile than Boost.PFR's count, which searches up to 8 * sizeof(T).
#pragma once

#include "hookscope/config.hpp"

#include <cstddef>
#include <type_traits>
#include <utility>

HOOKSCOPE_DETAIL_BEGIN_NAMESPACE
namespace detail {

/// The most fields an aggregate may have (positional names go up to "31").
inline constexpr std::size_t max_aggregate_fields = 32;

template <class... F>
struct type_list {};

// Converts to any field type, in unevaluated aggregate initialisations only (as Boost.PFR's ubiq_*_constructor):
// through an lvalue reference for copyable aggregates (reference members too), through a prvalue otherwise. Never
// to a base of T: an aggregate with a base class counts no fields, and is not captured (a structured binding
// would not see the base's fields). Unless that base is an aggregate itself, whose fields the count then sees
// through brace elision: the structured binding fails to compile (as Boost.PFR's static_assert did).
template <class T>
struct any_lref {
  std::size_t index;
  template <class U>
    requires(!std::is_base_of_v<std::remove_cv_t<U>, T>)
  operator U&() const&& noexcept;
  template <class U>
    requires(!std::is_base_of_v<std::remove_cv_t<U>, T>)
  operator U&() const& noexcept;
};
template <class T>
struct any_rref {
  std::size_t index;
  template <class U>
    requires(!std::is_base_of_v<std::remove_cv_t<U>, T>)
  operator U() const&& noexcept;
};

template <class T, std::size_t... I>
consteval bool initialisable_from(std::index_sequence<I...>) {
  using any = std::conditional_t<std::is_copy_constructible_v<T>, any_lref<T>, any_rref<T>>;
  return requires { T{any{I}...}; };
}

// N fields: T{x1..xN} compiles and T{x1..xN+1} does not (fewer initialisers than fields compile too, unless a
// reference member is left without one; hence not just the first N that fails). max_aggregate_fields + 1: more,
// or no N fits (T{} and T{x...} all fail: a base class without a default constructor).
template <class T, std::size_t N = 0>
consteval std::size_t count_fields() {
  if constexpr (N > max_aggregate_fields) {
    return N;
  } else if constexpr (initialisable_from<T>(std::make_index_sequence<N>{}) &&
                       !initialisable_from<T>(std::make_index_sequence<N + 1>{})) {
    return N;
  } else {
    return count_fields<T, N + 1>();
  }
}

// The field types of a T of N fields (cv-unqualified, references dropped) as a type_list, and all its fields at
// once as the arguments of Rule::capture_fields(options, fields...).
template <std::size_t N>
struct fields_access;

template <class... F>
type_list<F...> type_list_of(const F&...);

template <>
struct fields_access<0> {
  template <class T>
  static type_list<> types(const T&);
  template <class Rule, class T, class Options>
  static auto apply(const T&, Options options) {
    return Rule::capture_fields(options);
  }
};

#define HOOKSCOPE_DETAIL_FIELDS(N, ...)                  \
  template <>                                            \
  struct fields_access<N> {                              \
    template <class T>                                   \
    static auto types(const T& t) {                      \
      const auto& [__VA_ARGS__] = t;                     \
      return decltype(type_list_of(__VA_ARGS__)){};      \
    }                                                    \
    template <class Rule, class T, class Options>        \
    static auto apply(const T& t, Options options) {     \
      const auto& [__VA_ARGS__] = t;                     \
      return Rule::capture_fields(options, __VA_ARGS__); \
    }                                                    \
  };
HOOKSCOPE_DETAIL_FIELDS(1, f0)
HOOKSCOPE_DETAIL_FIELDS(2, f0, f1)
HOOKSCOPE_DETAIL_FIELDS(3, f0, f1, f2)
HOOKSCOPE_DETAIL_FIELDS(4, f0, f1, f2, f3)
HOOKSCOPE_DETAIL_FIELDS(5, f0, f1, f2, f3, f4)
HOOKSCOPE_DETAIL_FIELDS(6, f0, f1, f2, f3, f4, f5)
HOOKSCOPE_DETAIL_FIELDS(7, f0, f1, f2, f3, f4, f5, f6)
HOOKSCOPE_DETAIL_FIELDS(8, f0, f1, f2, f3, f4, f5, f6, f7)
HOOKSCOPE_DETAIL_FIELDS(9, f0, f1, f2, f3, f4, f5, f6, f7, f8)
HOOKSCOPE_DETAIL_FIELDS(10, f0, f1, f2, f3, f4, f5, f6, f7, f8, f9)
HOOKSCOPE_DETAIL_FIELDS(11, f0, f1, f2, f3, f4, f5, f6, f7, f8, f9, f10)
HOOKSCOPE_DETAIL_FIELDS(12, f0, f1, f2, f3, f4, f5, f6, f7, f8, f9, f10, f11)
HOOKSCOPE_DETAIL_FIELDS(13, f0, f1, f2, f3, f4, f5, f6, f7, f8, f9, f10, f11, f12)
HOOKSCOPE_DETAIL_FIELDS(14, f0, f1, f2, f3, f4, f5, f6, f7, f8, f9, f10, f11, f12, f13)
HOOKSCOPE_DETAIL_FIELDS(15, f0, f1, f2, f3, f4, f5, f6, f7, f8, f9, f10, f11, f12, f13, f14)
HOOKSCOPE_DETAIL_FIELDS(16, f0, f1, f2, f3, f4, f5, f6, f7, f8, f9, f10, f11, f12, f13, f14, f15)
HOOKSCOPE_DETAIL_FIELDS(17, f0, f1, f2, f3, f4, f5, f6, f7, f8, f9, f10, f11, f12, f13, f14, f15, f16)
HOOKSCOPE_DETAIL_FIELDS(18, f0, f1, f2, f3, f4, f5, f6, f7, f8, f9, f10, f11, f12, f13, f14, f15, f16, f17)
HOOKSCOPE_DETAIL_FIELDS(19, f0, f1, f2, f3, f4, f5, f6, f7, f8, f9, f10, f11, f12, f13, f14, f15, f16, f17, f18)
HOOKSCOPE_DETAIL_FIELDS(20, f0, f1, f2, f3, f4, f5, f6, f7, f8, f9, f10, f11, f12, f13, f14, f15, f16, f17, f18, f19)
HOOKSCOPE_DETAIL_FIELDS(21, f0, f1, f2, f3, f4, f5, f6, f7, f8, f9, f10, f11, f12, f13, f14, f15, f16, f17, f18, f19,
                        f20)
HOOKSCOPE_DETAIL_FIELDS(22, f0, f1, f2, f3, f4, f5, f6, f7, f8, f9, f10, f11, f12, f13, f14, f15, f16, f17, f18, f19,
                        f20, f21)
HOOKSCOPE_DETAIL_FIELDS(23, f0, f1, f2, f3, f4, f5, f6, f7, f8, f9, f10, f11, f12, f13, f14, f15, f16, f17, f18, f19,
                        f20, f21, f22)
HOOKSCOPE_DETAIL_FIELDS(24, f0, f1, f2, f3, f4, f5, f6, f7, f8, f9, f10, f11, f12, f13, f14, f15, f16, f17, f18, f19,
                        f20, f21, f22, f23)
HOOKSCOPE_DETAIL_FIELDS(25, f0, f1, f2, f3, f4, f5, f6, f7, f8, f9, f10, f11, f12, f13, f14, f15, f16, f17, f18, f19,
                        f20, f21, f22, f23, f24)
HOOKSCOPE_DETAIL_FIELDS(26, f0, f1, f2, f3, f4, f5, f6, f7, f8, f9, f10, f11, f12, f13, f14, f15, f16, f17, f18, f19,
                        f20, f21, f22, f23, f24, f25)
HOOKSCOPE_DETAIL_FIELDS(27, f0, f1, f2, f3, f4, f5, f6, f7, f8, f9, f10, f11, f12, f13, f14, f15, f16, f17, f18, f19,
                        f20, f21, f22, f23, f24, f25, f26)
HOOKSCOPE_DETAIL_FIELDS(28, f0, f1, f2, f3, f4, f5, f6, f7, f8, f9, f10, f11, f12, f13, f14, f15, f16, f17, f18, f19,
                        f20, f21, f22, f23, f24, f25, f26, f27)
HOOKSCOPE_DETAIL_FIELDS(29, f0, f1, f2, f3, f4, f5, f6, f7, f8, f9, f10, f11, f12, f13, f14, f15, f16, f17, f18, f19,
                        f20, f21, f22, f23, f24, f25, f26, f27, f28)
HOOKSCOPE_DETAIL_FIELDS(30, f0, f1, f2, f3, f4, f5, f6, f7, f8, f9, f10, f11, f12, f13, f14, f15, f16, f17, f18, f19,
                        f20, f21, f22, f23, f24, f25, f26, f27, f28, f29)
HOOKSCOPE_DETAIL_FIELDS(31, f0, f1, f2, f3, f4, f5, f6, f7, f8, f9, f10, f11, f12, f13, f14, f15, f16, f17, f18, f19,
                        f20, f21, f22, f23, f24, f25, f26, f27, f28, f29, f30)
HOOKSCOPE_DETAIL_FIELDS(32, f0, f1, f2, f3, f4, f5, f6, f7, f8, f9, f10, f11, f12, f13, f14, f15, f16, f17, f18, f19,
                        f20, f21, f22, f23, f24, f25, f26, f27, f28, f29, f30, f31)
#undef HOOKSCOPE_DETAIL_FIELDS

}  // namespace detail
HOOKSCOPE_DETAIL_END_NAMESPACE
