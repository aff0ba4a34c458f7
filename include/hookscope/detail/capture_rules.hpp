// hookscope/detail/capture_rules.hpp — the captured types and the capture function of each capture_kind but the
// structs' (capture_struct_rules.hpp).
//
// `rule<T, Stack>` is chosen by classify<T>() alone (one partial specialisation per kind, no constraints to weigh).
// Each rule gives `ok` (structural all the way down: no opaque leaf), `type` (the captured type) and
// `capture(t, state)`. Every type has a rule, so capturing compiles for every type and asking never fails.
//
// `Stack` lists the struct types being captured above (capture_struct_rules.hpp pushes them): a struct met again
// below itself is a recursive type, captured at run time into a value (recursive_rule) with a depth counter, so
// that its captured type, and the instantiations, end. Rules without children drop the stack (rule_in), so that
// an int is captured by one rule wherever it appears.
#pragma once

#include "hookscope/detail/config.hpp"
#include "hookscope/detail/capture_classify.hpp"
#include "hookscope/detail/capture_fields.hpp"
#include "hookscope/detail/range_concepts.hpp"
#include "hookscope/detail/tensor_data.hpp"
#include "hookscope/detail/type_name.hpp"
#include "hookscope/detail/tensor.hpp"
#include "hookscope/detail/value.hpp"

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <tuple>
#include <type_traits>
#include <utility>
#include <variant>
#include <vector>

HOOKSCOPE_DETAIL_BEGIN_NAMESPACE

/// How much to capture. Tensor contents are opt-in (for replay): records hold shapes and dtypes by default.
///
/// The bounds hold for one capture (one argument) as a whole, so that capturing never copies unbounded data: a range
/// whose elements, or a string or bytes whose bytes, would take the capture past what is left of its bound is an
/// opaque leaf with its length and "too_large", decided before any element is copied. The defaults keep one
/// argument's record far below the record format's 64 MiB line (docs/capture.md: at most ~9 MiB of elements, each
/// at most 35 bytes of JSON, and ~6 MiB of escaped text), and hold every list of token ids of a 128 K context.
struct capture_options {
  bool tensor_data = false;  ///< also copy tensor contents, for tensor types whose tensor_traits has data()
  /// Capture a raw pointer that is the captured value itself (not a part of it) as its pointee, a `char` pointer as
  /// a C string, read without faulting (an annotation's `*name` sets it for that parameter).
  bool read_pointee = false;
  std::size_t max_elements = std::size_t{1} << 18;  ///< elements of all ranges (lists, dicts, sets, ...) in one capture
  std::size_t max_bytes = detail::default_max_bytes;  ///< bytes of all strings and byte ranges in one capture
};

/// A captured dict: (key, value) pairs in the order the map iterated them.
template <class C>
struct captured_dict {
  std::vector<std::pair<std::string, C>> entries;
  friend bool operator==(const captured_dict&, const captured_dict&) = default;
};

/// A captured flatten_traits class: its name and its named children.
template <class Children>
struct captured_class {
  std::string_view name;
  Children children;  // or_opaque of a captured_dict, or of a std::vector of (name, captured child) tuples
  friend bool operator==(const captured_class&, const captured_class&) = default;
};

/// A captured opaque leaf: the name of a type hookscope does not look into (value: {"opaque": name}), and why it has
/// no value when that is not the type's rule (the record format's opaque keys, hookscope::opaque_leaf).
struct captured_opaque {
  std::string_view type_name;
  std::optional<std::uint64_t> address{};  ///< a raw pointer's, recorded rather than followed
  bool unreadable = false;                 ///< the pointee was asked for and `address` could not be read
  std::optional<std::uint64_t> length{};   ///< the element or byte count of a value too large, when known
  bool too_large = false;                  ///< over the capture's bounds (capture_options::max_elements, max_bytes)
  friend bool operator==(const captured_opaque&, const captured_opaque&) = default;
};

/// What a value that may be left out at run time is captured as: its capture (index 0), or an opaque leaf saying why
/// it is not there (index 1): a range, string or bytes over the capture's bounds, a pointer recorded by its address
/// or whose pointee could not be read. (Build one with std::in_place_index: C may be captured_opaque too.)
template <class C>
using or_opaque = std::variant<C, captured_opaque>;

