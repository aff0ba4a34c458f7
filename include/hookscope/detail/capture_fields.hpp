// hookscope/detail/capture_fields.hpp — the fields of an aggregate, for its capture: whether it has a base class,
// how many fields it has (by aggregate initialisation, without brace elision, up to max_aggregate_fields + 1) and
// all of them at once (by a structured binding). Everything that could fail to compile is tested before anything
// is bound. Cheaper to compile than Boost.PFR's count, which searches up to 8 * sizeof(T).
#pragma once

#include "hookscope/detail/config.hpp"

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
// to a base of T (bases are detected apart, by has_base, before anything is counted or bound).
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
template <class T>
using any_field = std::conditional_t<std::is_copy_constructible_v<T>, any_lref<T>, any_rref<T>>;

// Converts only to a proper base of T. Aggregate initialisation gives the first initialiser to the first base when
// there is one (and never elides its braces when it converts), so T{any_base<T>{}} compiles exactly when T has a
// base class (or a first member constructible from anything: such a class is then opaque, never mis-bound).
// Neither copyable nor movable, so that "constructible from anything copyable" members (std::any) do not take it.
template <class T>
struct any_base {
  any_base() = default;
  any_base(const any_base&) = delete;
  template <class U>
    requires(std::is_base_of_v<std::remove_cv_t<U>, T> && !std::is_same_v<std::remove_cv_t<U>, T>)
  operator U&() const noexcept;
};

/// Whether the aggregate T has a base class: its fields are then not all its own, and a structured binding of T
/// would not compile (Boost.PFR 1.81 stops with a static_assert): T is opaque unless flatten_traits names them.
template <class T>
inline constexpr bool has_base = requires {
  T{any_base<T>{}};
};

// T{{}, ..., {}} with N empty braces: an empty braced list initialises one member each, an array member too (brace
// elision never applies to a braced list). It compiles for every N up to the number of fields when every member is
// copy-list-initialisable from {} (C structs always are), and for none when one is not (a non-const reference,
// a class without a default constructor: a member given no initialiser is initialised from {} as well).
template <std::size_t N>
struct braced;
#define HOOKSCOPE_DETAIL_BRACED(N, ...)                 \
  template <>                                           \
  struct braced<N> {                                    \
    template <class T>                                  \
    static constexpr bool initialises = requires {      \
      T{__VA_ARGS__};                                   \
    };                                                  \
    template <class T, class Next>                      \
    static constexpr bool initialises_then = requires { \
      T{__VA_ARGS__ __VA_OPT__(, ) Next{}};             \
    };                                                  \
  };
