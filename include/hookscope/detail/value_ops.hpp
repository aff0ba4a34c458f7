// The per-type tables behind erased_call: how to format and capture a value known only by its address.
//
// One table per parameter or result type (not per observable): 200 observables taking an int share the
// formatting and capture of int, so an annotation adds no code of its own for them.
#pragma once

#include "hookscope/capture.hpp"
#include "hookscope/config.hpp"
#include "hookscope/detail/format.hpp"
#include "hookscope/registry.hpp"

#include <array>
#include <cstddef>
#include <string>
#include <type_traits>

HOOKSCOPE_DETAIL_BEGIN_NAMESPACE
namespace detail {

template <class T>
std::string format_one(const void* object) {
  return format_value(*static_cast<const T*>(object));
}

template <class T>
value capture_one(const void* object, const void* options) {
  const T& v = *static_cast<const T*>(object);
  return options == nullptr ? capture_value(v) : capture_value(v, *static_cast<const capture_options*>(options));
}

template <class T>
constexpr value_ops make_value_ops() noexcept {
  if constexpr (capturable<T>) {
    return {&format_one<T>, &capture_one<T>};
  } else {
    return {&format_one<T>, nullptr};  // uncapturable types still format ("<type>")
  }
}

/// The table of T (cv and references removed by the caller).
template <class T>
inline constexpr value_ops value_ops_for = make_value_ops<T>();

template <class R, class... A>
struct call_ops_tables {
  static constexpr std::array<const value_ops*, sizeof...(A)> args{&value_ops_for<std::remove_cvref_t<A>>...};
  static constexpr const value_ops* result() noexcept {
    if constexpr (std::is_void_v<R>) {
      return nullptr;
    } else {
      return &value_ops_for<std::remove_cvref_t<R>>;
    }
  }
  static constexpr call_ops ops{args.data(), result(), (capturable<std::remove_cvref_t<A>> && ...)};
};

/// The tables of a signature, shared by every observable with that parameter list and result.
template <class R, class... A>
inline constexpr const call_ops& call_ops_for = call_ops_tables<R, A...>::ops;

}  // namespace detail
HOOKSCOPE_DETAIL_END_NAMESPACE
