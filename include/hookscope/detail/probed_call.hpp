// hookscope/detail/probed_call.hpp — how an annotation runs a call while a tool is attached to its probes: the entry
// probe, the call (between the process's own callbacks if it has any), and the return probe, also when it throws.
// The probes themselves are the annotation's own (detail/probe_sites.hpp); what runs around them is shared by every
// annotation of one signature, as the observed call is (each annotation's pays for its probes only).
#pragma once

#include "hookscope/config.hpp"
#include "hookscope/detail/probe_sites.hpp"

#if HOOKSCOPE_ENABLED

#include "hookscope/call_context.hpp"
#include "hookscope/detail/fixed_string.hpp"
#include "hookscope/detail/function_traits.hpp"
#include "hookscope/detail/observed_call.hpp"
#include "hookscope/function_info.hpp"

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

/// The two probes of one annotation, as the shared call reaches them: its entry probe taking `Operands` (the tuple
/// entry_operands makes) and its return probe taking the result's operand (an `int` 0 for `void`).
template <class R, class Operands>
struct probe_functions {
  void (*enter)(const char* name, const Operands& operands) noexcept;
  void (*leave)(const char* name, int threw, result_operand_t<R> result) noexcept;
};

/// The probe functions of the annotation at `Site` for a call whose entry operands are `Operands`: hidden, as they
/// are, so that a shared library's calls reach its own probes, not another module's.
template <class Site, class R, class Operands>
[[gnu::visibility("hidden")]] inline constexpr probe_functions<R, Operands> probe_functions_of{
    &Site::probes::template enter<Operands>, &Site::probes::template leave<result_operand_t<R>>};

/// The halves of an annotation's semaphores word (probes::semaphores()): a tool on the entry probe, on the return one.
inline constexpr unsigned entry_raised = 0xffffu;
inline constexpr unsigned return_raised = 0xffff0000u;

/// The registry name `name` as a probe passes it (a NUL-terminated `const char*`), its bytes read here first so that
/// their pages are resident when the probe fires: a tool reads them from its handler, which cannot fault a page in
/// (in a shared library nothing else ever reads a name: bpftrace's `str(arg0)` was empty).
inline const char* resident_name(std::string_view name) noexcept {
  for (std::size_t i = 0; i < name.size(); i += 4096) (void)*static_cast<const volatile char*>(name.data() + i);
  (void)*static_cast<const volatile char*>(name.data() + name.size());  // the terminating NUL
  return name.data();
}

/// Fires the entry probe `enter` if `raised` says a tool is attached to it, with the operands of `args`.
template <bool Method, class Enter, class... A>
[[gnu::always_inline]] inline void fire_entry(unsigned raised, Enter enter, const char* name, void* object,
                                              const A&... args) {
  if (raised & entry_raised) enter(name, entry_operands<Method>(object, args...));
}

/// Runs `invoke()` and fires the return probe `leave` after it if `raised` says a tool is attached to it: with 0
/// and the result's operand when it returned, with 1 and a zero operand when it threw (then the exception
/// propagates). A forced unwind (pthread_exit, pthread_cancel: no current exception) fires nothing, as it fires no
/// post callback.
template <class R, class Leave, class Invoke>
[[gnu::always_inline]] inline R run_probed(unsigned raised, Leave leave, const char* name, Invoke&& invoke) {
  const bool fire = (raised & return_raised) != 0;
  if constexpr (std::is_void_v<R>) {
    try {
      invoke();
    } catch (...) {
      if (fire && std::current_exception()) leave(name, 1, 0);
      throw;
    }
    if (fire) leave(name, 0, 0);
  } else {
    R r = [&]() -> R {
      try {
        return invoke();
      } catch (...) {
        if (fire && std::current_exception()) leave(name, 1, result_operand_t<R>{});
        throw;
      }
    }();
    if (fire) leave(name, 0, probe_operand(r));
    if constexpr (std::is_reference_v<R>) {
      return static_cast<R>(r);
    } else {
      return r;
    }
  }
}

/// The call of an annotation whose callbacks receive `Context`, on an object of type `Self` (void for free
/// functions), while a tool may be attached to its probes `probes`: one per signature, as detail::observed.
template <class Context, class Self, bool NE>
struct probed;

template <class R, class... A, fixed_string Params, class Self, bool NE>
struct probed<named_call_context<R(A...), Params>, Self, NE> {
  using context = named_call_context<R(A...), Params>;
  using function = typename function_pointer_type<Self, R, NE, A...>::type;
  using operands = entry_operands_t<!std::is_void_v<Self>, observed_arg_t<A>...>;
  using functions = probe_functions<R, operands>;

  [[gnu::noinline]] static R call(const observable_state& state, functions probes, unsigned raised, function fn,
                                  [[maybe_unused]] void* object, observed_arg_t<A>... args) noexcept(NE) {
    const char* const name = resident_name(state.info.name);
    fire_entry<!std::is_void_v<Self>>(raised, probes.enter, name, object, args...);
    // Through the observed call whether the process's callbacks listen or not (an empty emission is a load and a
    // branch): one path to compile per signature, not two.
    return run_probed<R>(raised, probes.leave, name,
                         [&]() -> R { return observed<context, Self, NE>::call(state, fn, object, args...); });
  }
};

}  // namespace detail
HOOKSCOPE_DETAIL_END_NAMESPACE

#endif

#if HOOKSCOPE_ENABLED

HOOKSCOPE_DETAIL_BEGIN_NAMESPACE
namespace detail {

/// The call of an annotation given its first arguments (detail::given_call) with someone listening: between the
/// probes while a tool is attached to them (the operands of the arguments left to their defaults are then 0), else
/// between the process's callbacks. `Method`: `object` is the object of a member function, which the entry probe
/// carries first.
template <class Site, class Context, bool NE, bool Method, class Invoke, class... G>
[[gnu::always_inline]] inline decltype(auto) slow_given_call([[maybe_unused]] void* object, Invoke invoke,
                                                             G&... args) noexcept(NE) {
#if HOOKSCOPE_DETAIL_PROBES
  if constexpr (Site::probes::exist) {
    if (const unsigned raised = Site::probes::semaphores()) {
      using result = typename Context::result_type;
      using operands = entry_operands_t<Method, G&...>;
      const char* const name = resident_name(Site::state.info.name);
      fire_entry<Method>(raised, &Site::probes::template enter<operands>, name, object, args...);
      return run_probed<result>(raised, &Site::probes::template leave<result_operand_t<result>>, name, [&]() -> result {
        if (Site::state.hooks.listening()) return observed_given<Context, NE>::call(Site::state, invoke, args...);
        return invoke(args...);
      });
    }
  }
#endif
  return observed_given<Context, NE>::call(Site::state, invoke, args...);
}

}  // namespace detail
HOOKSCOPE_DETAIL_END_NAMESPACE

#endif