HOOKSCOPE_DETAIL_BRACED(0)
HOOKSCOPE_DETAIL_BRACED(1, {})
HOOKSCOPE_DETAIL_BRACED(2, {}, {})
HOOKSCOPE_DETAIL_BRACED(3, {}, {}, {})
HOOKSCOPE_DETAIL_BRACED(4, {}, {}, {}, {})
HOOKSCOPE_DETAIL_BRACED(5, {}, {}, {}, {}, {})
HOOKSCOPE_DETAIL_BRACED(6, {}, {}, {}, {}, {}, {})
HOOKSCOPE_DETAIL_BRACED(7, {}, {}, {}, {}, {}, {}, {})
HOOKSCOPE_DETAIL_BRACED(8, {}, {}, {}, {}, {}, {}, {}, {})
HOOKSCOPE_DETAIL_BRACED(9, {}, {}, {}, {}, {}, {}, {}, {}, {})
HOOKSCOPE_DETAIL_BRACED(10, {}, {}, {}, {}, {}, {}, {}, {}, {}, {})
HOOKSCOPE_DETAIL_BRACED(11, {}, {}, {}, {}, {}, {}, {}, {}, {}, {}, {})
HOOKSCOPE_DETAIL_BRACED(12, {}, {}, {}, {}, {}, {}, {}, {}, {}, {}, {}, {})
HOOKSCOPE_DETAIL_BRACED(13, {}, {}, {}, {}, {}, {}, {}, {}, {}, {}, {}, {}, {})
HOOKSCOPE_DETAIL_BRACED(14, {}, {}, {}, {}, {}, {}, {}, {}, {}, {}, {}, {}, {}, {})
HOOKSCOPE_DETAIL_BRACED(15, {}, {}, {}, {}, {}, {}, {}, {}, {}, {}, {}, {}, {}, {}, {})
HOOKSCOPE_DETAIL_BRACED(16, {}, {}, {}, {}, {}, {}, {}, {}, {}, {}, {}, {}, {}, {}, {}, {})
HOOKSCOPE_DETAIL_BRACED(17, {}, {}, {}, {}, {}, {}, {}, {}, {}, {}, {}, {}, {}, {}, {}, {}, {})
HOOKSCOPE_DETAIL_BRACED(18, {}, {}, {}, {}, {}, {}, {}, {}, {}, {}, {}, {}, {}, {}, {}, {}, {}, {})
HOOKSCOPE_DETAIL_BRACED(19, {}, {}, {}, {}, {}, {}, {}, {}, {}, {}, {}, {}, {}, {}, {}, {}, {}, {}, {})
HOOKSCOPE_DETAIL_BRACED(20, {}, {}, {}, {}, {}, {}, {}, {}, {}, {}, {}, {}, {}, {}, {}, {}, {}, {}, {}, {})
HOOKSCOPE_DETAIL_BRACED(21, {}, {}, {}, {}, {}, {}, {}, {}, {}, {}, {}, {}, {}, {}, {}, {}, {}, {}, {}, {}, {})
HOOKSCOPE_DETAIL_BRACED(22, {}, {}, {}, {}, {}, {}, {}, {}, {}, {}, {}, {}, {}, {}, {}, {}, {}, {}, {}, {}, {}, {})
HOOKSCOPE_DETAIL_BRACED(23, {}, {}, {}, {}, {}, {}, {}, {}, {}, {}, {}, {}, {}, {}, {}, {}, {}, {}, {}, {}, {}, {}, {})
HOOKSCOPE_DETAIL_BRACED(24, {}, {}, {}, {}, {}, {}, {}, {}, {}, {}, {}, {}, {}, {}, {}, {}, {}, {}, {}, {}, {}, {}, {},
                        {})
HOOKSCOPE_DETAIL_BRACED(25, {}, {}, {}, {}, {}, {}, {}, {}, {}, {}, {}, {}, {}, {}, {}, {}, {}, {}, {}, {}, {}, {}, {},
                        {}, {})
HOOKSCOPE_DETAIL_BRACED(26, {}, {}, {}, {}, {}, {}, {}, {}, {}, {}, {}, {}, {}, {}, {}, {}, {}, {}, {}, {}, {}, {}, {},
                        {}, {}, {})
HOOKSCOPE_DETAIL_BRACED(27, {}, {}, {}, {}, {}, {}, {}, {}, {}, {}, {}, {}, {}, {}, {}, {}, {}, {}, {}, {}, {}, {}, {},
                        {}, {}, {}, {})
HOOKSCOPE_DETAIL_BRACED(28, {}, {}, {}, {}, {}, {}, {}, {}, {}, {}, {}, {}, {}, {}, {}, {}, {}, {}, {}, {}, {}, {}, {},
                        {}, {}, {}, {}, {})
HOOKSCOPE_DETAIL_BRACED(29, {}, {}, {}, {}, {}, {}, {}, {}, {}, {}, {}, {}, {}, {}, {}, {}, {}, {}, {}, {}, {}, {}, {},
                        {}, {}, {}, {}, {}, {})
HOOKSCOPE_DETAIL_BRACED(30, {}, {}, {}, {}, {}, {}, {}, {}, {}, {}, {}, {}, {}, {}, {}, {}, {}, {}, {}, {}, {}, {}, {},
                        {}, {}, {}, {}, {}, {}, {})
HOOKSCOPE_DETAIL_BRACED(31, {}, {}, {}, {}, {}, {}, {}, {}, {}, {}, {}, {}, {}, {}, {}, {}, {}, {}, {}, {}, {}, {}, {},
                        {}, {}, {}, {}, {}, {}, {}, {})
