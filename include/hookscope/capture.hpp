// hookscope/capture.hpp — turns any argument into an owned value that outlives the call, chosen at compile time
// from its type, and converts it to the run-time value tree.
//
//   tensors (tensor_traits)        -> tensor_spec{shape, dtype}      (contents too with capture_options)
//   bool, integers, floats         -> bool, std::int64_t, double
//   strings                        -> std::string
//   std::optional, pointers        -> std::optional<captured>          (absent: none)
//   vector, array, span, ranges    -> std::vector<captured>            (list)
//   tuple, pair                    -> std::tuple<captured...>          (tuple)
//   map<string, T>                 -> captured_dict<captured>          (dict, in iteration order)
//   aggregates (Boost.PFR)         -> captured_struct                  (struct, fields by name on Boost >= 1.84,
//                                                                       "0", "1", ... before)
//   Hana-adapted structs           -> captured_struct                  (struct, fields by name)
//   other classes                  -> flatten_traits<T> specialisation (struct, the children it names)
//
// Anything else does not compile, with a message naming the type and the fix.
#pragma once

#include "hookscope/config.hpp"
#include "hookscope/detail/fixed_string.hpp"
#include "hookscope/tensor.hpp"
#include "hookscope/value.hpp"

#include <boost/hana/accessors.hpp>
#include <boost/hana/concept/struct.hpp>
#include <boost/hana/first.hpp>
#include <boost/hana/second.hpp>
#include <boost/hana/string.hpp>
#include <boost/hana/unpack.hpp>
#include <boost/pfr/core.hpp>
#include <boost/pfr/tuple_size.hpp>
#include <boost/version.hpp>

#if BOOST_VERSION >= 108400
#include <boost/pfr/config.hpp>
#if BOOST_PFR_CORE_NAME_ENABLED
#include <boost/pfr/core_name.hpp>
#define HOOKSCOPE_DETAIL_PFR_NAMES 1
#endif
#endif
#ifndef HOOKSCOPE_DETAIL_PFR_NAMES
#define HOOKSCOPE_DETAIL_PFR_NAMES 0
#endif

#include <array>
#include <bit>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>
#include <optional>
#include <ranges>
#include <span>
#include <string>
#include <string_view>
#include <tuple>
#include <type_traits>
#include <utility>
#include <variant>
#include <vector>

HOOKSCOPE_DETAIL_BEGIN_NAMESPACE

/// Specialise for a class that is neither a tensor, a range nor an aggregate (the counterpart of registering
/// a pytree node): `static constexpr std::string_view name` (optional, the struct name in records) and
/// `static auto flatten(const T&)` returning named children as a range of `std::pair<std::string, X>`.
template <class T>
struct flatten_traits;

/// A captured dict: (key, value) pairs in the order the map iterated them.
template <class C>
struct captured_dict {
  std::vector<std::pair<std::string, C>> entries;
  friend bool operator==(const captured_dict&, const captured_dict&) = default;
};

/// A captured struct: its class name, field names and the captured fields.
template <class Fields>
struct captured_struct {
  std::string_view name;
  std::span<const std::string_view> field_names;
  Fields fields;  // a std::tuple of captured fields
  friend bool operator==(const captured_struct& a, const captured_struct& b) { return a.fields == b.fields; }
};

/// A captured flatten_traits class: its name and its named children.
template <class Children>
struct captured_class {
  std::string_view name;
  Children children;  // a captured_dict
  friend bool operator==(const captured_class&, const captured_class&) = default;
};

/// How much to capture. Tensor contents are opt-in (for replay): records hold shapes and dtypes by default.
struct capture_options {
  bool tensor_data = false;  ///< also copy tensor contents, for tensor types whose tensor_traits has data()
};

namespace detail {

// Set for the duration of a capture with tensor_data: the capture rules keep their one-argument form.
inline thread_local bool capturing_tensor_data = false;

class tensor_data_scope {
 public:
  explicit tensor_data_scope(bool on) noexcept : previous_(capturing_tensor_data) { capturing_tensor_data = on; }
  tensor_data_scope(const tensor_data_scope&) = delete;
  tensor_data_scope& operator=(const tensor_data_scope&) = delete;
  ~tensor_data_scope() { capturing_tensor_data = previous_; }

