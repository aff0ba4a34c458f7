// The one run of an observed call that every observable shares: pre callbacks, the call, post callbacks.
//
// Compiled once here rather than inline in the header: an annotation's translation unit then compiles none of it,
// and the observed call of every signature is the same few instructions around one call to it.
#include "hookscope/call_context.hpp"
#include "hookscope/detail/observed_call.hpp"

#include <exception>

#if HOOKSCOPE_ENABLED  // a disabled build observes no call

HOOKSCOPE_DETAIL_BEGIN_NAMESPACE
namespace detail {

namespace {

/// The post callbacks of a call that threw `e`, which then propagates on.
[[noreturn]] void fail_observed_call(erased_call& call, std::exception_ptr e) {
  struct forget {  // the context's destructor is trivial: it must not be left holding the exception
    erased_call& call;
    ~forget() { call_access::exception(call) = nullptr; }
  } reset{call};
  call_access::fail(call, std::move(e));
  call.function().post().observe(call);
  throw;
}

}  // namespace

const void* run_observed_call(erased_call& call, const call_target& target) {
  call.function().pre().observe(call);
  const void* result = nullptr;
  try {
    result = target.thunk(target.fn, call_access::args(call), target.object, target.storage);
  } catch (...) {
    // No current exception is a forced unwind (pthread_exit, pthread_cancel): the thread ends, the call did not
    // return nor throw, so no post callback claims it did.
    if (!std::current_exception()) throw;
    fail_observed_call(call, std::current_exception());
  }
  call_access::finish(call, result);
  try {
    call.function().post().observe(call);
  } catch (...) {
    // A post callback's exception (rethrow_callback_exceptions) leaves a result nobody will receive: destroy it.
    if (target.destroy != nullptr) target.destroy(const_cast<void*>(result));
    throw;
  }
  return result;
}

}  // namespace detail
HOOKSCOPE_DETAIL_END_NAMESPACE

#endif  // HOOKSCOPE_ENABLED