HOOKSCOPE_DETAIL_BRACED(32, {}, {}, {}, {}, {}, {}, {}, {}, {}, {}, {}, {}, {}, {}, {}, {}, {}, {}, {}, {}, {}, {}, {},
                        {}, {}, {}, {}, {}, {}, {}, {}, {})
HOOKSCOPE_DETAIL_BRACED(33, {}, {}, {}, {}, {}, {}, {}, {}, {}, {}, {}, {}, {}, {}, {}, {}, {}, {}, {}, {}, {}, {}, {},
                        {}, {}, {}, {}, {}, {}, {}, {}, {}, {})
HOOKSCOPE_DETAIL_BRACED(34, {}, {}, {}, {}, {}, {}, {}, {}, {}, {}, {}, {}, {}, {}, {}, {}, {}, {}, {}, {}, {}, {}, {},
                        {}, {}, {}, {}, {}, {}, {}, {}, {}, {}, {})
#undef HOOKSCOPE_DETAIL_BRACED

// Converts only to a union: T{{}, ..., {}, only_union<T>{}} with k empty braces compiles when T's member k is a union
// (or begins with one, through brace elision). Neither copyable nor movable, as any_base. A prvalue: GCC finds an
// anonymous union's copy constructor inaccessible from outside its class.
template <class T>
struct only_union {
  only_union() = default;
  only_union(const only_union&) = delete;
  template <class U>
    requires std::is_union_v<U>
  operator U() const noexcept;
};

template <class T, std::size_t... K>
consteval bool has_union_member(std::index_sequence<K...>) {
  return (braced<K>::template initialises_then<T, only_union<T>> || ...);
}

template <class T, std::size_t... I>
consteval bool initialisable_from(std::index_sequence<I...>) {
  return requires { T{any_field<T>{I}...}; };
}

/// What count_fields gives when it cannot tell (or more than max_aggregate_fields): T is then opaque.
inline constexpr std::size_t unknown_field_count = max_aggregate_fields + 1;

// The first N of 0..max_aggregate_fields for which T{x1..xN} compiles and T{x1..xN+1} does not (fewer initialisers
// than fields compile too, unless a member left without one cannot be initialised from {}); unknown when none.
template <class T, std::size_t N = 0>
consteval std::size_t count_bare_initialisers() {
  if constexpr (N > max_aggregate_fields) {
    return unknown_field_count;
  } else if constexpr (initialisable_from<T>(std::make_index_sequence<N>{}) &&
                       !initialisable_from<T>(std::make_index_sequence<N + 1>{})) {
    return N;
  } else {
    return count_bare_initialisers<T, N + 1>();
  }
}

template <class T, std::size_t N = 0>
consteval std::size_t count_by_empty_braces() {
  if constexpr (N > max_aggregate_fields) {
    return unknown_field_count;
  } else if constexpr (!braced<N + 1>::template initialises<T>) {
    return N;
  } else {
    return count_by_empty_braces<T, N + 1>();
  }
}

/// The number of fields of the aggregate T (no base class: has_base first), counted without brace elision, so that
/// an array member counts once (Boost.PFR and a bare count see `char name[16]` as 16 fields), when every member is
/// initialisable from {}. Otherwise (a non-const reference member, a member without a default constructor) the
/// count of bare initialisers, which counts each element of an array member: a T with both such a member and an
/// array member fails to compile at its structured binding (docs/capture.md: give it flatten_traits, or
/// capture_as_opaque). unknown_field_count when more than max_aggregate_fields, or when no count fits.
template <class T>
consteval std::size_t count_fields() {
  if constexpr (braced<0>::template initialises<T>) {
    return count_by_empty_braces<T>();
  } else {
    return count_bare_initialisers<T>();
  }
}

/// Whether one of the N fields of T is a union (or begins with one): a structured binding cannot decompose a class
/// with an anonymous union member, and tells none apart from a named one, so such an aggregate is opaque. Asked only
/// when every member is initialisable from {} (C structs): otherwise no member is asked about.
template <class T, std::size_t N>
consteval bool has_union_field() {
  if constexpr (braced<0>::template initialises<T> && N <= max_aggregate_fields) {
    return has_union_member<T>(std::make_index_sequence<N>{});
  } else {
    return false;
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