 private:
  bool previous_;
};

[[noreturn]] void throw_tensor_data_size(const tensor_spec& spec, std::size_t bytes);

template <class T>
void copy_tensor_data(const T& t, tensor_spec& spec) {
  if constexpr (requires { tensor_traits<T>::data(t); }) {
    static_assert(std::endian::native == std::endian::little,
                  "hookscope: capture of tensor contents assumes a little-endian machine (the record format's order)");
    const auto& elements = tensor_traits<T>::data(t);  // may be a temporary (a row-major copy): lifetime extended
    using element = std::remove_cvref_t<std::ranges::range_value_t<decltype(elements)>>;
    static_assert(std::is_trivially_copyable_v<element>,
                  "hookscope: tensor_traits<T>::data(t) must return a contiguous range of plain elements or bytes");
    const std::size_t bytes = std::ranges::size(elements) * sizeof(element);
    if (bytes == 0) return;  // contents not at hand (a tensor_spec captured without them): shape only
    if (bytes != static_cast<std::size_t>(spec.numel()) * dtype_size(spec.dtype)) throw_tensor_data_size(spec, bytes);
    spec.data.resize(bytes);
    std::memcpy(spec.data.data(), std::ranges::data(elements), bytes);
  }
}

template <class T>
inline constexpr bool is_optional = false;
template <class T>
inline constexpr bool is_optional<std::optional<T>> = true;

template <class T>
inline constexpr bool is_smart_pointer = false;
template <class T, class D>
inline constexpr bool is_smart_pointer<std::unique_ptr<T, D>> = true;
template <class T>
inline constexpr bool is_smart_pointer<std::shared_ptr<T>> = true;

template <class T>
concept string_like = std::is_convertible_v<const T&, std::string_view> && !std::is_same_v<T, std::nullptr_t>;

template <class T>
concept string_keyed_map = std::ranges::range<const T> && requires {
  typename T::key_type;
  typename T::mapped_type;
} && std::is_convertible_v<const typename T::key_type&, std::string_view>;

template <class T>
concept tuple_like = requires { std::tuple_size<T>::value; } && !std::ranges::range<const T>;

template <class T>
concept flattenable = requires(const T& t) { flatten_traits<T>::flatten(t); };

template <class T>
concept hana_struct = boost::hana::Struct<T>::value;

template <class T>
concept pfr_aggregate = std::is_aggregate_v<T> && std::is_class_v<T> && !std::is_polymorphic_v<T>;

template <class T>
struct never_capturable : std::false_type {};

// Types no rule matches: `supported` is false, and naming their captured type is a compile error.
template <class T>
struct capture_rule {
  static constexpr bool supported = false;
};

template <class T>
struct checked_rule : capture_rule<T> {
  static_assert(capture_rule<T>::supported,
                "hookscope: this parameter type cannot be captured: make it a tensor (specialise "
                "hookscope::tensor_traits<T>), an aggregate or a Hana struct, or name its children with a "
                "hookscope::flatten_traits<T> specialisation. The type is the T of checked_rule<T> below.");
};

template <class T>
using captured_of = typename checked_rule<std::remove_cvref_t<T>>::type;

// Field names "0", "1", ... for aggregates (Boost.PFR before 1.84 has no names).
inline constexpr std::string_view positional_field_names[] = {"0",  "1",  "2",  "3",  "4",  "5",  "6",  "7",
                                                              "8",  "9",  "10", "11", "12", "13", "14", "15",
                                                              "16", "17", "18", "19", "20", "21", "22", "23",
                                                              "24", "25", "26", "27", "28", "29", "30", "31"};

// Field names of an aggregate: its real names where Boost.PFR can read them (Boost >= 1.84 with
// BOOST_PFR_CORE_NAME_ENABLED), positional names otherwise.
template <class T>
struct pfr_names {
#if HOOKSCOPE_DETAIL_PFR_NAMES
  static constexpr auto names = boost::pfr::names_as_array<T>();
  static constexpr std::span<const std::string_view> get() noexcept { return names; }
#else
  static constexpr std::span<const std::string_view> get() noexcept {
    return {positional_field_names, boost::pfr::tuple_size_v<T>};
  }
#endif
};

template <class T, class = std::make_index_sequence<boost::pfr::tuple_size_v<T>>>
struct pfr_fields;
template <class T, std::size_t... I>
struct pfr_fields<T, std::index_sequence<I...>> {
  using type = std::tuple<captured_of<boost::pfr::tuple_element_t<I, T>>...>;
};

template <class T>
struct hana_names {
  static constexpr auto names = boost::hana::unpack(boost::hana::accessors<T>(), [](auto... pairs) {
    return std::array<std::string_view, sizeof...(pairs)>{
        std::string_view(boost::hana::to<const char*>(boost::hana::first(pairs)))...};
  });
};

template <class T>
struct hana_fields {
  using type = decltype(boost::hana::unpack(boost::hana::accessors<T>(), [](auto... pairs) {
    return std::tuple<captured_of<decltype(boost::hana::second(pairs)(std::declval<const T&>()))>...>{};
  }));
};

template <class T>
  requires tensor<T>
struct capture_rule<T> {
  static constexpr bool supported = true;
  using type = tensor_spec;
  static type capture(const T& t) {
    type spec = spec_of(t);
    if (capturing_tensor_data) copy_tensor_data(t, spec);
    return spec;
  }
};

template <>
struct capture_rule<bool> {
  static constexpr bool supported = true;
  using type = bool;
  static type capture(bool b) { return b; }
};

template <class T>
  requires(std::is_arithmetic_v<T> && !std::is_same_v<T, bool> && !tensor<T>)
struct capture_rule<T> {
  static constexpr bool supported = true;
  using type = std::conditional_t<std::is_integral_v<T>, std::int64_t, double>;
  static type capture(T v) { return static_cast<type>(v); }
};

template <class T>
  requires(string_like<T> && !tensor<T>)
struct capture_rule<T> {
  static constexpr bool supported = true;
  using type = std::string;
  static type capture(const T& s) { return std::string(std::string_view(s)); }
};

template <>
struct capture_rule<std::nullptr_t> {
  static constexpr bool supported = true;
  using type = std::monostate;
  static type capture(std::nullptr_t) { return {}; }
};

template <class T>
  requires is_optional<T>
struct capture_rule<T> {
  static constexpr bool supported = true;
  using type = std::optional<captured_of<typename T::value_type>>;
  static type capture(const T& o) {
    if (!o) return std::nullopt;
    return capture_rule<std::remove_cvref_t<typename T::value_type>>::capture(*o);
  }
};

template <class T>
  requires((std::is_pointer_v<T> && !string_like<T>) || is_smart_pointer<T>)
struct capture_rule<T> {
  static constexpr bool supported = true;
  using pointee = std::remove_cvref_t<decltype(*std::declval<const T&>())>;
  using type = std::optional<captured_of<pointee>>;
  static type capture(const T& p) {
    if (p == nullptr) return std::nullopt;
    return capture_rule<pointee>::capture(*p);
  }
};

template <class T>
  requires(flattenable<T> && !tensor<T>)
struct capture_rule<T> {
  static constexpr bool supported = true;
  using children = captured_of<decltype(flatten_traits<T>::flatten(std::declval<const T&>()))>;
  using type = captured_class<children>;
  static type capture(const T& t) {
    std::string_view name = type_name<T>();
    if constexpr (requires { flatten_traits<T>::name; }) name = flatten_traits<T>::name;
    return {name, capture_rule<std::remove_cvref_t<decltype(flatten_traits<T>::flatten(t))>>::capture(
                      flatten_traits<T>::flatten(t))};
  }
};

template <class T>
  requires(string_keyed_map<T> && !tensor<T> && !flattenable<T>)
struct capture_rule<T> {
  static constexpr bool supported = true;
  using type = captured_dict<captured_of<typename T::mapped_type>>;
  static type capture(const T& m) {
    type out;
    for (const auto& [key, v] : m) {
      out.entries.emplace_back(std::string(std::string_view(key)),
                               capture_rule<std::remove_cvref_t<typename T::mapped_type>>::capture(v));
    }
    return out;
  }
};

template <class T>
  requires(std::ranges::range<const T> && !string_like<T> && !string_keyed_map<T> && !tensor<T> && !flattenable<T>)
struct capture_rule<T> {
  static constexpr bool supported = true;
  using element = std::remove_cvref_t<std::ranges::range_reference_t<const T>>;
  using type = std::vector<captured_of<element>>;
  static type capture(const T& r) {
    type out;
    if constexpr (std::ranges::sized_range<const T>) out.reserve(std::ranges::size(r));
    for (const auto& e : r) out.push_back(capture_rule<element>::capture(e));
    return out;
  }
};

template <class T>
  requires(tuple_like<T> && !tensor<T> && !flattenable<T>)
struct capture_rule<T> {
  static constexpr bool supported = true;
  template <std::size_t... I>
  static auto types(std::index_sequence<I...>) -> std::tuple<captured_of<std::tuple_element_t<I, T>>...>;
  using type = decltype(types(std::make_index_sequence<std::tuple_size_v<T>>{}));
  static type capture(const T& t) {
    return [&]<std::size_t... I>(std::index_sequence<I...>) {
      return type{capture_rule<std::remove_cvref_t<std::tuple_element_t<I, T>>>::capture(std::get<I>(t))...};
    }(std::make_index_sequence<std::tuple_size_v<T>>{});
  }
};

template <class T>
  requires(hana_struct<T> && !tensor<T> && !flattenable<T>)
struct capture_rule<T> {
  static constexpr bool supported = true;
  using type = captured_struct<typename hana_fields<T>::type>;
  static type capture(const T& t) {
    return boost::hana::unpack(boost::hana::accessors<T>(), [&](auto... pairs) {
      return type{type_name<T>(), hana_names<T>::names,
                  {capture_rule<std::remove_cvref_t<decltype(boost::hana::second(pairs)(t))>>::capture(
                      boost::hana::second(pairs)(t))...}};
    });
  }
};

template <class T>
  requires(pfr_aggregate<T> && !hana_struct<T> && !tensor<T> && !flattenable<T> && !std::ranges::range<const T> &&
           !tuple_like<T>)
struct capture_rule<T> {
  static constexpr bool supported = true;
  static_assert(boost::pfr::tuple_size_v<T> <= std::size(positional_field_names),
                "hookscope: capture: aggregates of more than 32 fields are not supported");
  using type = captured_struct<typename pfr_fields<T>::type>;
  static type capture(const T& t) {
    return [&]<std::size_t... I>(std::index_sequence<I...>) {
      return type{type_name<T>(), pfr_names<T>::get(),
                  {capture_rule<std::remove_cvref_t<boost::pfr::tuple_element_t<I, T>>>::capture(
                      boost::pfr::get<I>(t))...}};
    }(std::make_index_sequence<boost::pfr::tuple_size_v<T>>{});
  }
};

//=== deep capturability ===//

// Mirrors the rules above without naming any captured type, so asking about a vector of uncapturable elements
// answers false instead of failing to compile (the rules name their element types as soon as they are used).
template <class T>
consteval bool deep_capturable();

template <class... T>
consteval bool all_deep_capturable() {
  return (deep_capturable<std::remove_cvref_t<T>>() && ...);
}

template <class T, std::size_t... I>
consteval bool tuple_deep_capturable(std::index_sequence<I...>) {
  return all_deep_capturable<std::tuple_element_t<I, T>...>();
}

template <class T, std::size_t... I>
consteval bool pfr_deep_capturable(std::index_sequence<I...>) {
  return all_deep_capturable<boost::pfr::tuple_element_t<I, T>...>();
}

template <class T>
consteval bool deep_capturable() {
  if constexpr (tensor<T> || std::is_arithmetic_v<T> || std::is_same_v<T, std::nullptr_t>) {
    return true;
  } else if constexpr (flattenable<T>) {
    return all_deep_capturable<decltype(flatten_traits<T>::flatten(std::declval<const T&>()))>();
  } else if constexpr (string_like<T>) {
    return true;
  } else if constexpr (is_optional<T>) {
    return all_deep_capturable<typename T::value_type>();
  } else if constexpr (is_smart_pointer<T> || std::is_pointer_v<T>) {
    if constexpr (std::is_void_v<std::remove_pointer_t<T>> || std::is_function_v<std::remove_pointer_t<T>>) {
      return false;
    } else {
      return all_deep_capturable<decltype(*std::declval<const T&>())>();
    }
  } else if constexpr (string_keyed_map<T>) {
    return all_deep_capturable<typename T::mapped_type>();
  } else if constexpr (std::ranges::range<const T>) {
    using element = std::remove_cvref_t<std::ranges::range_reference_t<const T>>;
    if constexpr (std::is_same_v<element, T>) {
      return false;  // a range of itself (std::filesystem::path) would never end
    } else {
      return all_deep_capturable<element>();
    }
  } else if constexpr (tuple_like<T>) {
    return tuple_deep_capturable<T>(std::make_index_sequence<std::tuple_size_v<T>>{});
  } else if constexpr (hana_struct<T>) {
    return boost::hana::unpack(boost::hana::accessors<T>(), [](auto... pairs) {
      return all_deep_capturable<decltype(boost::hana::second(pairs)(std::declval<const T&>()))...>();
    });
  } else if constexpr (pfr_aggregate<T>) {
    if constexpr (boost::pfr::tuple_size_v<T> > std::size(positional_field_names)) {
      return false;
    } else {
      return pfr_deep_capturable<T>(std::make_index_sequence<boost::pfr::tuple_size_v<T>>{});
    }
  } else {
    return false;
  }
}

//=== to value ===//

inline value to_value_of(const tensor_spec& t) { return value(t); }
inline value to_value_of(tensor_spec&& t) { return value(std::move(t)); }  // a fresh capture moves, no copy
inline value to_value_of(std::string&& s) { return value(std::move(s)); }
inline value to_value_of(bool b) { return value(b); }
inline value to_value_of(std::int64_t i) { return value(i); }
inline value to_value_of(double f) { return value(f); }
inline value to_value_of(const std::string& s) { return value(s); }
inline value to_value_of(std::monostate) { return {}; }

template <class C>
value to_value_of(const std::optional<C>& o);
template <class C>
value to_value_of(std::optional<C>&& o);
template <class C>
value to_value_of(const std::vector<C>& v);
template <class C>
value to_value_of(std::vector<C>&& v);
template <class... C>
value to_value_of(const std::tuple<C...>& t);
template <class C>
value to_value_of(const captured_dict<C>& d);
template <class F>
value to_value_of(const captured_struct<F>& s);
template <class C>
value to_value_of(const captured_class<C>& c);

template <class C>
value to_value_of(const std::optional<C>& o) {
  return o ? to_value_of(*o) : value();
}
template <class C>
value to_value_of(std::optional<C>&& o) {
  return o ? to_value_of(std::move(*o)) : value();
}
template <class C>
value to_value_of(std::vector<C>&& v) {
  std::vector<value> items;
  items.reserve(v.size());
  for (C& c : v) items.push_back(to_value_of(std::move(c)));
  return value::list(std::move(items));
}
template <class C>
value to_value_of(const std::vector<C>& v) {
  std::vector<value> items;
  items.reserve(v.size());
  for (const C& c : v) items.push_back(to_value_of(c));
  return value::list(std::move(items));
}
template <class... C>
value to_value_of(const std::tuple<C...>& t) {
  return std::apply([](const auto&... c) { return value::tuple({to_value_of(c)...}); }, t);
}
// (name, captured) pairs -> fields, for dicts and for flatten_traits children.
template <class Pairs>
value_fields fields_from_pairs(const Pairs& pairs) {
  value_fields fields;
  fields.reserve(pairs.size());
  for (const auto& [key, c] : pairs) fields.emplace_back(key, to_value_of(c));
  return fields;
}
template <class C>
value_fields fields_of(const captured_dict<C>& d) {
  return fields_from_pairs(d.entries);
}
// flatten_traits children given as a range of (name, child) pairs.
template <class C>
value_fields fields_of(const std::vector<std::tuple<std::string, C>>& pairs) {
  return fields_from_pairs(pairs);
}
template <class C>
value to_value_of(const captured_dict<C>& d) {
  return value::dict(fields_of(d));
}
template <class F>
value to_value_of(const captured_struct<F>& s) {
  value_fields fields;
  std::size_t i = 0;
  std::apply([&](const auto&... c) { (fields.emplace_back(std::string(s.field_names[i++]), to_value_of(c)), ...); },
             s.fields);
  return value::structure(std::string(s.name), std::move(fields));
}
template <class C>
value to_value_of(const captured_class<C>& c) {
  static_assert(requires { fields_of(c.children); },
                "hookscope: flatten_traits<T>::flatten must return named children: a range of "
                "std::pair<std::string, X> or a map from strings");
  return value::structure(std::string(c.name), fields_of(c.children));
}

}  // namespace detail