/// A captured std::variant: the index of its active alternative and that alternative captured (a std::variant of
/// the captured alternatives). `index` is std::variant_npos for a variant valueless by exception.
template <class Alternatives>
struct captured_variant {
  std::size_t index;
  Alternatives alternative;
  friend bool operator==(const captured_variant&, const captured_variant&) = default;
};

/// A captured range of std::byte: its bytes (value: {"bytes": base64}).
struct captured_bytes {
  std::vector<std::byte> bytes;
  friend bool operator==(const captured_bytes&, const captured_bytes&) = default;
};

namespace detail {

/// What one capture may still copy: it starts at the options' bounds and every range's elements and every string's
/// bytes are taken from it.
struct capture_budget {
  std::size_t elements;
  std::size_t bytes;
};

/// What every rule's capture is given: the user's options, how deep in the value tree the part captured is (how
/// many containers are above it; optionals, pointers and references add none: they are no node of their own),
/// whether it is the captured value itself, and the capture's budget (none: each range and string bounded alone).
struct capture_state {
  capture_options options;
  unsigned depth = 0;
  bool whole = true;  ///< the captured value itself, not a part of it
  capture_budget* budget = nullptr;

  /// The state of the parts of a container captured with this state.
  capture_state below() const noexcept { return {options, depth + 1, false, budget}; }
  /// The state of a part at the same level (an optional's value, a pointee, a referent).
  capture_state part() const noexcept { return {options, depth, false, budget}; }
  /// Whether a raw pointer captured with this state is read (capture_options::read_pointee applies to the whole).
  bool reads_pointee() const noexcept { return whole && options.read_pointee; }
  std::size_t elements_left() const noexcept { return budget != nullptr ? budget->elements : options.max_elements; }
  std::size_t bytes_left() const noexcept { return budget != nullptr ? budget->bytes : options.max_bytes; }
  void take_elements(std::size_t n) const noexcept {
    if (budget != nullptr) budget->elements -= n;
  }
  void take_bytes(std::size_t n) const noexcept {
    if (budget != nullptr) budget->bytes -= n;
  }
};

/// The opaque leaf of a value of type T left out for its size: `length` elements or bytes when known.
template <class T>
captured_opaque too_large_leaf(std::optional<std::uint64_t> length) noexcept {
  return {type_name<T>(), std::nullopt, false, length, true};
}

/// `c` as the value of an or_opaque, or `leaf` in its place.
template <class C>
or_opaque<std::remove_cvref_t<C>> captured_value(C&& c) {
  return or_opaque<std::remove_cvref_t<C>>(std::in_place_index<0>, static_cast<C&&>(c));
}
template <class C>
or_opaque<C> captured_leaf(captured_opaque leaf) noexcept {
  return or_opaque<C>(std::in_place_index<1>, leaf);
}

/// A string of `n` bytes made from `bytes` when the capture may still copy them, else its too_large leaf (of type T).
template <class T>
or_opaque<std::string> bounded_string(const char* bytes, std::size_t n, const capture_state& state) {
  if (n > state.bytes_left()) return captured_leaf<std::string>(too_large_leaf<T>(n));
  state.take_bytes(n);
  return captured_value(std::string(bytes, n));
}

template <class T, class Stack = type_list<>, capture_kind Kind = classify<T>()>
struct rule;

/// A struct met again below itself: captured at run time (capture_to_value.hpp defines capture).
template <class T>
struct recursive_rule {
  static constexpr bool ok = true;  // the recursion itself; T's own rule says whether T is structural
  using type = value;
  static value capture(const T& t, capture_state state);
};

// The kinds whose rules capture parts of T with rules of their own: they keep the stack for their parts.
constexpr bool has_parts(capture_kind k) noexcept {
  switch (k) {
    case capture_kind::flattened:
    case capture_kind::optional:
    case capture_kind::variant:
    case capture_kind::raw_pointer:
    case capture_kind::pointer:
    case capture_kind::reference:
    case capture_kind::string_map:
    case capture_kind::range:
    case capture_kind::tuple_like:
    case capture_kind::hana_struct:
    case capture_kind::aggregate: return true;
    case capture_kind::opaque:
    case capture_kind::tensor:
    case capture_kind::boolean:
    case capture_kind::arithmetic:
    case capture_kind::enumeration:
    case capture_kind::null:
    case capture_kind::char_array:
    case capture_kind::string:
    case capture_kind::u8_string:
    case capture_kind::c_string:
    case capture_kind::address:
    case capture_kind::path:
    case capture_kind::bytes: return false;
  }
  return false;
}

template <class T, class Stack>
struct select_rule;
template <class T, class... S>
struct select_rule<T, type_list<S...>> {
  static constexpr capture_kind kind = classify<T>();
  using type = std::conditional_t<(std::is_same_v<T, S> || ...), recursive_rule<T>,
                                  rule<T, std::conditional_t<has_parts(kind), type_list<S...>, type_list<>>, kind>>;
};

/// The rule of a part of type T of something captured under the struct types `Stack`.
template <class T, class Stack>
using rule_in = typename select_rule<std::remove_cvref_t<T>, Stack>::type;

/// The rule of a whole argument of type T.
template <class T>
using rule_of = rule_in<T, type_list<>>;

template <class T>
using captured_of = typename rule_of<T>::type;

template <class T, class Stack>
struct rule<T, Stack, capture_kind::opaque> {
  static constexpr bool ok = false;
  using type = captured_opaque;
  template <class U>  // T may be void or a function type: no `const T&` parameter
  static type capture(const U&, capture_state) noexcept {
    return {type_name<T>()};
  }
};

[[noreturn]] void throw_negative_dimension(const tensor_spec& spec, std::size_t index);  // src/capture.cpp

template <class T, class Stack>
struct rule<T, Stack, capture_kind::tensor> {
  static constexpr bool ok = true;
  using type = tensor_spec;
  static type capture(const T& t, capture_state state) {
    type spec = ::hookscope::spec_of(t);
    // An unknown dimension (ONNX's and TensorRT's -1) is no shape: refused rather than recorded as one.
    for (std::size_t i = 0; i < spec.shape.size(); ++i) {
      if (spec.shape[i] < 0) throw_negative_dimension(spec, i);
    }
    if (state.options.tensor_data) detail::copy_tensor_data(t, spec);
    return spec;
  }
};

template <class T, class Stack>
struct rule<T, Stack, capture_kind::boolean> {
  static constexpr bool ok = true;
  using type = bool;
  static type capture(bool b, capture_state) { return b; }
};

template <class T, class Stack>
struct rule<T, Stack, capture_kind::arithmetic> {
  static constexpr bool ok = true;
  using type = std::conditional_t<std::is_integral_v<T>, std::int64_t, double>;
  static type capture(T v, capture_state) { return static_cast<type>(v); }
};

template <class T, class Stack>
struct rule<T, Stack, capture_kind::enumeration> {
  using underlying = rule_of<std::underlying_type_t<T>>;
  static constexpr bool ok = underlying::ok;
  using type = typename underlying::type;
  static type capture(T v, capture_state state) {
    return underlying::capture(static_cast<std::underlying_type_t<T>>(v), state);
  }
};

template <class T, class Stack>
struct rule<T, Stack, capture_kind::null> {
  static constexpr bool ok = true;
  using type = std::monostate;
  static type capture(const T&, capture_state) { return {}; }
};

template <class T, class Stack>
struct rule<T, Stack, capture_kind::char_array> {
  static constexpr bool ok = true;
  using type = or_opaque<std::string>;
  // A C string in a fixed buffer (`char name[16]`): up to its first NUL, and never past the buffer.
  static type capture(const T& s, capture_state state) {
    constexpr std::size_t extent = std::extent_v<T>;
    const char* end = std::char_traits<char>::find(s, extent, '\0');
    return bounded_string<T>(s, end != nullptr ? static_cast<std::size_t>(end - s) : extent, state);
  }
};

// std::string, std::string_view (any traits and allocator: std::pmr::string too), read through data() and size().
template <class T, class Stack>
struct rule<T, Stack, capture_kind::string> {
  static constexpr bool ok = true;
  using type = or_opaque<std::string>;
  static type capture(const T& s, capture_state state) { return bounded_string<T>(s.data(), s.size(), state); }
};

template <class T, class Stack>
struct rule<T, Stack, capture_kind::u8_string> {
  static constexpr bool ok = true;
  using type = or_opaque<std::string>;  // the UTF-8 bytes as they are (the JSON writer encodes whatever a string holds)
  static type capture(const T& s, capture_state state) {
    return bounded_string<T>(reinterpret_cast<const char*>(std::ranges::data(s)), std::ranges::size(s), state);
  }
};

template <class T, class Stack>
struct rule<T, Stack, capture_kind::path> {
  static constexpr bool ok = true;
  using type = or_opaque<std::string>;
  static type capture(const T& p, capture_state state) {
    if constexpr (requires { p.native().size(); }) {  // its length known before anything is copied
      if (p.native().size() > state.bytes_left())
        return captured_leaf<std::string>(too_large_leaf<T>(p.native().size()));
    }
    std::string text = p.string();
    return bounded_string<T>(text.data(), text.size(), state);
  }
};

template <class T, class Stack>
struct rule<T, Stack, capture_kind::optional> {
  using element = rule_in<typename T::value_type, Stack>;
  static constexpr bool ok = element::ok;
  using type = std::optional<typename element::type>;
  // GCC 12 with -fsanitize=address reports a false -Wmaybe-uninitialized for *o of an empty std::optional made in
  // the caller's expression (the branch above returns first): silenced here, where it is known false, so that users'
  // sanitized -Werror builds compile.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif
  static type capture(const T& o, capture_state state) {
    if (!o) return std::nullopt;
    return element::capture(*o, state.part());
  }
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic pop
#endif
};

template <class T, class Stack, class = std::make_index_sequence<std::variant_size_v<T>>>
struct variant_rule;
template <class T, class Stack, std::size_t... I>
struct variant_rule<T, Stack, std::index_sequence<I...>> {
  static constexpr bool ok = (rule_in<std::variant_alternative_t<I, T>, Stack>::ok && ...);
  using alternatives = std::variant<typename rule_in<std::variant_alternative_t<I, T>, Stack>::type...>;
  using type = captured_variant<alternatives>;
  static type capture(const T& v, [[maybe_unused]] capture_state state) {
    type out{v.index(), {}};
    (void)((v.index() == I &&
            (out.alternative.template emplace<I>(rule_in<std::variant_alternative_t<I, T>, Stack>::capture(
                 *std::get_if<I>(__builtin_addressof(v)), state.below())),
             true)) ||
           ...);
    return out;
  }
};

template <class T, class Stack>
struct rule<T, Stack, capture_kind::variant> : variant_rule<T, Stack> {};

template <class T, class Stack>
struct rule<T, Stack, capture_kind::reference> {
  using referent = rule_in<typename T::type, Stack>;
  static constexpr bool ok = referent::ok;
  using type = typename referent::type;
  static type capture(const T& r, capture_state state) { return referent::capture(r.get(), state.part()); }
};

/// How many elements a range has, when that is at most `bound`: a sized range says it, another is walked, never
/// further than bound + 1 elements (a long std::forward_list is not walked to its end to be left out).
struct range_count {
  bool fits;
  std::optional<std::uint64_t> length;  // known when it fits or the range is sized
};
template <class T>
range_count count_within(const T& r, std::size_t bound) {
  if constexpr (std::ranges::sized_range<const T>) {
    const auto n = static_cast<std::uint64_t>(std::ranges::size(r));
    return {n <= bound, n};
  } else {
    std::uint64_t n = 0;
    for (auto it = std::ranges::begin(r), end = std::ranges::end(r); it != end; ++it) {
      if (n == bound) return {false, std::nullopt};
      ++n;
    }
    return {true, n};
  }
}

/// What a rule iterates for the range `r`: the range itself, or for a view (contiguous and sized: classify), its
/// elements from data() to data() + size(), so that none of the view's own iterators or sentinels runs.
template <class T>
decltype(auto) elements_of(const T& r) {
  if constexpr (std::ranges::view<T>) {
    return std::span(std::ranges::data(r), static_cast<std::size_t>(std::ranges::size(r)));
  } else {
    return (r);
  }
}

template <class T, class Stack>
struct rule<T, Stack, capture_kind::bytes> {
  static constexpr bool ok = true;
  using type = or_opaque<captured_bytes>;
  static type capture(const T& r, capture_state state) {
    const range_count n = detail::count_within(r, state.bytes_left());
    if (!n.fits) return captured_leaf<captured_bytes>(too_large_leaf<T>(n.length));
    state.take_bytes(static_cast<std::size_t>(*n.length));
    captured_bytes out;
    if constexpr (std::ranges::contiguous_range<const T> && std::ranges::sized_range<const T>) {
      const std::byte* data = std::ranges::data(r);
      out.bytes.assign(data, data + *n.length);
    } else {
      out.bytes.reserve(static_cast<std::size_t>(*n.length));
      for (std::byte b : detail::elements_of(r)) out.bytes.push_back(b);
    }
    return captured_value(std::move(out));
  }
};

template <class T, class Stack>
struct rule<T, Stack, capture_kind::string_map> {
  using mapped = rule_in<typename T::mapped_type, Stack>;
  static constexpr bool ok = mapped::ok;
  using dict = captured_dict<typename mapped::type>;
  using type = or_opaque<dict>;
  // Each entry is an element; each key's bytes are taken from the byte bound as they are met (a dict whose keys do
  // not fit is left out whole, with its number of entries).
  static type capture(const T& m, capture_state state) {
    const range_count n = detail::count_within(m, state.elements_left());
    if (!n.fits) return captured_leaf<dict>(too_large_leaf<T>(n.length));
    state.take_elements(static_cast<std::size_t>(*n.length));
    dict out;
    out.entries.reserve(static_cast<std::size_t>(*n.length));
    for (const auto& [key, v] : m) {
      if (key.size() > state.bytes_left()) return captured_leaf<dict>(too_large_leaf<T>(n.length));
      state.take_bytes(key.size());
      out.entries.emplace_back(std::string(key.data(), key.size()), mapped::capture(v, state.below()));
    }
    return captured_value(std::move(out));
  }
};

// What a range's elements are captured as: what its iterators give, but for std::vector<bool>'s proxy reference,
// which is converted to bool (the one proxy converted: the conversion of any other class would run the program's
// code; such an element is captured by its own type's rule).
template <class T, class Reference = std::ranges::range_reference_t<const T>>
struct range_element {
  using type = Reference;
  static constexpr bool proxy = false;
};
template <class T>
struct range_element<T, std::vector<bool>::reference> {
  using type = bool;
  static constexpr bool proxy = true;
};

template <class T, class Stack>
struct rule<T, Stack, capture_kind::range> {
  using element_type = range_element<T>;
  using element = rule_in<typename element_type::type, Stack>;
  static constexpr bool ok = element::ok;
  using items = std::vector<typename element::type>;
  using type = or_opaque<items>;
  static type capture(const T& r, capture_state state) {
    const range_count n = detail::count_within(r, state.elements_left());
    if (!n.fits) return captured_leaf<items>(too_large_leaf<T>(n.length));
    state.take_elements(static_cast<std::size_t>(*n.length));
    items out;
    out.reserve(static_cast<std::size_t>(*n.length));
    for (auto&& e : detail::elements_of(r)) {
      if constexpr (element_type::proxy) {
        out.push_back(element::capture(static_cast<bool>(e), state.below()));
      } else {
        out.push_back(element::capture(e, state.below()));
      }
    }
    return captured_value(std::move(out));
  }
};

template <class T, class Stack, class = std::make_index_sequence<std::tuple_size_v<T>>>
struct tuple_rule;
template <class T, class Stack, std::size_t... I>
struct tuple_rule<T, Stack, std::index_sequence<I...>> {
  static constexpr bool ok = (rule_in<std::tuple_element_t<I, T>, Stack>::ok && ...);
  using type = std::tuple<typename rule_in<std::tuple_element_t<I, T>, Stack>::type...>;
  static type capture(const T& t, [[maybe_unused]] capture_state state) {
    return type{rule_in<std::tuple_element_t<I, T>, Stack>::capture(std::get<I>(t), state.below())...};
  }
};

template <class T, class Stack>
struct rule<T, Stack, capture_kind::tuple_like> : tuple_rule<T, Stack> {};

}  // namespace detail
HOOKSCOPE_DETAIL_END_NAMESPACE
