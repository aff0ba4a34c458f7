// A scope in which pthread_cancel does not act on the calling thread. The library's own system calls (write, open,
// close, read, nanosleep) are cancellation points: a program's thread cancelled while hookscope writes for it would
// be unwound from inside the library, through functions no unwinding may cross (noexcept, the end of a hook), and
// the program would abort. Deferred, the request stays pending and acts at the program's own next cancellation
// point, as it would without hookscope. Cheap (no system call): used around the system calls only, never per call.
#pragma once

#include "hookscope/config.hpp"

#include <pthread.h>

HOOKSCOPE_DETAIL_BEGIN_NAMESPACE
namespace detail {

class cancellation_deferred {
 public:
  cancellation_deferred() noexcept { (void)::pthread_setcancelstate(PTHREAD_CANCEL_DISABLE, &previous_); }
  ~cancellation_deferred() { (void)::pthread_setcancelstate(previous_, nullptr); }
  cancellation_deferred(const cancellation_deferred&) = delete;
  cancellation_deferred& operator=(const cancellation_deferred&) = delete;

 private:
  int previous_ = PTHREAD_CANCEL_ENABLE;
};

}  // namespace detail
HOOKSCOPE_DETAIL_END_NAMESPACE
