// hookscope/detail/probed_call.hpp — how a call fires its annotation's probes while a tool is attached to them: the
// entry probe before the call, the return probe after it, also when it throws; and whether anyone listens to an
// annotation at all. The probes themselves are the annotation's own (detail/probe_sites.hpp); the call that fires
// them is the observed call shared by every annotation of one signature (detail/observed_call.hpp).
#pragma once

#include "hookscope/detail/config.hpp"
#include "hookscope/detail/probe_sites.hpp"

#if HOOKSCOPE_ENABLED

#include "hookscope/detail/observable_state.hpp"

#include <cstddef>
#include <exception>
#include <string_view>
#include <type_traits>

HOOKSCOPE_DETAIL_BEGIN_NAMESPACE
namespace detail {

/// Whether anyone listens to the annotation at `Site`: a callback in the process, or a tool at one of its probes
/// (three relaxed loads then: the two observers' counters, and the probes' two semaphores as one word).
template <class Site>
[[gnu::always_inline]] inline bool hooks_or_probes() noexcept {
#if HOOKSCOPE_DETAIL_PROBES
  if constexpr (Site::probes::exist) {
    // Bitwise, not ||: the semaphores' read is an asm statement, and a chain of three branches around it was laid out
    // with the idle path taking two jumps (+1.6 ns); combined, it is one test and one branch not taken.
    const unsigned sems = Site::probes::semaphores();
    const bool pre = hookscope_detail_worth_walking(Site::state.hooks.pre);
    const bool post = hookscope_detail_worth_walking(Site::state.hooks.post);
    return __builtin_expect(static_cast<int>(pre) | static_cast<int>(post) | static_cast<int>(sems != 0), 0) != 0;
  }
#endif
  return Site::state.hooks.listening();
}

}  // namespace detail
HOOKSCOPE_DETAIL_END_NAMESPACE

#endif

#if HOOKSCOPE_DETAIL_PROBES

HOOKSCOPE_DETAIL_BEGIN_NAMESPACE
namespace detail {

/// The probes of one annotation as the observed call shared by its signature reaches them, its site's functions
/// (detail/probe_sites.hpp): `enter` fires the entry probe with the operands of the arguments at `addresses` (and of
/// the object, for a member function), `leave` the return probe with the "threw" flag and the operand of the result
/// at `result` (0 for `void`, or with no result). One type for every signature: what fires them is compiled once, in
/// the library. Null for an observable type written by hand, which has none.
struct probe_functions {
  void (*enter)(const char* name, void* object, const void* const* addresses) noexcept;
  void (*leave)(const char* name, int threw, const void* result) noexcept;
};

/// The probe functions of the annotation at `Site`, whose result is of type `R` and whose arguments' addresses point
/// to objects of types `A...`: hidden, as they are, so that a shared library's calls reach its own probes, not
/// another module's.
template <class Site, class R, bool Method, class... A>
[[gnu::visibility("hidden")]] inline constexpr probe_functions probe_functions_of{
    &Site::probes::template enter<Method, A...>, &Site::probes::template leave<R>};

/// The halves of an annotation's semaphores word (probes::semaphores()): a tool on the entry probe, on the return one.
inline constexpr unsigned entry_raised = 0xffffu;
inline constexpr unsigned return_raised = 0xffff0000u;

/// The registry name `name` as a probe passes it (a NUL-terminated `const char*`), its bytes read first so that their
/// pages are resident when the probe fires: a tool reads them from its handler, which cannot fault a page in (in a
/// shared library nothing else ever reads a name). Compiled once, in the library (src/observed_call.cpp).
const char* resident_name(std::string_view name) noexcept;
/// In a handler of what the call threw: fires the return probe `leave` with "threw" 1, unless it is a forced unwind
/// (pthread_exit, pthread_cancel: no current exception), which fires no return probe, as it fires no post callback.
void fire_threw_probe(const probe_functions& probes, const char* name) noexcept;

/// Runs `invoke()` between the probes `probes` of the annotation named `name`, each fired only while `raised` says a
/// tool is attached to it: the entry probe with the arguments at `addresses` (and `object`), the return probe after
/// the call returned or threw (then the exception propagates).
template <class R, class Invoke>
[[gnu::always_inline]] inline R run_probed(unsigned raised, const probe_functions& probes, std::string_view name,
                                           void* object, const void* const* addresses, Invoke&& invoke) {
  const char* const shown = resident_name(name);
  if (raised & entry_raised) probes.enter(shown, object, addresses);
  const auto run = [&]() __attribute__((always_inline))->R {
    try {
      return invoke();
    } catch (...) {
      if (raised & return_raised) fire_threw_probe(probes, shown);
      throw;
    }
  };
  if constexpr (std::is_void_v<R>) {
    run();
    if (raised & return_raised) probes.leave(shown, 0, nullptr);
  } else {
    R r = run();  // the result, elided into `r` (or bound to it, for a reference)
    if (raised & return_raised) {
      probes.leave(shown, 0, const_cast<const void*>(static_cast<const volatile void*>(__builtin_addressof(r))));
    }
    if constexpr (std::is_reference_v<R>) {
      return static_cast<R>(r);
    } else {
      return r;
    }
  }
}

}  // namespace detail
HOOKSCOPE_DETAIL_END_NAMESPACE

#endif
