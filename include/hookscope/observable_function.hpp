// hookscope/observable_function.hpp — observation for code you cannot annotate: make_observable wraps a function
// pointer or any callable into an observable_function, with the same observers as an annotated function and a plain
// function pointer (from a fixed pool per signature) for function-pointer tables.
//
// ```cpp
// auto lower = hookscope::make_observable("lower", &third_party::lower);
// auto sub = lower.observers.pre.add([](const auto& ctx) { use(ctx.template arg<0>()); });
// table.lower = lower.function_pointer();
// ```
#pragma once

#include "hookscope/call_context.hpp"
#include "hookscope/config.hpp"
#include "hookscope/detail/function_traits.hpp"
#include "hookscope/detail/observable_state.hpp"
#include "hookscope/detail/observed_call.hpp"
#include "hookscope/detail/type_name.hpp"
#include "hookscope/exceptions.hpp"
#include "hookscope/function_info.hpp"
#include "hookscope/observer_view.hpp"
#include "hookscope/registry.hpp"

// With hooks on, an observed call's arguments are captured through the capture rules (detail/value_ops.hpp): the
// capture API comes with every observable.
#if HOOKSCOPE_ENABLED
#include "hookscope/capture.hpp"
#endif

#include <array>
#include <cstddef>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>

HOOKSCOPE_DETAIL_BEGIN_NAMESPACE

namespace detail {

inline constexpr std::string_view positional_names[] = {"arg0",  "arg1",  "arg2",  "arg3", "arg4",  "arg5",
                                                        "arg6",  "arg7",  "arg8",  "arg9", "arg10", "arg11",
                                                        "arg12", "arg13", "arg14", "arg15"};

template <class Signature>
struct trampolines;

}  // namespace detail

template <class Signature>
class observable_function;

/// A run-time observable wrapper around any callable: the same `observers` as an annotated function, for code
/// you cannot annotate; `function_pointer()` swaps it into a table of plain function pointers.
///
/// Not copyable or movable (its function pointer refers to it); `make_observable` returns it by value.
template <class R, class... A>
class observable_function<R(A...)> {
  static_assert(sizeof...(A) <= std::size(detail::positional_names),
                "hookscope: make_observable: at most 16 parameters");

 public:
  using context_type = detail::named_call_context<R(A...), "">;
  using observers_type = observers_of<context_type>;
  using pointer = R (*)(A...);

  template <class F>
  observable_function(std::string_view name, F&& target)
      : name_(name),
        target_(new std::decay_t<F>(static_cast<F&&>(target))),
        destroy_([](void* t) noexcept { delete static_cast<std::decay_t<F>*>(t); }),
        call_(
            [](void* t, A&&... args) -> R { return (*static_cast<std::decay_t<F>*>(t))(static_cast<A&&>(args)...); }) {}
  observable_function(const observable_function&) = delete;
  observable_function& operator=(const observable_function&) = delete;
  ~observable_function() {
    if (pointer_ != nullptr) detail::trampolines<R(A...)>::release(this);
    destroy_(target_);
#if HOOKSCOPE_ENABLED
    hooks_.retire();  // its observers have no destructor
#endif
  }

  /// Calls the wrapped callable, with the callbacks around it when anyone listens.
  R operator()(A... args) const {
#if HOOKSCOPE_ENABLED
    if (hooks_.listening()) [[unlikely]]
      return observed(args...);
#endif
    return call_(target_, static_cast<A&&>(args)...);
  }

  /// A plain function pointer that calls this object, for function-pointer tables; valid while it lives.
  /// At most 16 such pointers per signature exist at once (std::length_error beyond).
  pointer function_pointer() {
    if (pointer_ == nullptr) pointer_ = detail::trampolines<R(A...)>::claim(this);
    return pointer_;
  }

  /// Its description: the name given, parameters named arg0, arg1, ...; `info().pre()` for erased callbacks.
  const function_info& info() const noexcept { return info_; }

 private:
  std::string name_;
  void* target_;
  void (*destroy_)(void*) noexcept;
  R (*call_)(void*, A&&...);
  pointer pointer_ = nullptr;
#if HOOKSCOPE_ENABLED
  detail::hook_observers hooks_{name_};
  function_info info_{name_,
                      std::span(detail::positional_names).first(sizeof...(A)),
                      detail::type_name<R(A...)>(),
                      {},
                      0,
                      &hooks_.pre,
                      &hooks_.post};
#else
  function_info info_{name_,
                      std::span(detail::positional_names).first(sizeof...(A)),
                      detail::type_name<R(A...)>(),
                      {},
                      0,
                      &detail::no_observer,
                      &detail::no_observer};
#endif

 public:
  /// The callbacks around every call: `pre` before it, `post` after it (also when it threw); subscribe-only.
#if HOOKSCOPE_ENABLED
  const observers_type observers{{detail::call_access::key(), hooks_.pre}, { detail::call_access::key(), hooks_.post }};
#else
  const observers_type observers{observer_view<context_type>(detail::call_access::key()),
                                 observer_view<context_type>(detail::call_access::key())};
#endif

 private:
#if HOOKSCOPE_ENABLED
  R observed(A&... args) const {
    const std::array<const void*, sizeof...(A)> addresses{detail::erased_address(args)...};
    context_type ctx(detail::call_access::key(), info_, detail::call_ops_for<R, A...>, addresses.data());
    return detail::run_observed<R>(hooks_, ctx, [&]() -> R { return call_(target_, static_cast<A&&>(args)...); });
  }
#endif
};

/// Wraps a function pointer or any callable into an observable_function named `name` (the reference's
/// `_make_observable`): `auto lower = hookscope::make_observable("lower", &third_party::lower);`
template <class F>
observable_function<typename detail::callable_signature_of<std::decay_t<F>>::type> make_observable(
    std::string_view name, F&& target) {
  return {name, static_cast<F&&>(target)};
}

namespace detail {

/// A fixed pool of plain functions per signature, each forwarding to the observable_function bound to it.
template <class R, class... A>
struct trampolines<R(A...)> {
  static constexpr std::size_t capacity = 16;
  // GCC's and Clang's atomic builtins on plain pointers rather than std::atomic: <atomic> would cost every
  // translation unit that includes this header ~0.04 s (GCC 12), also in disabled builds, for this pool alone.
  static inline const observable_function<R(A...)>* bound[capacity]{};

  template <std::size_t I>
  static R call(A... args) {
    return (*__atomic_load_n(&bound[I], __ATOMIC_ACQUIRE))(static_cast<A&&>(args)...);
  }

  static R (*claim(const observable_function<R(A...)>* f))(A...) {
    static constexpr auto entries = []<std::size_t... I>(std::index_sequence<I...>) {
      return std::array<R (*)(A...), capacity>{&call<I>...};
    }
    (std::make_index_sequence<capacity>{});
    for (std::size_t i = 0; i < capacity; ++i) {
      const observable_function<R(A...)>* expected = nullptr;
      if (__atomic_compare_exchange_n(&bound[i], &expected, f, false, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE)) {
        return entries[i];
      }
    }
    throw limit_error(
        "observable_function::function_pointer: more than 16 function pointers of one signature are live; destroy "
        "unused observable_function objects");
  }

  static void release(const observable_function<R(A...)>* f) noexcept {
    for (auto& slot : bound) {
      const observable_function<R(A...)>* expected = f;
      __atomic_compare_exchange_n(&slot, &expected, nullptr, false, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE);
    }
  }
};

}  // namespace detail

HOOKSCOPE_DETAIL_END_NAMESPACE
