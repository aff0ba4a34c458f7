// hookscope/detail/capture_pointer_rules.hpp — the rules of pointers: raw pointers recorded by their address, their
// pointee (or C string) read without faulting where the user opted in, owning smart pointers captured as the object
// they own.
//
// A raw pointer holds any address: a GPU's, a freed page's, the start of a buffer whose length is another parameter.
// Nothing in its type says that it points to a live object, or to a NUL-terminated string, so it is never followed
// unless the user says so: for a type (hookscope::capture_pointee<T>), a parameter (`*name` in the annotation) or a
// direct capture (capture_options::read_pointee). Even then the bytes are read by the kernel (detail/safe_read.hpp),
// and an address that cannot be read is recorded as "unreadable". An owning smart pointer (std::unique_ptr,
// std::shared_ptr) owns a live object of the program by its type's contract: it is captured as that object.
#pragma once

#include "hookscope/detail/config.hpp"
#include "hookscope/detail/capture_classify.hpp"
#include "hookscope/detail/capture_rules.hpp"
#include "hookscope/detail/safe_read.hpp"
#include "hookscope/detail/type_name.hpp"

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <type_traits>
#include <utility>

HOOKSCOPE_DETAIL_BEGIN_NAMESPACE
namespace detail {

// Calls with an argument of the program's types are qualified (detail::): argument-dependent lookup would otherwise
// also find functions of the same name in the program's namespaces.

/// The opaque leaf of the raw pointer `p` (of type T): its type name and address.
template <class T>
captured_opaque address_leaf(T p) noexcept {
  return {type_name<T>(), reinterpret_cast<std::uintptr_t>(p), false, std::nullopt, false};
}

/// void*, pointers to incomplete types: the address, or none for null; nothing else can be known.
template <class T, class Stack>
struct rule<T, Stack, capture_kind::address> {
  static constexpr bool ok = false;
  using type = std::optional<captured_opaque>;
  static type capture(T p, capture_state) noexcept {
    if (p == nullptr) return std::nullopt;
    return detail::address_leaf(p);
  }
};

/// char*: the address, or, where the user opted in (capture_pointee<char>, `*name`, read_pointee), the C string up
/// to its NUL, read without faulting within what is left of the capture's byte bound.
template <class T, class Stack>
struct rule<T, Stack, capture_kind::c_string> {
  static constexpr bool opted_in = capture_pointee<char>;
  static constexpr bool ok = opted_in;
  using type = std::optional<or_opaque<std::string>>;
  static type capture(T p, capture_state state) {
    if (p == nullptr) return std::nullopt;
    captured_opaque leaf = detail::address_leaf(p);
    if (!opted_in && !state.reads_pointee()) return captured_leaf<std::string>(leaf);
    c_string_read read = read_c_string(static_cast<const char*>(detail::bytes_of(p)), state.bytes_left());
    switch (read.result) {
      case c_string_read::status::read: state.take_bytes(read.text.size()); return captured_value(std::move(read.text));
      case c_string_read::status::unreadable: leaf.unreadable = true; break;
      case c_string_read::status::too_large: leaf.too_large = true; break;
    }
    return captured_leaf<std::string>(leaf);
  }
};

/// U* (U a complete object type): the address, or, where the user opted in (capture_pointee<U>, `*name`,
/// read_pointee), the pointee. A trivially copyable U is copied without faulting and captured from the copy (what
/// another thread does to it meanwhile does not matter). Another class is checked readable (its sizeof(U) bytes)
/// and captured in place: its own parts (a std::string's characters, a vector's elements) are read as they are, on
/// the user's word that the pointer points to a live U. A volatile U of such a class has its address only.
template <class T, class Stack>
struct rule<T, Stack, capture_kind::raw_pointer> {
  using object = std::remove_cv_t<std::remove_pointer_t<T>>;
  using pointee = rule_in<object, Stack>;
  static constexpr bool opted_in = capture_pointee<object>;
  static constexpr bool ok = opted_in && pointee::ok;
  using type = std::optional<or_opaque<typename pointee::type>>;
  using read_type = or_opaque<typename pointee::type>;
  static type capture(T p, capture_state state) {
    if (p == nullptr) return std::nullopt;
    if (!opted_in && !state.reads_pointee()) return captured_leaf<typename pointee::type>(detail::address_leaf(p));
    return read(p, state.part());
  }
  static read_type read(T p, capture_state state) {
    captured_opaque unreadable = detail::address_leaf(p);
    unreadable.unreadable = true;
    if constexpr (std::is_trivially_copyable_v<object>) {
      safe_copy<object> copy;
      if (!copy.read(detail::bytes_of(p))) return captured_leaf<typename pointee::type>(unreadable);
      return captured_value(pointee::capture(copy.get(), state));
    } else if constexpr (std::is_volatile_v<std::remove_pointer_t<T>>) {
      return captured_leaf<typename pointee::type>(detail::address_leaf(p));
    } else {
      if (!memory_readable(detail::bytes_of(p), sizeof(object)))
        return captured_leaf<typename pointee::type>(unreadable);
      return captured_value(pointee::capture(*p, state));
    }
  }
};

/// std::unique_ptr, std::shared_ptr (and what declares the same, capture_classify.hpp): the object they own, or none.
template <class T, class Stack>
struct rule<T, Stack, capture_kind::pointer> {
  using pointee = rule_in<decltype(*std::declval<const T&>()), Stack>;
  static constexpr bool ok = pointee::ok;
  using type = std::optional<typename pointee::type>;
  static type capture(const T& p, capture_state state) {
    if (p.get() == nullptr) return std::nullopt;
    return pointee::capture(*p, state.part());
  }
};

}  // namespace detail
HOOKSCOPE_DETAIL_END_NAMESPACE
