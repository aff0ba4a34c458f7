// hookscope/observer.hpp — named event sources with scoped, context-isolated callbacks.
//
// ```cpp
// inline hookscope::observer<const Graph&, const Result&> on_subgraph_converted{"on_subgraph_converted"};
//
// on_subgraph_converted.observe(gm, result);          // runs every callback visible here
// auto sub = on_subgraph_converted.add([&](const Graph& g, const Result& r) { ... });
// ```                                                  // `sub` unregisters it when it ends
//
// Firing an observer nobody listens to costs one relaxed load; with listeners, emission is lock-free.
#pragma once

#include "hookscope/config.hpp"
#include "hookscope/context.hpp"
#include "hookscope/detail/observer.hpp"
#include "hookscope/detail/callbacks.hpp"
#include "hookscope/callback_errors.hpp"
#include "hookscope/subscription.hpp"

#include <concepts>
#include <string_view>
#include <type_traits>
#include <utility>

HOOKSCOPE_DETAIL_BEGIN_NAMESPACE

/// A named event source; callbacks receive `const Args&...`.
///
/// Constant-initialised, so it can be used during static initialisation and destruction. Callbacks run
/// global ones first, then the current context's, each in registration order, over a snapshot taken when
/// `observe` starts; no lock is held while they run.
template <class... Args>
class observer : public detail::static_observer<Args...> {
 public:
  using detail::static_observer<Args...>::static_observer;
  observer(const observer&) = delete;  // its callbacks are registered on it, at its address
  observer& operator=(const observer&) = delete;
#if HOOKSCOPE_ENABLED
  ~observer() { this->retire(); }
#endif

 private:
  using detail::static_observer<Args...>::retire;
};

HOOKSCOPE_DETAIL_END_NAMESPACE
