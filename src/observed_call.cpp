// What every observed call that threw shares: its post callbacks with the exception, then the exception goes on.
//
// Compiled once here rather than inline in the header: an annotation's translation unit compiles none of it.
#include "hookscope/call_context.hpp"
#include "hookscope/detail/observed_call.hpp"

#include <exception>

#if HOOKSCOPE_ENABLED  // a disabled build observes no call

HOOKSCOPE_DETAIL_BEGIN_NAMESPACE
namespace detail {

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