/// True when hookscope can capture a T, all the way down: `std::vector<U>` is capturable when U is. Asking never
/// fails to compile, so generic code can capture what it can and skip the rest.
template <class T>
concept capturable = detail::deep_capturable<std::remove_cvref_t<T>>();

/// The owned, storable form of a `T` argument (see the table at the top of this header).
template <class T>
using captured_t = detail::captured_of<T>;

/// Captures `v`: shapes and dtypes of tensors, copies of scalars and strings, containers element by element.
template <class T>
captured_t<T> capture(const T& v) {
  return detail::checked_rule<std::remove_cvref_t<T>>::capture(v);
}

/// Captures `v` as `options` say (tensor contents too, with `.tensor_data = true`).
template <class T>
captured_t<T> capture(const T& v, capture_options options) {
  const detail::tensor_data_scope scope(options.tensor_data);
  return capture(v);
}

/// The run-time value tree of a captured value.
template <class C>
value to_value(const C& captured) {
  return detail::to_value_of(captured);
}

/// Captures `v` straight into the value tree (the captured parts are moved in, not copied).
template <class T>
value capture_value(const T& v) {
  return detail::to_value_of(capture(v));
}

/// Captures `v` straight into the value tree, as `options` say.
template <class T>
value capture_value(const T& v, capture_options options) {
  const detail::tensor_data_scope scope(options.tensor_data);
  return capture_value(v);
}

HOOKSCOPE_DETAIL_END_NAMESPACE
