// hookscope/detail/call_context.hpp — call_context and named_call_context, below the annotation machinery that makes
// them; hookscope/call_context.hpp is their documented front door.
#pragma once

#include "hookscope/detail/config.hpp"
#include "hookscope/detail/erased_call.hpp"
#include "hookscope/detail/fixed_string.hpp"
#include "hookscope/detail/function_info.hpp"
#include "hookscope/detail/value.hpp"

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

/// How a callback asked for an argument the caller omitted (for the message).
enum class omitted_access { by_index, by_name, all };
/// Throws value_error: argument `i` of `call` was omitted (left to its default), so `access` has nothing to return.
/// Out of line (src/observed_call.cpp): a throw site per argument type is code nobody runs.
[[noreturn]] void throw_omitted_arg(const erased_call& call, std::size_t i, omitted_access access);

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

  // function(), exception(), is_post() and args_given() are erased_call's.
  using erased_call::has_arg;

  /// Every argument, as a tuple of const references; throws value_error when the caller omitted any (see has_arg).
  args_type args() const {
    if (this->args_given() < sizeof...(Args)) [[unlikely]]
      detail::throw_omitted_arg(*this, this->args_given(), detail::omitted_access::all);
    return [this]<std::size_t... I>(std::index_sequence<I...>) { return args_type(*this->template find_arg<I>()...); }
    (std::index_sequence_for<Args...>{});
  }
  /// Whether the caller passed argument `I`: false when it was left to its default (which only the function sees).
  template <std::size_t I>
  bool has_arg() const noexcept {
    static_assert(I < sizeof...(Args),
                  "hookscope: call_context::has_arg<I>(): I is not less than the function's arity");
    return I < this->args_given();
  }
  /// Argument `I`, or null when the caller omitted it (left it to its default).
  template <std::size_t I>
  const auto* find_arg() const noexcept {
    static_assert(I < sizeof...(Args),
                  "hookscope: call_context::find_arg<I>(): I is not less than the function's arity");
    using type = std::remove_reference_t<std::tuple_element_t<(I < sizeof...(Args) ? I : 0), std::tuple<Args...>>>;
    return static_cast<const type*>(this->arg_address(I));
  }
  /// Argument `I` as a const reference; throws value_error when the caller omitted it (test has_arg<I>() first).
  template <std::size_t I>
  const auto& arg() const {
    static_assert(I < sizeof...(Args), "hookscope: call_context::arg<I>(): I is not less than the function's arity");
    const auto* a = find_arg<(I < sizeof...(Args) ? I : 0)>();
    if (a == nullptr) [[unlikely]]
      detail::throw_omitted_arg(*this, I, detail::omitted_access::by_index);
    return *a;
  }
  /// The result (post callbacks of a call that returned), else null.
  const std::remove_reference_t<R>* return_value() const noexcept requires(!std::is_void_v<R>) {
    return static_cast<const std::remove_reference_t<R>*>(detail::call_access::result(*this));
  }

  /// Internal: made by the observable around each observed call (users cannot make the key). `addresses`: one
  /// per argument given, `given` of them (the context holds nothing else of its own: the arguments are read through
  /// them).
  call_context(detail::call_key key, const function_info& f, const detail::call_ops& ops, const void* const* addresses,
               std::size_t given = sizeof...(Args)) noexcept
      : erased_call(key, f, ops, addresses, given) {}

  /// Not for users: a call context exists only while its observable fires it.
  template <class First, class... Rest>
    requires(!std::is_same_v<std::remove_cvref_t<First>, detail::call_key> &&
             !std::is_base_of_v<erased_call, std::remove_cvref_t<First>>)
  explicit call_context(First&&, Rest&&...)
      : erased_call(detail::call_access::key(), not_reached<function_info>(), not_reached<detail::call_ops>(), {}, 0) {
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

  // The index forms, redeclared: a using-declaration would be hidden by the name forms below.
  using erased_call::has_arg;
  template <std::size_t I>
  bool has_arg() const noexcept {
    return call_context<R(Args...)>::template has_arg<I>();
  }
  template <std::size_t I>
  const auto* find_arg() const noexcept {
    return call_context<R(Args...)>::template find_arg<I>();
  }
  template <std::size_t I>
  const auto& arg() const {
    return call_context<R(Args...)>::template arg<I>();
  }

  /// Whether the caller passed the argument named `Name` in the annotation (false: it took its default).
  template <fixed_string Name>
  bool has_arg() const noexcept {
    return call_context<R(Args...)>::template has_arg<index<Name>()>();
  }
  /// The argument named `Name` in the annotation, or null when the caller omitted it.
  template <fixed_string Name>
  const auto* find_arg() const noexcept {
    return call_context<R(Args...)>::template find_arg<index<Name>()>();
  }
  /// The argument named `Name` in the annotation; a name not there does not compile; throws value_error when the
  /// caller omitted it (test has_arg<Name>() first).
  template <fixed_string Name>
  const auto& arg() const {
    const auto* a = find_arg<Name>();
    if (a == nullptr) [[unlikely]]
      throw_omitted_arg(*this, index<Name>(), omitted_access::by_name);
    return *a;
  }

 private:
  template <fixed_string Name>
  static constexpr std::size_t index() noexcept {
    constexpr std::size_t i = index_of(names, Name.view());
    static_assert(i < sizeof...(Args),
                  "hookscope: call_context::arg<Name>(): no parameter has that name in this observable; "
                  "use one of the names given to HOOKSCOPE_OBSERVABLE (listed in the template arguments below)");
    return i < sizeof...(Args) ? i : 0;  // only the message above
  }
};

}  // namespace detail

HOOKSCOPE_DETAIL_END_NAMESPACE
