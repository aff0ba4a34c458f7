// hookscope/detail/recording_target.hpp — what a recorder takes of the observable it records: its registry entry,
// and every argument of a call captured and named by the annotation.
#pragma once

#include "hookscope/detail/config.hpp"
#include "hookscope/detail/erased_call.hpp"
#include "hookscope/detail/function_info.hpp"
#include "hookscope/detail/value.hpp"

#if HOOKSCOPE_ENABLED
#include "hookscope/detail/capture_rules.hpp"  // capture_options
#endif

#include <type_traits>

HOOKSCOPE_DETAIL_BEGIN_NAMESPACE
namespace detail {

/// Every argument of a call, captured and named by the annotation (what recorders store).
/// (Parameters whose types are not structural are captured as opaque leaves: every function can be recorded.)
#if HOOKSCOPE_ENABLED
template <class Context>
value_fields capture_args(const Context& ctx, capture_options options) {
  return call_access::capture_args(ctx, &options);
}
#else
template <class Context, class Options>
value_fields capture_args(const Context&, const Options&) {
  return {};  // no call is ever observed in a disabled build
}
#endif

/// The registry entry of an observable given to a recorder: a live observable_function, or an annotation's type.
template <class Observable>
const function_info& function_info_of(const Observable& target) {
  if constexpr (requires { target.info(); }) {
    return target.info();
  } else {
    return std::remove_cvref_t<Observable>::info;
  }
}

}  // namespace detail
HOOKSCOPE_DETAIL_END_NAMESPACE
