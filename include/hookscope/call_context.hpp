// hookscope/call_context.hpp — one call of an observable as its typed callbacks see it: the arguments by index (and,
// through the annotation, by name: named_call_context), the result and the exception. Only observables make them.
#pragma once

#include "hookscope/config.hpp"
#include "hookscope/detail/fixed_string.hpp"
#include "hookscope/erased_call.hpp"
#include "hookscope/function_info.hpp"
#include "hookscope/value.hpp"

#include <array>
#include <cstddef>
#include <string_view>
#include <tuple>
#include <type_traits>
#include <utility>

HOOKSCOPE_DETAIL_BEGIN_NAMESPACE

namespace detail {

template <class...>
inline constexpr bool dependent_false = false;

}  // namespace detail

//=== call_context ===//

template <class Signature>
class call_context;

/// One call of an observable, as its pre and post callbacks see it: arguments as const references, the result.
///
/// It is also the call's erased_call (format_arg, capture_args, ...). Only the observable makes them.
template <class R, class... Args>
class call_context<R(Args...)> : public erased_call {
 public:
  using args_type = std::tuple<const std::remove_reference_t<Args>&...>;
  using result_type = R;

  // function(), exception() and is_post() are erased_call's.

  /// Every argument, as a tuple of const references.
  args_type args() const noexcept {
    return [this]<std::size_t... I>(std::index_sequence<I...>) { return args_type(this->template arg<I>()...); }
    (std::index_sequence_for<Args...>{});
  }
  /// Argument `I` as a const reference.
  template <std::size_t I>
  const auto& arg() const noexcept {
    static_assert(I < sizeof...(Args), "hookscope: call_context::arg<I>(): I is not less than the function's arity");
    using type = std::remove_reference_t<std::tuple_element_t<(I < sizeof...(Args) ? I : 0), std::tuple<Args...>>>;
    return *static_cast<const type*>(detail::call_access::args(*this)[I]);
  }
  /// The result (post callbacks of a call that returned), else null.
  const std::remove_reference_t<R>* return_value() const noexcept requires(!std::is_void_v<R>) {
    return static_cast<const std::remove_reference_t<R>*>(detail::call_access::result(*this));
  }

  /// Internal: made by the observable around each observed call (users cannot make the key). `addresses`: one
  /// per argument (the context holds nothing else of its own: the arguments are read through them).
  call_context(detail::call_key key, const function_info& f, const detail::call_ops& ops,
               const void* const* addresses) noexcept
      : erased_call(key, f, ops, addresses) {}

  /// Not for users: a call context exists only while its observable fires it.
  template <class First, class... Rest>
    requires(!std::is_same_v<std::remove_cvref_t<First>, detail::call_key> &&
             !std::is_base_of_v<erased_call, std::remove_cvref_t<First>>)
  explicit call_context(First&&, Rest&&...)
      : erased_call(detail::call_access::key(), not_reached<function_info>(), not_reached<detail::call_ops>(), {}) {
    static_assert(detail::dependent_false<First>,
                  "hookscope: call_context: only an observable makes call contexts; receive them in callbacks "
                  "instead: f.observers.pre.add([](const auto& ctx) { ... })");
  }
  call_context(const call_context&) = delete;
  call_context& operator=(const call_context&) = delete;
  ~call_context() = default;

 private:
  template <class T>
  static const T& not_reached() noexcept {  // only in the constructor above, which never compiles
    return *static_cast<const T*>(nullptr);
  }
};

//=== named_call_context ===//

namespace detail {

/// The context an observable's callbacks receive: a call_context that also finds arguments by name.
template <class Signature, fixed_string Params>
class named_call_context;

template <class R, class... Args, fixed_string Params>
class named_call_context<R(Args...), Params> : public call_context<R(Args...)> {
 public:
  static constexpr std::array<std::string_view, sizeof...(Args)> names = split_names<sizeof...(Args)>(Params.view());

  using call_context<R(Args...)>::call_context;

  /// Argument `I` as a const reference (redeclared: a using-declaration would be hidden by the overload below).
  template <std::size_t I>
  const auto& arg() const noexcept {
    return call_context<R(Args...)>::template arg<I>();
  }

  /// The argument named `Name` in the annotation; a name not there does not compile.
  template <fixed_string Name>
  const auto& arg() const noexcept {
    constexpr std::size_t index = index_of(names, Name.view());
    static_assert(index < sizeof...(Args),
                  "hookscope: call_context::arg<Name>(): no parameter has that name in this observable; "
                  "use one of the names given to HOOKSCOPE_OBSERVABLE (listed in the template arguments below)");
    return call_context<R(Args...)>::template arg<(index < sizeof...(Args) ? index : 0)>();  // only the message above
  }
};

}  // namespace detail

HOOKSCOPE_DETAIL_END_NAMESPACE
