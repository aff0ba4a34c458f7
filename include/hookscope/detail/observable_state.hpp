// hookscope/detail/observable_state.hpp — what an observable keeps at run time: its two observers and its registry
// entry, and how an annotation registers it from its own static initialiser.
#pragma once

#include "hookscope/detail/config.hpp"
#include "hookscope/detail/function_info.hpp"
#include "hookscope/detail/registry.hpp"

#include <span>
#include <string_view>

HOOKSCOPE_DETAIL_BEGIN_NAMESPACE
namespace detail {

#if HOOKSCOPE_ENABLED

/// The two observers around one observable, before and after each call. Typed callbacks (`observers.pre`) and
/// type-erased ones (`function_info::pre()`) are registrations on the same observer, which fires
/// `const erased_call&` (a typed callback is wrapped to see its call_context): one event, two ways to subscribe,
/// callbacks in registration order whichever way they came, and one emission loop for every observable.
struct hook_observers {
  erased_observer pre;
  erased_observer post;

  constexpr explicit hook_observers(std::string_view name) noexcept : pre(name), post(name) {}

  /// An annotation's are never destroyed; an observable_function's end with it.
  void retire() noexcept {
    pre.retire();
    post.retire();
  }

  // Inlined at every call site: two compares of static counters take fewer bytes there than a call's setup
  // (tools/annotation_cost.py: 732 B per annotation against 738 B through a call), and an observed call saves the
  // call (pre + post on an observable: 7.3 ns over the plain call against 7.9 ns, bench/observable.bench.cpp).
  [[gnu::always_inline]] bool listening() const noexcept {
    return hookscope_detail_worth_walking(pre) || hookscope_detail_worth_walking(post);
  }
};

/// What an annotation keeps at run time: its two observers and its registry entry (which points to them).
struct observable_state {
  hook_observers hooks;
  function_info info;

  constexpr observable_state(std::string_view name, std::span<const std::string_view> params,
                             std::string_view signature, std::string_view file, unsigned line) noexcept
      : hooks(name), info(name, params, signature, file, line, &hooks.pre, &hooks.post) {}
};

/// Registers an annotation from its static initialiser through one shared function: the initialiser of a TU of
/// many annotations is then a row of small calls rather than of inlined registrations (smaller, and much cheaper
/// for the compiler to optimise). For annotations in a class, or an observable type written by hand: those at
/// namespace scope are listed instead (below).
struct annotation_link {
  registry_link link;
  [[gnu::noinline]] explicit annotation_link(function_info& info) noexcept : link(info) {}
};

#else
/// What function_info points to in disabled builds, whose observers hold nothing.
inline constinit erased_observer no_observer{""};
#endif

}  // namespace detail
HOOKSCOPE_DETAIL_END_NAMESPACE
