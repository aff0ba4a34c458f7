// The steps every observed call shares: its pre callbacks, its post callbacks, and those of a call that threw.
//
// Compiled once here rather than inline in the header: an annotation's translation unit compiles none of them, and
// each is a short function that goes straight to the emission (nothing of the call stays live across it).
#include "hookscope/call_context.hpp"
#include "hookscope/detail/observed_call.hpp"

#include <exception>

#if HOOKSCOPE_ENABLED  // a disabled build observes no call

HOOKSCOPE_DETAIL_BEGIN_NAMESPACE
namespace detail {

void pre_observed(erased_call& call) { call.function().pre().observe(call); }

void post_observed(erased_call& call, const void* result) {
  call_access::finish(call, result);
  call.function().post().observe(call);
}

void fail_observed(erased_call& call) {
  if (!std::current_exception()) throw;  // a forced unwind
  struct forget {  // the context's destructor is trivial: it must not be left holding the exception
    erased_call& call;
    ~forget() { call_access::exception(call) = nullptr; }
  } reset{call};
  call_access::fail(call, std::current_exception());
  call.function().post().observe(call);
  throw;
}

}  // namespace detail
HOOKSCOPE_DETAIL_END_NAMESPACE

#endif  // HOOKSCOPE_ENABLED
