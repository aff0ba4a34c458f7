// The per-type tables behind erased_call: how to format and capture a value known only by its address.
//
// One table per parameter or result type (not per observable): 200 observables taking an int share the
// formatting and capture of int, so an annotation adds no code of its own for them.
#pragma once

#include "hookscope/detail/capture_to_value.hpp"
#include "hookscope/detail/config.hpp"
#include "hookscope/detail/fixed_string.hpp"
#include "hookscope/detail/format.hpp"
#include "hookscope/detail/record_encoding.hpp"
#include "hookscope/detail/erased_call.hpp"

#include <array>
#include <cstddef>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>

HOOKSCOPE_DETAIL_BEGIN_NAMESPACE
namespace detail {

template <class T>
std::string format_one(const void* object) {
  return detail::format_value(*static_cast<const T*>(object));
}

template <class T>
value capture_one(const void* object, const void* options) {
  const T& v = *static_cast<const T*>(object);
  return options == nullptr ? to_value_of(capture_whole(v, capture_options{}))
                            : to_value_of(capture_whole(v, *static_cast<const capture_options*>(options)));
}

template <class T>
std::uint64_t text_bits_one(const void* object) noexcept {
  return detail::text_bits(*static_cast<const T*>(object));
}

template <class T>
constexpr value_ops make_value_ops() noexcept {
  constexpr text_kind kind = text_kind_of<T>;
  // Every type captures (opaque leaves where not structural); some also encode (record_encoding.hpp).
  if constexpr (kind == text_kind::formatted) {
    return {&format_one<T>, &capture_one<T>, kind, nullptr, encoder_of<T>()};
  } else {
    return {&format_one<T>, &capture_one<T>, kind, &text_bits_one<T>, encoder_of<T>()};
  }
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

//=== parameters whose pointee is captured (`*name`) ===//

/// The table of a parameter written `*name`: its pointee (a C string for char) read without faulting, as
/// capture_options::read_pointee reads it, and formatted alike.
template <class T>
std::string format_read_pointee(const void* object) {
  const T p = *static_cast<const T*>(object);
  return p == nullptr ? std::string("nullptr") : detail::format_pointee(p);
}
template <class T>
value capture_read_pointee(const void* object, const void* options) {
  capture_options read = options == nullptr ? capture_options{} : *static_cast<const capture_options*>(options);
  read.read_pointee = true;
  return to_value_of(capture_whole(*static_cast<const T*>(object), read));
}
template <class T>
inline constexpr value_ops pointee_value_ops{&format_read_pointee<T>, &capture_read_pointee<T>, text_kind::formatted,
                                             nullptr, nullptr};

/// Whether a `*name` parameter of type T is captured structurally: a C string always, another pointee as its type.
template <class T>
consteval bool pointee_capturable() {
  using object = std::remove_cv_t<std::remove_pointer_t<T>>;
  if constexpr (std::is_same_v<object, char>) {
    return true;
  } else {
    return capturable<object>;
  }
}

template <bool Read, class T>
constexpr const value_ops* arg_value_ops() noexcept {
  if constexpr (Read && pointee_parameter<T>) {
    return &pointee_value_ops<std::remove_cvref_t<T>>;
  } else {
    return &value_ops_for<std::remove_cvref_t<T>>;
  }
}
template <bool Read, class T>
consteval bool arg_capturable() {
  if constexpr (Read && pointee_parameter<T>) {
    return pointee_capturable<std::remove_cvref_t<T>>();
  } else {
    return capturable<std::remove_cvref_t<T>>;
  }
}

template <class R, class Reads, class... A>
struct reading_call_ops_tables;
template <class R, bool... Read, class... A>
struct reading_call_ops_tables<R, std::integer_sequence<bool, Read...>, A...> {
  static constexpr std::array<const value_ops*, sizeof...(A)> args{arg_value_ops<Read, A>()...};
  static constexpr call_ops ops{args.data(), call_ops_tables<R, A...>::result(), (arg_capturable<Read, A>() && ...)};
};

template <fixed_string Params, std::size_t... I>
constexpr auto pointee_marks_sequence(std::index_sequence<I...>) noexcept
    -> std::integer_sequence<bool, pointee_marks_of<Params, sizeof...(I)>[I]...>;

template <fixed_string Params, class R, class... A>
consteval const call_ops& find_call_ops() noexcept {
  if constexpr (!has_pointee_mark(Params.view())) {
    return call_ops_for<R, A...>;
  } else {
    using marks = decltype(pointee_marks_sequence<Params>(std::index_sequence_for<A...>{}));
    return reading_call_ops_tables<R, marks, A...>::ops;
  }
}

/// The tables of an annotation's calls: its signature's, but for the parameters written `*name`, whose pointee is
/// read (one set of tables per signature and marks).
template <fixed_string Params, class R, class... A>
inline constexpr const call_ops& call_ops_of = find_call_ops<Params, R, A...>();

}  // namespace detail
HOOKSCOPE_DETAIL_END_NAMESPACE
