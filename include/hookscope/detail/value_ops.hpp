// The per-type tables behind erased_call: how to format and capture a value known only by its address.
//
// One table per parameter or result type (not per observable): 200 observables taking an int share the
// formatting and capture of int, so an annotation adds no code of its own for them.
#pragma once

#include "hookscope/capture.hpp"
#include "hookscope/config.hpp"
#include "hookscope/detail/format.hpp"
#include "hookscope/erased_call.hpp"

#include <array>
#include <cstddef>
#include <string>
#include <string_view>
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
  return {&format_one<T>, &capture_one<T>};  // every type captures (opaque leaves where not structural)
}

/// The tables of the types most parameters have (the arithmetic types, strings, tensor_spec), compiled once in the
/// library (src/value_ops.cpp): a translation unit annotating functions that take them then compiles no
/// formatting or capture code of its own for them (~1 ms of GCC's time per type and translation unit).
struct common_value_ops {
  static const value_ops boolean, char_, signed_char, unsigned_char, short_, unsigned_short, int_, unsigned_int, long_,
      unsigned_long, long_long, unsigned_long_long, float_, double_, long_double, string, string_view, tensor;
};

/// The library's table of T (`table`); none for a type whose table each translation unit makes. (A member to
/// detect rather than a pointer to compare with null: GCC's -fsanitize=undefined makes such a comparison of an
/// extern object's address no constant expression.)
template <class T>
struct common_value_ops_of {};

#define HOOKSCOPE_DETAIL_COMMON_VALUE_OPS(type, member)                 \
  template <>                                                           \
  struct common_value_ops_of<type> {                                    \
    static constexpr const value_ops& table = common_value_ops::member; \
  }
HOOKSCOPE_DETAIL_COMMON_VALUE_OPS(bool, boolean);
HOOKSCOPE_DETAIL_COMMON_VALUE_OPS(char, char_);
HOOKSCOPE_DETAIL_COMMON_VALUE_OPS(signed char, signed_char);
HOOKSCOPE_DETAIL_COMMON_VALUE_OPS(unsigned char, unsigned_char);
HOOKSCOPE_DETAIL_COMMON_VALUE_OPS(short, short_);
HOOKSCOPE_DETAIL_COMMON_VALUE_OPS(unsigned short, unsigned_short);
HOOKSCOPE_DETAIL_COMMON_VALUE_OPS(int, int_);
HOOKSCOPE_DETAIL_COMMON_VALUE_OPS(unsigned, unsigned_int);
HOOKSCOPE_DETAIL_COMMON_VALUE_OPS(long, long_);
HOOKSCOPE_DETAIL_COMMON_VALUE_OPS(unsigned long, unsigned_long);
HOOKSCOPE_DETAIL_COMMON_VALUE_OPS(long long, long_long);
HOOKSCOPE_DETAIL_COMMON_VALUE_OPS(unsigned long long, unsigned_long_long);
HOOKSCOPE_DETAIL_COMMON_VALUE_OPS(float, float_);
HOOKSCOPE_DETAIL_COMMON_VALUE_OPS(double, double_);
HOOKSCOPE_DETAIL_COMMON_VALUE_OPS(long double, long_double);
HOOKSCOPE_DETAIL_COMMON_VALUE_OPS(std::string, string);
HOOKSCOPE_DETAIL_COMMON_VALUE_OPS(std::string_view, string_view);
HOOKSCOPE_DETAIL_COMMON_VALUE_OPS(tensor_spec, tensor);
#undef HOOKSCOPE_DETAIL_COMMON_VALUE_OPS

/// The table of a type the library has no table of, made where it is used (one per program: an inline variable).
template <class T>
inline constexpr value_ops own_value_ops = make_value_ops<T>();

template <class T>
constexpr const value_ops& find_value_ops() noexcept {
  if constexpr (requires { common_value_ops_of<T>::table; }) {
    return common_value_ops_of<T>::table;
  } else {
    return own_value_ops<T>;
  }
}

/// The table of T (cv and references removed by the caller).
template <class T>
inline constexpr const value_ops& value_ops_for = find_value_ops<T>();

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
